package io.petrel.rpc.transport.netty;

import static io.petrel.rpc.transport.netty.Protocol.*;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import com.google.protobuf.StringValue;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.Status;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A handler learns why nobody waits for its call any more ({@link ServerContext#cancellationStatus()}): its
 * connection closed, its client broke the protocol, the server's shutdown cut it. (The caller's cancel and
 * deadline are in the conformance suite.) And each kind of protocol violation has its own rate-limited WARN, so
 * that a flood of one does not hide another.
 */
class CancellationReasonTest extends TransportFixture {
  private static final MethodDescriptor<StringValue, StringValue> WAIT = TestService.textMethod("test.Wait", "wait");

  /** "request CODE: description", as each WAIT call's handler learnt that its caller was gone. */
  private final BlockingQueue<String> reasons = new LinkedBlockingQueue<>();
  private final BlockingQueue<String> running = new LinkedBlockingQueue<>();

  private RpcServer startWaitingServer(Duration grace) throws Exception {
    return startServer(b -> b.shutdownGracePeriod(grace).addService(ServiceDefinition.builder("test.Wait")
        .async(WAIT, req -> {
          // Async: no thread to interrupt (shutdownNow interrupts business threads), the call stays in flight
          // until its caller is gone.
          ServerContext ctx = ServerContext.current();
          CompletableFuture<StringValue> answer = new CompletableFuture<>();
          ctx.onCancel(() -> {
            Status why = Objects.requireNonNull(ctx.cancellationStatus());
            reasons.add(req.getValue() + " " + why.code() + ": " + why.description());
            answer.complete(req);
          });
          running.add(req.getValue());
          return answer;
        }).build()));
  }

  /** Sends a WAIT call with {@code value} on {@code p}, waits until its handler runs; returns p's own address. */
  private String callWaiting(RawPeer p, String value) throws Exception {
    p.send(RawPeer.request(WAIT, 1, 60_000, StringValue.of(value)));
    assertThat(running.poll(10, TimeUnit.SECONDS)).isEqualTo(value);
    return p.socket.getLocalSocketAddress().toString();
  }

  @Test
  void aHandlerWhoseClientsConnectionClosesLearnsThatItClosed() throws Exception {
    RpcServer server = startWaitingServer(Duration.ofSeconds(5));
    String local;
    try (RawPeer p = new RawPeer(server.port())) {
      local = callWaiting(p, "gone");
    }
    assertThat(reasons.poll(10, TimeUnit.SECONDS))
        .isEqualTo("gone CANCELLED: the connection from " + local + " closed");
  }

  @Test
  void aHandlerWhoseClientBrokeTheProtocolLearnsWhatItBroke() throws Exception {
    RpcServer server = startWaitingServer(Duration.ofSeconds(5));
    try (RawPeer p = new RawPeer(server.port())) {
      String local = callWaiting(p, "broken");
      p.send(RawPeer.response(7, new byte[0])); // only servers send RESPONSE frames
      assertThat(reasons.poll(10, TimeUnit.SECONDS)).isEqualTo("broken CANCELLED: the server closed the connection"
          + " from " + local + ": its client broke the protocol: a client sent a RESPONSE frame, which only servers"
          + " send");
    }
  }

  @Test
  void aHandlerCutByTheServersShutdownLearnsThatTheGracePeriodEnded() throws Exception {
    RpcServer server = startWaitingServer(Duration.ofMillis(200));
    try (RawPeer p = new RawPeer(server.port())) {
      String local = callWaiting(p, "cut");
      server.shutdown();
      assertThat(reasons.poll(10, TimeUnit.SECONDS)).isEqualTo("cut CANCELLED: the server closed the connection"
          + " from " + local + ": the server shut down and its shutdown grace period ended");
    }
  }

  @Test
  void aHandlerCutByShutdownNowLearnsThatTheServerShutDownAtOnce() throws Exception {
    RpcServer server = startWaitingServer(Duration.ofSeconds(30));
    try (RawPeer p = new RawPeer(server.port())) {
      String local = callWaiting(p, "now");
      server.shutdown(); // GOAWAY, and 30 s of grace ...
      assertThat(p.read().type()).isEqualTo(TYPE_GOAWAY);
      server.shutdownNow(); // ... cut short
      assertThat(reasons.poll(10, TimeUnit.SECONDS)).isEqualTo("now CANCELLED: the server closed the connection"
          + " from " + local + ": the server shut down at once (shutdownNow)");
    }
  }

  /** Two kinds of violation in one period: both logged (they shared one rate-limit key before). */
  @Test
  void eachKindOfProtocolViolationHasItsOwnWarning() throws Exception {
    RpcServer server = startServer();
    try (LogCapture log = new LogCapture(RpcServer.class)) {
      try (RawPeer p = new RawPeer(server.port())) {
        p.send(RawPeer.response(7, new byte[0]));
        assertThat(p.readUntilClosed()).isEmpty();
      }
      assertThat(log.await(Level.WARN, Duration.ofSeconds(10), "protocol violation",
          "a client sent a RESPONSE frame")).isNotNull();
      try (RawPeer p = new RawPeer(server.port())) {
        p.send(RawPeer.header((byte) 99, 1, 0, 0)); // no such frame type
        assertThat(p.readUntilClosed()).isEmpty();
      }
      assertThat(log.await(Level.WARN, Duration.ofSeconds(10), "protocol violation", "unknown frame type 99"))
          .isNotNull();
    }
  }
}
