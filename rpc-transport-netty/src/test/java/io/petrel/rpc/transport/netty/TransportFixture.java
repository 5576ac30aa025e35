package io.petrel.rpc.transport.netty;

import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcClientBuilder;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.RpcServerBuilder;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;

/** Starts real servers and clients on 127.0.0.1 and closes them after each test (clients first). */
abstract class TransportFixture {
  final TestService service = new TestService();
  private final Deque<AutoCloseable> resources = new ArrayDeque<>();

  RpcServer startServer(UnaryOperator<RpcServerBuilder> options) throws Exception {
    return startServer(0, options);
  }

  RpcServer startServer(int port, UnaryOperator<RpcServerBuilder> options) throws Exception {
    RpcServer server = options.apply(RpcServer.builder().bindAddress("127.0.0.1", port)
        .addService(service.definition())).build().start();
    resources.addLast(() -> {
      service.gate.countDown();
      server.shutdownNow();
      if (!server.awaitTermination(20, java.util.concurrent.TimeUnit.SECONDS)) {
        throw new AssertionError("server did not terminate");
      }
    });
    return server;
  }

  RpcServer startServer() throws Exception {
    return startServer(b -> b);
  }

  RpcClient client(int port, UnaryOperator<RpcClientBuilder> options) {
    RpcClient client = options.apply(RpcClient.builder().address("127.0.0.1", port)).build();
    resources.addFirst(() -> {
      client.shutdownNow();
      if (!client.awaitTermination(20, java.util.concurrent.TimeUnit.SECONDS)) {
        throw new AssertionError("client did not terminate");
      }
    });
    return client;
  }

  RpcClient client(int port) {
    return client(port, b -> b);
  }

  @AfterEach
  void closeAll() throws Exception {
    service.gate.countDown();
    AutoCloseable r;
    while ((r = resources.pollFirst()) != null) {
      r.close();
    }
  }
}
