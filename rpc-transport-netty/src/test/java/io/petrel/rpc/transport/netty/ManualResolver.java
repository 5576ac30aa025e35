package io.petrel.rpc.transport.netty;

import io.petrel.rpc.NameResolver;
import java.util.concurrent.atomic.AtomicInteger;

/** A resolver a test drives: it hands the client's listener to the test, and counts the client's refreshes. */
final class ManualResolver implements NameResolver {
  volatile Listener listener;
  final AtomicInteger refreshes = new AtomicInteger();

  @Override
  public void refresh() {
    refreshes.incrementAndGet();
  }

  @Override
  public void start(Listener l) {
    listener = l;
  }

  @Override
  public void shutdown() {}
}
