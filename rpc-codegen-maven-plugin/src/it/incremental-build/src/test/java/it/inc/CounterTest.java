package it.inc;

import static org.assertj.core.api.Assertions.assertThat;

import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class CounterTest {
  @Test
  void theCodeGeneratedByAnEarlierBuildServesCalls() throws Exception {
    AtomicLong total = new AtomicLong();
    Counter impl = total::addAndGet;
    try (RpcServer server = RpcServer.builder().bindAddress("127.0.0.1", 0).addService(CounterRpc.bind(impl)).build()
            .start();
        RpcClient client = RpcClient.builder().address("127.0.0.1", server.port()).build()) {
      Counter counter = CounterRpc.stub(client);
      assertThat(counter.increment(2)).isEqualTo(2);
      assertThat(counter.increment(40)).isEqualTo(42);
    }
  }
}
