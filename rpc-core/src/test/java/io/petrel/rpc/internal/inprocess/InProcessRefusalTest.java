package io.petrel.rpc.internal.inprocess;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.internal.ClientChannel;
import io.petrel.rpc.internal.RetryBudget;
import io.petrel.rpc.marshal.Marshallers;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * The in-process server refuses a call while it shuts down as the Netty server does: the connection goes away
 * before the refusal reaches the caller, so that the call, sent again, looks for another connection instead of
 * coming back to the one that refused it.
 */
class InProcessRefusalTest {
  private static final MethodDescriptor<byte[], byte[]> ECHO = MethodDescriptor.<byte[], byte[]>newBuilder()
      .serviceName("refusal.Svc").methodName("echo").idempotent(true)
      .requestMarshaller(Marshallers.bytes()).responseMarshaller(Marshallers.bytes()).build();

  private final AtomicInteger ran = new AtomicInteger();
  private @Nullable RpcServer server;
  private @Nullable RpcClient client;

  @AfterEach
  void close() throws InterruptedException {
    RpcClient c = client;
    if (c != null) {
      c.shutdownNow();
      assertThat(c.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
    RpcServer s = server;
    if (s != null) {
      s.shutdownNow();
      assertThat(s.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
  }

  @Test
  void aCallRefusedBecauseTheServerShutsDownIsNotSentBackToTheConnectionThatRefusedIt() throws Exception {
    String name = "in-process-refusal";
    RpcServer server = RpcServer.builder().inProcess(name).addService(ServiceDefinition.builder("refusal.Svc")
        .unary(ECHO, b -> {
          ran.incrementAndGet();
          return b;
        }).build()).build().start();
    this.server = server;
    RpcClient client = RpcClient.builder().inProcess(name).build();
    this.client = client;
    assertThat(new String(client.unaryCall(ECHO, "before".getBytes(UTF_8)), UTF_8)).isEqualTo("before");

    // The first step of a graceful shutdown: the dispatcher refuses new calls. The connections hear of it a
    // moment later (stopAccepting); the test holds that moment open.
    InProcessServers.dispatcher(server).shutdown();
    RetryBudget budget = ClientChannel.runtimeOf(client).retryBudget();
    int tokens = budget.milliTokens();
    StatusException e = catchThrowableOfType(StatusException.class,
        () -> client.unaryCall(ECHO, "late".getBytes(UTF_8)));
    assertThat(e).as("the late call fails").isNotNull();
    assertThat(e.status().code()).isEqualTo(Status.Code.UNAVAILABLE);
    // Sent again after the refusal, it found no connection to go to: the server takes none while it shuts down.
    assertThat(e.status().description()).isEqualTo("in-process server '" + name + "' is shutting down and takes"
        + " no new calls; refusal.Svc/echo not sent");
    // Refused once: not three re-sends and two retries on the connection that refused it, a token each.
    assertThat(tokens - budget.milliTokens()).as("retry tokens the call took").isEqualTo(1000);
    assertThat(ran).as("executions").hasValue(1);
  }
}
