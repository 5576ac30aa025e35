package io.petrel.rpc.transport.netty;

import static io.petrel.rpc.testing.CallFailures.assertFails;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import com.google.protobuf.StringValue;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * GOAWAY with the last request the server took (docs/protocol.md, "GOAWAY"): what the server sends, and a client
 * that sends the refused calls again on another connection, without their callers seeing it, while a call the
 * server may have run is never sent twice.
 */
class GoawayTest extends TransportFixture {

  @Test
  void aGracefulShutdownsGoawayNamesTheLastRequestTakenAndRefusesLaterOnesUnread() throws Exception {
    RpcServer server = startServer(b -> b.shutdownGracePeriod(java.time.Duration.ofSeconds(30)));
    try (RawPeer peer = new RawPeer(server.port())) {
      peer.send(RawPeer.request(TestService.BLOCK, 5, 0, StringValue.of("held")));
      assertThat(service.blockStarted.poll(10, TimeUnit.SECONDS)).as("request 5 reached its handler").isNotNull();
      server.shutdown();
      RawPeer.RawFrame goaway = peer.read();
      assertThat(goaway.type()).isEqualTo(Protocol.TYPE_GOAWAY);
      assertThat(goaway.status()).as("refuses later requests").isEqualTo(Status.Code.UNAVAILABLE.value());
      assertThat(goaway.requestId()).as("the last request taken").isEqualTo(5);

      peer.send(RawPeer.request(TestService.ECHO, 6, 0, StringValue.of("late")));
      RawPeer.RawFrame refused = peer.read();
      assertThat(refused.requestId()).isEqualTo(6);
      assertThat(refused.status()).isEqualTo(Status.Code.UNAVAILABLE.value());
      assertThat(refused.flags()).as("marked refused: no handler saw it").isEqualTo(Protocol.FLAG_REFUSED);
      service.gate.countDown();
      RawPeer.RawFrame answered = peer.read();
      assertThat(answered.requestId()).isEqualTo(5);
      assertThat(answered.status()).isZero();
      assertThat(StringValue.parseFrom(answered.body()).getValue()).isEqualTo("held");
    }
  }

  /**
   * A request the connection reads after the shutdown began but before its GOAWAY went out is refused after the
   * GOAWAY, never before it: a client that read the refusal first would fail a call it could have sent elsewhere
   * (KillUnderLoadTest found this with a drain delay of 0). Direct mode: BLOCK runs on the connection's event loop,
   * so the GOAWAY that shutdown() hands to that loop waits behind it, while the request sent with it has already
   * been read and is dispatched as soon as BLOCK returns.
   */
  @Test
  void aRequestReadBeforeTheGoawayWentOutIsRefusedOnlyAfterIt() throws Exception {
    RpcServer server = startServer(b -> b.directExecutor().shutdownGracePeriod(java.time.Duration.ofSeconds(30)));
    try (RawPeer peer = new RawPeer(server.port())) {
      byte[] held = RawPeer.request(TestService.BLOCK, 5, 0, StringValue.of("held"));
      byte[] late = RawPeer.request(TestService.ECHO, 6, 0, StringValue.of("late"));
      byte[] both = java.util.Arrays.copyOf(held, held.length + late.length);
      System.arraycopy(late, 0, both, held.length, late.length);
      peer.send(both); // one write: the server reads both before BLOCK runs
      assertThat(service.blockStarted.poll(10, TimeUnit.SECONDS)).as("request 5 reached its handler").isNotNull();
      server.shutdown();
      service.gate.countDown();

      List<String> frames = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        RawPeer.RawFrame f = peer.read();
        frames.add(f.type() == Protocol.TYPE_GOAWAY ? "GOAWAY after " + f.requestId()
            : "answer to " + f.requestId() + " status " + f.status());
      }
      assertThat(frames).containsExactly("answer to 5 status 0", "GOAWAY after 5",
          "answer to 6 status " + Status.Code.UNAVAILABLE.value());
    }
  }

  @Test
  void callsTheServerRefusedUnreadAreSentAgainOnAnotherConnectionAndOneItMayHaveRunIsNot() throws Exception {
    try (ServerSocket listener = new ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
      RpcClient client = client(listener.getLocalPort());
      List<CompletableFuture<StringValue>> calls = new ArrayList<>();
      for (String s : List.of("one", "two", "three", "four")) {
        calls.add(client.unaryCallAsync(TestService.ECHO, StringValue.of(s), CallOptions.DEFAULT));
      }
      List<String> secondSaw = new ArrayList<>();
      try (RawPeer first = new RawPeer(listener.accept())) {
        first.send(RawPeer.settingsFrame(Protocol.SETTING_MAX_CONCURRENT_CALLS, 100));
        List<RawPeer.RawFrame> requests = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
          requests.add(first.nextRequest());
        }
        assertThat(requests).extracting(f -> StringValue.parseFrom(f.body()).getValue())
            .containsExactly("one", "two", "three", "four");
        int second = requests.get(1).requestId();
        // Took "one" and "two" (say they are running); "three" and "four" came after: refused unread.
        first.send(goaway(second));
        // A second GOAWAY that contradicts the first (it would say "two" was not taken): ignored, or "two" would
        // be sent again and could run twice (a hostile-peer audit).
        first.send(RawPeer.control(Protocol.TYPE_GOAWAY, 0)); // a drain GOAWAY between: changes nothing
        first.send(goaway(requests.get(0).requestId()));
        first.send(RawPeer.response(requests.get(0).requestId(), StringValue.of("one answered").toByteArray()));
        first.send(refusal(requests.get(2).requestId())); // what the server answers: dropped, the call went on
        try (RawPeer next = new RawPeer(listener.accept())) {
          next.send(RawPeer.settingsFrame(Protocol.SETTING_MAX_CONCURRENT_CALLS, 100));
          for (int i = 0; i < 2; i++) {
            RawPeer.RawFrame f = next.nextRequest();
            String text = StringValue.parseFrom(f.body()).getValue();
            secondSaw.add(text);
            next.send(RawPeer.response(f.requestId(), StringValue.of(text + " answered elsewhere").toByteArray()));
          }
          assertThat(calls.get(0).get(10, TimeUnit.SECONDS).getValue()).isEqualTo("one answered");
          assertThat(calls.get(2).get(10, TimeUnit.SECONDS).getValue()).isEqualTo("three answered elsewhere");
          assertThat(calls.get(3).get(10, TimeUnit.SECONDS).getValue()).isEqualTo("four answered elsewhere");
          assertThat(calls.get(1)).as("'two' may be running: it stays where it was").isNotDone();
          // Nor was 'two' sent here after the second GOAWAY (it would have come right after 'three' and 'four').
          next.socket.setSoTimeout(1000);
          org.assertj.core.api.Assertions.assertThatThrownBy(() -> next.nextRequest())
              .isInstanceOf(java.net.SocketTimeoutException.class);
        } // the first connection closes with "two" unanswered:
      }
      assertFails(calls.get(1), Status.Code.UNAVAILABLE, "may or may not have run it");
      assertThat(secondSaw).as("sent again, in order; 'two' never").containsExactly("three", "four");
      assertThat(client.pendingCalls()).isZero();
    }
  }

  /**
   * While a server drains (it sent GOAWAY and no longer accepts), a new call cannot connect; its status says that
   * the server sent GOAWAY, which "connection refused" alone does not tell.
   */
  @Test
  void aCallThatCannotConnectToADrainingServerSaysTheServerSentGoaway() throws Exception {
    RpcServer server = startServer(b -> b.shutdownGracePeriod(java.time.Duration.ofSeconds(30)));
    RpcClient client = client(server.port());
    CompletableFuture<StringValue> held = client.unaryCallAsync(TestService.BLOCK, StringValue.of("held"),
        CallOptions.DEFAULT);
    assertThat(service.blockStarted.poll(10, TimeUnit.SECONDS)).isEqualTo("held");
    server.shutdown(); // GOAWAY; the call in flight goes on
    StatusException e = null;
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (e == null && System.nanoTime() - until < 0) {
      try {
        // Until the client has read the GOAWAY, a call may still go to the old connection and be refused there.
        client.unaryCall(TestService.ECHO, StringValue.of("new"), CallOptions.DEFAULT.withFailFast(true));
      } catch (StatusException failed) {
        if (failed.getMessage().contains("cannot connect")) {
          e = failed;
        }
      }
    }
    assertThat(e).as("a new call failed to connect within 10 s").isNotNull();
    assertThat(e.code()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(e.getMessage()).contains("the server there sent GOAWAY on the last connection: it is shutting down"
        + " or restarting");
    service.gate.countDown();
    assertThat(held.get(10, TimeUnit.SECONDS).getValue()).isEqualTo("held");
  }

  /**
   * When the grace period ends with calls still running, the server's warning names the option that gives them
   * longer, and the calls end with UNAVAILABLE as their connection closes.
   */
  @Test
  void theGracePeriodOverWarningNamesTheOptionThatGivesCallsLonger() throws Exception {
    RpcServer server = startServer(b -> b.shutdownGracePeriod(java.time.Duration.ofMillis(200)));
    RpcClient client = client(server.port());
    CompletableFuture<StringValue> held = client.unaryCallAsync(TestService.BLOCK, StringValue.of("held"),
        CallOptions.DEFAULT);
    assertThat(service.blockStarted.poll(10, TimeUnit.SECONDS)).isEqualTo("held");
    try (LogCapture log = new LogCapture(RpcServer.class)) {
      server.shutdown();
      assertThat(log.await(Level.WARN, java.time.Duration.ofSeconds(10), "grace period of 200 ms is over with 1"
          + " calls in flight")).contains("raise shutdownGracePeriod on the server's builder");
    }
    assertFails(held, Status.Code.UNAVAILABLE, "(after the server's GOAWAY: it was shutting down; a call still"
        + " running when its shutdown grace period ends (shutdownGracePeriod on the server's builder) ends this way,"
        + " as do calls of a server stopped at once or gone meanwhile) while test.Echo/block was in flight; the server"
        + " may or may not have run it");
    service.gate.countDown();
  }

  /** A connection retired by maxConnectionAge and closed with a call still running: the call says why. */
  @Test
  void aCallThatOutlastsARetiredConnectionsGracePeriodSaysTheConnectionWasRetired() throws Exception {
    RpcServer server = startServer(b -> b.maxConnectionAge(java.time.Duration.ofMillis(200))
        .shutdownGracePeriod(java.time.Duration.ofMillis(300)));
    RpcClient client = client(server.port());
    CompletableFuture<StringValue> held = client.unaryCallAsync(TestService.BLOCK, StringValue.of("held"),
        CallOptions.DEFAULT);
    assertThat(service.blockStarted.poll(10, TimeUnit.SECONDS)).isEqualTo("held");
    assertFails(held, Status.Code.UNAVAILABLE, "(after the server's GOAWAY retiring this connection (its idleTimeout"
        + " or maxConnectionAge); a call still running when its shutdown grace period ends", ") while test.Echo/block"
        + " was in flight");
    service.gate.countDown();
    assertThat(client.unaryCall(TestService.ECHO, StringValue.of("next")).getValue()).isEqualTo("next");
  }


  /** A shutting-down server's answer to a request that came after its GOAWAY. */
  private static byte[] refusal(int requestId) {
    byte[] f = RawPeer.frame(Protocol.TYPE_RESPONSE, requestId, "server is shutting down".getBytes(
        java.nio.charset.StandardCharsets.UTF_8));
    f[Protocol.OFF_STATUS] = (byte) Status.Code.UNAVAILABLE.value();
    return f;
  }

  /** A graceful shutdown's GOAWAY: refuses every request after {@code lastId}. */
  private static byte[] goaway(int lastId) {
    byte[] f = RawPeer.control(Protocol.TYPE_GOAWAY, lastId);
    f[Protocol.OFF_STATUS] = (byte) Status.Code.UNAVAILABLE.value();
    return f;
  }
}
