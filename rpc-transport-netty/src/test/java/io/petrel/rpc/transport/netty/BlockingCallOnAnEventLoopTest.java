package io.petrel.rpc.transport.netty;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import com.google.protobuf.StringValue;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServiceDefinition;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A handler served with {@code directExecutor()} runs on the server's event loop; a blocking call it makes holds
 * every connection of that loop until it returns. It still works, and the client says so in a WARN naming both
 * methods and what to do; the same handler on the business pool gets no such line.
 */
class BlockingCallOnAnEventLoopTest extends TransportFixture {
  private static final MethodDescriptor<StringValue, StringValue> ECHO = TestService.textMethod("test.Back", "echo");
  private static final MethodDescriptor<StringValue, StringValue> RELAY = TestService.textMethod("test.Front", "relay");

  @Test
  void aBlockingCallFromADirectModeHandlerWorksAndIsReportedOnce() throws Exception {
    RpcServer back = startServer(b -> b.addService(ServiceDefinition.builder("test.Back")
        .unary(ECHO, req -> StringValue.of("back:" + req.getValue())).build()));
    RpcClient toBack = client(back.port());
    ServiceDefinition front = ServiceDefinition.builder("test.Front")
        .unary(RELAY, req -> toBack.unaryCall(ECHO, req)).build();
    RpcServer direct = startServer(b -> b.directExecutor().addService(front));
    RpcServer pooled = startServer(b -> b.addService(front));
    try (LogCapture log = new LogCapture(RpcClient.class)) {
      RpcClient pooledClient = client(pooled.port());
      assertThat(pooledClient.unaryCall(RELAY, StringValue.of("p")).getValue()).isEqualTo("back:p");
      RpcClient directClient = client(direct.port());
      assertThat(directClient.unaryCall(RELAY, StringValue.of("d1")).getValue()).isEqualTo("back:d1");
      assertThat(directClient.unaryCall(RELAY, StringValue.of("d2")).getValue()).isEqualTo("back:d2");
      String line = log.await(Level.WARN, Duration.ofSeconds(10), "blocking call to test.Back/echo made by the"
          + " handler of test.Front/relay on ", "an event loop of the server (it serves with directExecutor())",
          "Make the call with the async stub and return its future from an async handler, or serve"
          + " test.Front/relay on the business pool (the default)");
      assertThat(line).doesNotContain("(and "); // the first of its kind
      // Logged on the handler's thread before its call was sent, so every line is in by now: one, from the
      // direct-mode server (the second call within 10 s is counted, not logged; the pool's handler logs none).
      assertThat(log.lines(Level.WARN, "blocking call")).hasSize(1);
    }
  }
}
