package it.clock;

import static org.assertj.core.api.Assertions.assertThat;

import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import org.junit.jupiter.api.Test;

class ClockTest {
  @Test
  void aServiceDeclaredInTestSourcesIsGeneratedAndCallable() throws Exception {
    try (RpcServer server = RpcServer.builder().bindAddress("127.0.0.1", 0)
            .addService(ClockRpc.bind(zone -> "noon " + zone)).start();
        RpcClient client = RpcClient.builder().address("127.0.0.1", server.port()).build()) {
      assertThat(ClockRpc.stub(client).now(Zone.UTC)).isEqualTo("noon UTC");
    }
  }
}
