package io.petrel.rpc.testing;

import io.petrel.rpc.InProcessAddress;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcClientBuilder;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.RpcServerBuilder;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The conformance suite over the in-process transport. It differs from Netty in one documented way: its client
 * does not queue calls beyond the server's maxConcurrentCallsPerConnection (the hook keeps its default, false),
 * so the server refuses them with RESOURCE_EXHAUSTED.
 */
class InProcessTransportTest extends AbstractTransportTest {
  private static final AtomicInteger NAMES = new AtomicInteger();

  @Override
  protected RpcServerBuilder serverBuilder() {
    return RpcServer.builder().inProcess("conformance-" + NAMES.incrementAndGet());
  }

  @Override
  protected RpcClientBuilder clientBuilder(RpcServer server) {
    return RpcClient.builder().inProcess(((InProcessAddress) server.address()).name());
  }
}
