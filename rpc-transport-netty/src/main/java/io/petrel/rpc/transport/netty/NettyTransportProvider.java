package io.petrel.rpc.transport.netty;

import io.petrel.rpc.spi.ClientTransportContext;
import io.petrel.rpc.spi.ClientConfig;
import io.petrel.rpc.spi.ClientTransport;
import io.petrel.rpc.spi.ServerConfig;
import io.petrel.rpc.spi.ServerTransport;
import io.petrel.rpc.spi.TransportProvider;

/** The Netty transport, registered in META-INF/services. Users never call this class directly. */
public final class NettyTransportProvider implements TransportProvider {
  @Override
  public String name() {
    return "netty";
  }

  @Override
  public int priority() {
    return 10;
  }

  @Override
  public ServerTransport newServerTransport(ServerConfig config) {
    return new NettyServerTransport(config);
  }

  @Override
  public ClientTransport newClientTransport(ClientConfig config, ClientTransportContext context) {
    return new NettyRpcClient(config, context);
  }
}
