package io.petrel.rpc.internal.inprocess;

import io.petrel.rpc.RpcServer;
import io.petrel.rpc.internal.CoreDispatcher;
import io.petrel.rpc.internal.ServerImpl;
import io.petrel.rpc.spi.ServerDispatcher;

/** Test access to the core runtime of a started in-process server, for tests of the transport SPI. */
public final class InProcessServers {
  private InProcessServers() {}

  /** The dispatcher a started in-process server hands its transport: what a transport makes calls for. */
  public static CoreDispatcher dispatcher(RpcServer server) {
    if (!(server instanceof ServerImpl impl && impl.transport() instanceof InProcessServerTransport t)) {
      throw new IllegalArgumentException("not an in-process server: " + server);
    }
    ServerDispatcher d = t.dispatcher();
    if (d == null) {
      throw new IllegalStateException("server " + server + " is not started; start it first");
    }
    return (CoreDispatcher) d;
  }
}
