package io.petrel.rpc.transport.netty;

import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcClientBuilder;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.RpcServerBuilder;
import io.petrel.rpc.testing.AbstractTransportTest;

/** The transport conformance suite over Netty, on 127.0.0.1 and a free port. */
class NettyTransportConformanceTest extends AbstractTransportTest {
  @Override
  protected RpcServerBuilder serverBuilder() {
    return RpcServer.builder().bindAddress("127.0.0.1", 0);
  }

  @Override
  protected RpcClientBuilder clientBuilder(RpcServer server) {
    return RpcClient.builder().address("127.0.0.1", server.port());
  }

  /** The server announces its limit in its SETTINGS frame; the client holds further calls until places free up. */
  @Override
  protected boolean clientQueuesCallsBeyondTheServersLimit() {
    return true;
  }
}
