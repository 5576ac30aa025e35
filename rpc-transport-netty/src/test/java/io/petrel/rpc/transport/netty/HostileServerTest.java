package io.petrel.rpc.transport.netty;

import static io.petrel.rpc.transport.netty.Protocol.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import com.google.protobuf.StringValue;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcClientBuilder;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.marshal.ProtobufMarshaller;
import io.petrel.rpc.testing.CallFailures;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * The client against servers that break the protocol: a fake server on a plain socket ({@link RawPeer}) reads the
 * client's requests and answers with what a broken or hostile server sends. Every call ends with a result or a
 * clear status, long before its deadline when the server has shown it cannot answer; a connection that broke the
 * protocol is closed and the next call gets a new one; what the client cannot use is skipped without being
 * buffered.
 */
class HostileServerTest extends TransportFixture {
  private static final long WAIT_SECONDS = 20;

  /** Reads frames until the client's next REQUEST, answering its PINGs on the way. */
  private static RawPeer.RawFrame nextRequest(RawPeer peer) throws Exception {
    for (;;) {
      RawPeer.RawFrame f = peer.readRaw();
      if (f.type() == TYPE_PING) {
        peer.send(RawPeer.control(TYPE_PONG, f.requestId()));
      } else if (f.type() == TYPE_REQUEST) {
        return f;
      }
    }
  }

  /** A fake server's work on one accepted connection; runs on another thread. */
  private interface Script {
    void play(RawPeer peer) throws Exception;
  }

  /** Accepts one connection after another and plays the scripts in turn, each on its own connection. */
  private static CompletableFuture<Void> fake(ServerSocket ss, CountDownLatch testDone, Script... scripts) {
    return CompletableFuture.runAsync(() -> {
      for (Script s : scripts) {
        try (RawPeer peer = new RawPeer(ss.accept())) {
          s.play(peer);
          if (s == scripts[scripts.length - 1]) {
            testDone.await(WAIT_SECONDS, TimeUnit.SECONDS); // keep the last connection open until the test ends
          }
        } catch (Exception e) {
          throw new IllegalStateException("fake server: " + e, e);
        }
      }
    });
  }

  /** Answers the next {@code n} requests with their own bodies (an echo). */
  private static Script echo(int n) {
    return peer -> {
      for (int i = 0; i < n; i++) {
        RawPeer.RawFrame r = nextRequest(peer);
        peer.send(RawPeer.response(r.requestId(), r.body()));
      }
    };
  }

  /** What a test does with a client of the fake server. */
  private interface ClientSide {
    void run(RpcClient client) throws Exception;
  }

  /**
   * Starts a fake server playing {@code scripts}, runs {@code test} with a client of it (keepalive off, then
   * {@code options}), and checks that the fake server's scripts ran through.
   */
  private void againstFake(UnaryOperator<RpcClientBuilder> options, ClientSide test, Script... scripts)
      throws Exception {
    CountDownLatch testDone = new CountDownLatch(1);
    try (ServerSocket ss = new ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
      CompletableFuture<Void> fake = fake(ss, testDone, scripts);
      test.run(client(ss.getLocalPort(), b -> options.apply(b.keepAliveTime(Duration.ZERO))));
      testDone.countDown();
      fake.get(WAIT_SECONDS, TimeUnit.SECONDS);
    }
  }

  /** The status {@code f} fails with, within {@code ms} milliseconds of now (long before the call's deadline). */
  private static StatusException failsWithin(long ms, CompletableFuture<?> f) {
    long start = System.nanoTime();
    ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
        () -> f.get(WAIT_SECONDS, TimeUnit.SECONDS));
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    assertThat(tookMs).as("failed after %d ms", tookMs).isLessThan(ms);
    assertThat(e.getCause()).isInstanceOf(StatusException.class);
    return (StatusException) e.getCause();
  }

  /**
   * A client pointed at something that is not a Petrel server (here an HTTP server's answer): the call fails at
   * once, not at its deadline, with UNAVAILABLE saying that the peer does not speak the protocol.
   */
  @Test
  void aServerSpeakingAnotherProtocolFailsTheCallAtOnceSayingSo() throws Exception {
    againstFake(b -> b, client -> {
      StatusException e = failsWithin(5_000, client.unaryCallAsync(TestService.ECHO, StringValue.of("hi"),
          CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(15))));
      assertThat(e.code()).isEqualTo(Status.Code.UNAVAILABLE);
      assertThat(e.status().description()).contains("does not speak the Petrel protocol");
    }, peer -> {
      nextRequest(peer);
      peer.send("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
    });
  }

  /**
   * A server that closes a connection with a call in flight and no GOAWAY (a crash, a kill): the call fails at
   * once, the client says so in its log (a server's connection dying was silent), and the next call connects again.
   */
  @Test
  void aConnectionTheServerClosesWithACallInFlightFailsItAndTheClientLogsIt() throws Exception {
    try (LogCapture log = new LogCapture(NettyRpcClient.class)) {
      againstFake(b -> b.reconnectBackoff(Duration.ofMillis(10), Duration.ofMillis(100)), client -> {
        StatusException e = failsWithin(5_000, client.unaryCallAsync(TestService.ECHO, StringValue.of("lost"),
            CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(15))));
        assertThat(e.code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(e.status().description()).contains("closed while test.Echo/echo was in flight");
        assertThat(log.await(Level.WARN, Duration.ofSeconds(10), "closed by the server or the network, with no"
            + " GOAWAY, while 1 call(s) were in flight")).contains("the next calls connect again");
        assertThat(client.unaryCall(TestService.ECHO, StringValue.of("again"),
            CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(10))).getValue()).isEqualTo("again");
      }, peer -> nextRequest(peer) /* then closes: the try-with-resources of the fake */, echo(1));
    }
  }

  /**
   * A server that floods PINGs and never reads: the client answers them only while the server reads, so what it
   * queues for the server stays near its write buffer's high-water mark (it grew by 32 bytes a PING, to an
   * OutOfMemoryError in a hostile-peer audit), and the call in flight is still answered.
   */
  @Test
  void aServerThatFloodsPingsAndNeverReadsCannotGrowTheClientsMemory() throws Exception {
    int pings = 200_000; // 6.4 MB of PINGs: far more than the sockets' buffers hold of the PONGs
    againstFake(b -> b, client -> {
      StringValue answer = client.unaryCall(TestService.ECHO, StringValue.of("through the flood"),
          CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(60)));
      assertThat(answer.getValue()).isEqualTo("through the flood");
      // Every PING was read before the answer (in order): what waits to be written to the server now is bounded.
      ClientConnection c = ((NettyRpcClient) io.petrel.rpc.internal.ClientChannel.transportOf(client)).connection();
      assertThat(c).isNotNull();
      long pending = c.channel().eventLoop().submit(() -> c.channel().unsafe().outboundBuffer() == null ? 0L
          : c.channel().unsafe().outboundBuffer().totalPendingWriteBytes()).get(WAIT_SECONDS, TimeUnit.SECONDS);
      // At most a few PONGs wait for the server (distinct PING ids, answered once): the write buffer's high-water
      // mark (64 KiB) bounds the rest.
      assertThat(pending).as("bytes queued for a server that reads nothing").isLessThan(128 * 1024);
    }, peer -> {
      RawPeer.RawFrame r = nextRequest(peer); // the last read: from here on the fake reads nothing
      byte[] ping = RawPeer.control(TYPE_PING, 7);
      byte[] batch = new byte[ping.length * 1000];
      for (int i = 0; i < 1000; i++) {
        System.arraycopy(ping, 0, batch, i * ping.length, ping.length);
      }
      for (int i = 0; i < pings / 1000; i++) {
        peer.send(batch);
      }
      peer.send(RawPeer.response(r.requestId(), r.body()));
    });
  }

  /**
   * A server that allows one call in flight and never answers it, even after its CANCEL: the place it holds is
   * given up after {@link NettyOptions#ABANDONED_PLACE_TIMEOUT} (2 s here, 60 s by default), and the call waiting
   * for it goes on a new connection (it waited for that place until its deadline, on every later call, in a
   * hostile-peer audit).
   */
  @Test
  void aServerThatNeverAnswersACancelledCallDoesNotHoldItsPlaceForever() throws Exception {
    try (LogCapture warnings = new LogCapture(NettyRpcClient.class)) {
      againstFake(b -> b.option(NettyOptions.ABANDONED_PLACE_TIMEOUT, Duration.ofSeconds(2)), client -> {
        CallFailures.assertFails(client.unaryCallAsync(TestService.ECHO, StringValue.of("lost"),
            CallOptions.DEFAULT.withTimeout(Duration.ofMillis(300))), Status.Code.DEADLINE_EXCEEDED);
        long start = System.nanoTime();
        StringValue next = client.unaryCall(TestService.ECHO, StringValue.of("next"),
            CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(20)));
        assertThat(next.getValue()).isEqualTo("next");
        assertThat(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start)).as("seconds waited").isLessThan(10);
        assertThat(warnings.await(Level.WARN, Duration.ofSeconds(5), "unanswered for more than 2000 ms after they"
            + " were cancelled")).contains("NettyOptions.ABANDONED_PLACE_TIMEOUT",
            "the calls waiting for a place go on a new connection");
      }, peer -> {
        peer.send(RawPeer.settingsFrame(SETTING_MAX_CONCURRENT_CALLS, 1));
        nextRequest(peer); // never answered, nor its CANCEL; the next request waits in the client for the place
        try {
          for (;;) {
            RawPeer.RawFrame f = peer.readRaw(); // until the client closes it
            if (f.type() == TYPE_PING) {
              peer.send(RawPeer.control(TYPE_PONG, f.requestId())); // alive: only that call is never answered
            }
          }
        } catch (java.io.IOException closedByTheClient) {
          // the script ends; the fake takes the client's next connection
        }
      }, echo(1));
    }
  }

  /**
   * A connection over which nothing comes back any more (a network partition: TCP retransmits into nothing, and
   * after the network heals the kernel may take tens of seconds to try again) is taken for dead 2 s after a call's
   * deadline passed on it with a PING unanswered: it is reset (the requests still in its send buffer are dropped,
   * not delivered late), a call still in flight there fails with UNAVAILABLE, and the next call goes on a new
   * connection. Here the fake server reads and never answers, not even PINGs; keepalive is off, so without this
   * the call in flight would wait to its 20 s deadline, and so would every call after it.
   */
  @Test
  void aConnectionThatAnswersNothingAfterADeadlineIsResetAndTheNextCallConnectsAgain() throws Exception {
    CompletableFuture<String> howClosed = new CompletableFuture<>();
    try (LogCapture warnings = new LogCapture(NettyRpcClient.class)) {
      againstFake(b -> b, client -> {
        // 1.5 s: long enough for the first connection to be made and the request written on a loaded machine (a
        // call whose deadline passes before it is sent starts no liveness check)
        CallFailures.assertFails(client.unaryCallAsync(TestService.ECHO, StringValue.of("lost"),
            CallOptions.DEFAULT.withTimeout(Duration.ofMillis(1500))), Status.Code.DEADLINE_EXCEEDED);
        // A call sent meanwhile on the dead connection fails when it is found dead, long before its deadline
        // (not idempotent: it is not sent again, the server may have had it); the next one gets a new connection.
        StatusException stuck = failsWithin(6_000, client.unaryCallAsync(TestService.ECHO, StringValue.of("stuck"),
            CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(20))));
        assertThat(stuck.code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(stuck.status().description()).contains("nothing received for 2000 ms after a call's deadline");
        StringValue next = client.unaryCall(TestService.ECHO, StringValue.of("next"),
            CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(8)));
        assertThat(next.getValue()).isEqualTo("next");
        assertThat(warnings.await(Level.WARN, Duration.ofSeconds(5), "nothing received for 2000 ms after a call's"
            + " deadline passed and a PING was sent")).endsWith(" in flight fail with UNAVAILABLE, reconnecting");
        assertThat(howClosed.get(5, TimeUnit.SECONDS)).as("how the silent connection ended").isEqualTo("reset");
      }, peer -> {
        nextRequest(peer); // then silence: nothing is answered, PINGs included
        try {
          for (;;) {
            peer.readRaw();
          }
        } catch (java.net.SocketException reset) {
          howClosed.complete("reset");
        } catch (java.io.EOFException fin) {
          howClosed.complete("closed with a FIN");
        }
      }, echo(1));
    }
  }

  /** {@link TestService#ECHO}, marked idempotent: a call that may have run is sent again after UNAVAILABLE. */
  private static final MethodDescriptor<StringValue, StringValue> IDEMPOTENT_ECHO =
      MethodDescriptor.<StringValue, StringValue>newBuilder().serviceName(TestService.NAME).methodName("echo")
          .idempotent(true)
          .requestMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
          .responseMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
          .build();

  /**
   * A call sent again when the connection it was on is found dead (idempotent, here fail-fast too) goes on a new
   * connection: the core hears of the close before the transport fails the calls in flight, as for any close.
   * Before, the dead connection's calls failed first, and the one sent again found the endpoint's slot still
   * holding the dead connection: fail-fast, it failed again ("has just closed; retry", then no endpoint left for
   * it), although the new connection the next call got would have taken it.
   */
  @Test
  void aCallSentAgainWhenItsConnectionIsFoundDeadGoesOnANewConnection() throws Exception {
    try (LogCapture warnings = new LogCapture(NettyRpcClient.class)) {
      againstFake(b -> b, client -> {
        // Connected first, so that the next call is written before its deadline passes (the liveness check).
        assertThat(client.unaryCall(TestService.ECHO, StringValue.of("first")).getValue()).isEqualTo("first");
        CallFailures.assertFails(client.unaryCallAsync(TestService.ECHO, StringValue.of("lost"),
            CallOptions.DEFAULT.withTimeout(Duration.ofMillis(300))), Status.Code.DEADLINE_EXCEEDED);
        // Written on the connection under the liveness check (its PING unanswered): found dead within 2 s, and
        // sent again, on a new connection, long before its deadline.
        StringValue again = client.unaryCallAsync(IDEMPOTENT_ECHO, StringValue.of("again"),
            CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(20)).withFailFast(true))
            .get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertThat(again.getValue()).isEqualTo("again");
        assertThat(warnings.await(Level.WARN, Duration.ofSeconds(5), "nothing received for 2000 ms after a call's"
            + " deadline passed")).endsWith("; 1 call(s) in flight fail with UNAVAILABLE, reconnecting");
      }, peer -> {
        echo(1).play(peer);
        nextRequest(peer); // then silence: nothing is answered, PINGs included, until the client resets it
        try {
          for (;;) {
            peer.readRaw();
          }
        } catch (java.net.SocketException | java.io.EOFException closedByTheClient) {
          // found dead: the next script takes the new connection
        }
      }, echo(1));
    }
  }

  /** {@link TestService#BLOCK}, marked idempotent: held by a real server until the test opens its gate. */
  private static final MethodDescriptor<StringValue, StringValue> IDEMPOTENT_BLOCK =
      MethodDescriptor.<StringValue, StringValue>newBuilder().serviceName(TestService.NAME).methodName("block")
          .idempotent(true)
          .requestMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
          .responseMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
          .build();

  /**
   * The several-endpoint form of {@link #aCallSentAgainWhenItsConnectionIsFoundDeadGoesOnANewConnection}: three
   * endpoints, two real servers and a fake that answered (its first frame, calls) and then froze, answering nothing
   * on that connection nor on any new one. Its connection is found dead (livenessTimeout) with calls in flight; each
   * of them, idempotent, is sent again through the balancer while the endpoint it was on still counts as available,
   * and must not fail again: it goes to another endpoint, or to a new connection of the frozen one, which fails its
   * first frame within connectTimeout and hands it on unsent. Every call ends with its answer.
   */
  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.ValueSource(strings = {"round_robin", "least_pending"})
  void callsSentAgainFromADeadConnectionOfOneOfSeveralEndpointsAllSucceed(String policy) throws Exception {
    int b = startServer().port();
    int c = startServer().port();
    java.util.concurrent.atomic.AtomicBoolean frozen = new java.util.concurrent.atomic.AtomicBoolean();
    java.util.concurrent.ExecutorService fakeThreads = java.util.concurrent.Executors.newCachedThreadPool();
    try (LogCapture warnings = new LogCapture(NettyRpcClient.class);
        ServerSocket ss = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      int f = ss.getLocalPort();
      fakeThreads.execute(() -> {
        try {
          for (;;) {
            java.net.Socket accepted = ss.accept();
            fakeThreads.execute(() -> {
              try (RawPeer peer = new RawPeer(accepted)) {
                peer.socket.setSoTimeout(0);
                for (;;) { // until the client closes it (or resets it, found dead)
                  RawPeer.RawFrame fr = peer.readRaw();
                  if (frozen.get()) {
                    continue; // frozen: reads, answers nothing, PINGs included
                  }
                  if (fr.type() == TYPE_PING) {
                    peer.send(RawPeer.control(TYPE_PONG, fr.requestId()));
                  } else if (fr.type() == TYPE_REQUEST) {
                    peer.send(RawPeer.response(fr.requestId(), fr.body()));
                  }
                }
              } catch (Exception closed) {
                // the connection ended
              }
            });
          }
        } catch (Exception closed) {
          // the test is over: the listening socket closed
        }
      });
      RpcClient client = client(1, x -> x.target("static://127.0.0.1:" + f + ",127.0.0.1:" + b + ",127.0.0.1:" + c)
          .loadBalancer(policy).keepAliveTime(Duration.ZERO).livenessTimeout(Duration.ofMillis(1000))
          .connectTimeout(Duration.ofSeconds(1)));
      client.start();
      assertThat(client.endpointStates().get(io.petrel.rpc.ConnectivityState.READY)).as("all three connected")
          .isEqualTo(3);
      frozen.set(true);
      // A call whose deadline passes on the frozen connection starts its liveness check: found dead 1 s later.
      boolean triggered = false;
      for (int i = 0; i < 60 && !triggered; i++) {
        java.util.concurrent.atomic.AtomicInteger port = new java.util.concurrent.atomic.AtomicInteger();
        CompletableFuture<StringValue> probe = client.unaryCallAsync(TestService.ECHO, StringValue.of("probe"),
            CallOptions.DEFAULT.withTimeout(Duration.ofMillis(300)).withEndpointListener(e -> port.set(e.port())));
        try {
          probe.get(WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
          triggered = port.get() == f; // (on a loaded machine a live server's answer may come late too)
        }
      }
      assertThat(triggered).as("a call went to the frozen server").isTrue();
      // Calls held by the real servers until the dead connection is found, so that least_pending spreads them over
      // all three by their pending counts (the frozen server's among them) as round_robin does by turns.
      int n = 24;
      List<CompletableFuture<StringValue>> calls = new java.util.ArrayList<>();
      List<java.util.Queue<Integer>> routes = new java.util.ArrayList<>();
      for (int i = 0; i < n; i++) {
        java.util.Queue<Integer> route = new java.util.concurrent.ConcurrentLinkedQueue<>();
        routes.add(route);
        calls.add(client.unaryCallAsync(IDEMPOTENT_BLOCK, StringValue.of("call " + i),
            CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(15)).withEndpointListener(e -> route.add(e.port()))));
      }
      String warn = warnings.await(Level.WARN, Duration.ofSeconds(10), "closing connection to 127.0.0.1:" + f,
          "nothing received for 1000 ms after a call's deadline passed");
      int failing = Integer.parseInt(warn.replaceAll(".*; (\\d+) call\\(s\\) in flight fail with UNAVAILABLE.*", "$1"));
      assertThat(failing).as("calls in flight on the dead connection: " + warn).isPositive();
      service.gate.countDown();
      List<String> outcomes = new java.util.ArrayList<>();
      for (int i = 0; i < n; i++) {
        try {
          assertThat(calls.get(i).get(WAIT_SECONDS, TimeUnit.SECONDS).getValue()).isEqualTo("call " + i);
        } catch (ExecutionException e) {
          outcomes.add("call " + i + " via " + routes.get(i) + ": " + e.getCause());
        }
      }
      assertThat(outcomes).as("calls that failed (frozen server at port %d)", f).isEmpty();
      long movedOff = routes.stream().filter(r -> r.size() > 1 && r.peek() == f).count();
      assertThat(movedOff).as("calls sent again from the dead connection").isGreaterThanOrEqualTo(failing);
    } finally {
      fakeThreads.shutdownNow();
    }
  }

  /**
   * A connection found dead after the resolver removed its endpoint (it was draining: its call in flight was to
   * finish there, and nothing reconnects to an endpoint no longer listed) says so in its WARN, and why. Before, the
   * WARN ended "reconnecting" as for a listed endpoint. Keepalive finds it dead: the fake server answers PINGs until
   * the endpoint is removed, then nothing.
   */
  @Test
  void aDeadConnectionOfARemovedEndpointSaysNothingReconnects() throws Exception {
    ManualResolver resolver = new ManualResolver();
    CountDownLatch requested = new CountDownLatch(1);
    CountDownLatch removed = new CountDownLatch(1);
    CountDownLatch testDone = new CountDownLatch(1);
    try (LogCapture warnings = new LogCapture(NettyRpcClient.class);
        ServerSocket ss = new ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
      CompletableFuture<Void> fake = fake(ss, testDone, peer -> {
        nextRequest(peer);
        requested.countDown();
        try {
          for (;;) {
            RawPeer.RawFrame f = peer.readRaw();
            if (f.type() == TYPE_PING && removed.getCount() > 0) {
              peer.send(RawPeer.control(TYPE_PONG, f.requestId())); // alive until the endpoint is removed
            }
          }
        } catch (java.io.IOException resetByTheClient) {
          // found dead: the script ends
        }
      });
      try {
        RpcClient client = client(1, b -> b.nameResolver("manual://orders", resolver)
            .keepAliveTime(Duration.ofMillis(100)));
        String authority = "127.0.0.1:" + ss.getLocalPort();
        resolver.listener.onEndpoints(java.util.List.of(io.petrel.rpc.Endpoint.of("127.0.0.1", ss.getLocalPort())));
        CompletableFuture<StringValue> inFlight = client.unaryCallAsync(TestService.ECHO, StringValue.of("held"),
            CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(20)));
        assertThat(requested.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("the call reached the server").isTrue();
        resolver.listener.onEndpoints(java.util.List.of()); // gone: its connection drains, the call stays there
        removed.countDown();
        String warn = warnings.await(Level.WARN, Duration.ofSeconds(10), "closing connection to " + authority + ": "
            + "silent for two keepalive periods, a PING went unanswered");
        assertThat(warn).endsWith("; 1 call(s) in flight fail with UNAVAILABLE, not reconnecting: " + authority
            + " was removed from manual://orders by its resolver");
        CallFailures.assertFails(inFlight, Status.Code.UNAVAILABLE, "no answer to keepalive PING");
      } finally {
        testDone.countDown();
      }
      fake.get(WAIT_SECONDS, TimeUnit.SECONDS);
    }
  }

  /**
   * Keepalive on an idle connection whose server answers: a PING after each keepAliveTime of silence, and the
   * connection stays (the core's keepalive counts anything read after its PING as the answer): the next call goes
   * on the same connection, and nothing is closed.
   */
  @Test
  void keepalivePingsThatAreAnsweredKeepAnIdleConnectionOpen() throws Exception {
    CountDownLatch pinged = new CountDownLatch(4);
    try (LogCapture warnings = new LogCapture(NettyRpcClient.class)) {
      againstFake(b -> b.keepAliveTime(Duration.ofMillis(100)), client -> {
        assertThat(client.unaryCall(TestService.ECHO, StringValue.of("first")).getValue()).isEqualTo("first");
        assertThat(pinged.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("4 keepalive PINGs answered").isTrue();
        // Only the connection the fake serves: a new one would never be answered.
        assertThat(client.unaryCall(TestService.ECHO, StringValue.of("again"),
            CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(5))).getValue()).isEqualTo("again");
        assertThat(warnings.lines(Level.WARN, "closing connection")).isEmpty();
      }, peer -> {
        echo(1).play(peer);
        while (pinged.getCount() > 0) {
          RawPeer.RawFrame f = peer.readRaw();
          assertThat(f.type()).as("frame type on the idle connection").isEqualTo(TYPE_PING);
          peer.send(RawPeer.control(TYPE_PONG, f.requestId()));
          pinged.countDown();
        }
        echo(1).play(peer);
      });
    }
  }

  /** A server whose SETTINGS allow no call in flight: a call waits to its deadline, and its message says why. */
  @Test
  void aServerThatAllowsNoCallInFlightIsNamedInTheDeadlineMessage() throws Exception {
    againstFake(b -> b, client -> CallFailures.assertFails(client.unaryCallAsync(TestService.ECHO,
        StringValue.of("x"), CallOptions.DEFAULT.withTimeout(Duration.ofMillis(300))), Status.Code.DEADLINE_EXCEEDED,
        "(not sent: it waited in the client until the server allowed a call on this connection (its SETTINGS allow"
            + " none in flight: it is not taking calls here))"),
        peer -> peer.send(RawPeer.settingsFrame(SETTING_MAX_CONCURRENT_CALLS, 0)));
  }

  /** A connection closed after its only call had given up (its deadline passed): no call fails, nothing to warn of. */
  @Test
  void aConnectionClosedAfterItsCallsGaveUpLogsNoWarning() throws Exception {
    CountDownLatch gaveUp = new CountDownLatch(1);
    try (LogCapture warnings = new LogCapture(NettyRpcClient.class);
        LogCapture slot = new LogCapture("io.petrel.rpc.internal.ConnectionSlot")) {
      againstFake(b -> b, client -> {
        CallFailures.assertFails(client.unaryCallAsync(TestService.ECHO, StringValue.of("late"),
            CallOptions.DEFAULT.withTimeout(Duration.ofMillis(300))), Status.Code.DEADLINE_EXCEEDED);
        gaveUp.countDown(); // the fake closes the connection now
        slot.await(Level.DEBUG, Duration.ofSeconds(10), "lost; the next call reconnects");
        assertThat(warnings.lines(Level.WARN, "closed by the server")).isEmpty();
        assertThat(client.unaryCall(TestService.ECHO, StringValue.of("again"),
            CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(10))).getValue()).isEqualTo("again");
      }, peer -> {
        // A server with a limit of calls in flight: the client keeps a call it gave up on counted until its answer.
        peer.send(RawPeer.settingsFrame(SETTING_MAX_CONCURRENT_CALLS, 100));
        nextRequest(peer);
        gaveUp.await(WAIT_SECONDS, TimeUnit.SECONDS);
      }, echo(1));
    }
  }

  /**
   * Answers for request ids the client never sent, and a second answer to a call already answered, are dropped:
   * the call gets its own answer, and the connection goes on serving calls.
   */
  @Test
  void answersToUnknownIdsAndRepeatedAnswersAreDroppedAndTheConnectionGoesOn() throws Exception {
    againstFake(b -> b, client -> {
      assertThat(client.unaryCall(TestService.ECHO, StringValue.of("first")).getValue()).isEqualTo("first");
      assertThat(client.unaryCall(TestService.ECHO, StringValue.of("second")).getValue()).isEqualTo("second");
    }, peer -> {
      RawPeer.RawFrame r = nextRequest(peer);
      peer.send(RawPeer.response(r.requestId() + 7777, StringValue.of("stray").toByteArray()));
      peer.send(RawPeer.response(r.requestId(), r.body()));
      peer.send(RawPeer.response(r.requestId(), StringValue.of("again").toByteArray()));
      RawPeer.RawFrame second = nextRequest(peer); // the same connection
      peer.send(RawPeer.response(second.requestId(), second.body()));
    });
  }

  /**
   * A server that sends a frame only clients send (a REQUEST) breaks the protocol: the connection is closed and
   * its call fails at once with UNAVAILABLE naming the violation; the next call connects again and is answered.
   */
  @Test
  void aRequestFromTheServerClosesTheConnectionAndTheNextCallConnectsAgain() throws Exception {
    againstFake(b -> b.reconnectBackoff(Duration.ofMillis(10), Duration.ofMillis(100)), client -> {
      StatusException e = failsWithin(5_000, client.unaryCallAsync(TestService.ECHO, StringValue.of("hi"),
          CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(15))));
      assertThat(e.code()).isEqualTo(Status.Code.UNAVAILABLE);
      assertThat(e.status().description()).contains("REQUEST frame, which only clients send");
      StringValue again = client.unaryCall(TestService.ECHO, StringValue.of("again"),
          CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(10)));
      assertThat(again.getValue()).isEqualTo("again");
    }, peer -> {
      nextRequest(peer);
      peer.send(RawPeer.frame(TYPE_REQUEST, 1, StringValue.of("call me").toByteArray()));
      peer.readUntilClosed(); // the client closes this connection
    }, echo(1));
  }

  /**
   * A response that declares nearly 4 GiB (the largest length the header can carry): the client allocates
   * nothing for it, fails that call with RESOURCE_EXHAUSTED naming its maxFrameSize, and skips the bytes as
   * they come; when the server then closes, the other call in flight ends with UNAVAILABLE, not at its deadline.
   */
  @Test
  void aResponseDeclaringFourGibibytesFailsItsCallWithoutBeingBuffered() throws Exception {
    againstFake(b -> b, client -> {
      CallOptions options = CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(15));
      CompletableFuture<StringValue> big = client.unaryCallAsync(TestService.ECHO, StringValue.of("a"), options);
      CompletableFuture<StringValue> other = client.unaryCallAsync(TestService.ECHO, StringValue.of("b"), options);
      StatusException e = failsWithin(5_000, big);
      assertThat(e.code()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
      assertThat(e.status().description()).contains("4294967299 bytes exceeds the client's maxFrameSize");
      assertThat(failsWithin(5_000, other).code()).isEqualTo(Status.Code.UNAVAILABLE);
    }, peer -> {
      RawPeer.RawFrame a = nextRequest(peer);
      nextRequest(peer);
      peer.send(RawPeer.header(TYPE_RESPONSE, a.requestId(), 0, -1 - MIN_LENGTH)); // length field 0xFFFFFFFF
      peer.send(new byte[1 << 20]); // a first MiB of the body, skipped
      peer.socket.close();
    });
  }

  /** Half a response header, then silence with the connection open: the call ends by its deadline. */
  @Test
  void halfAResponseThenSilenceEndsTheCallByItsDeadline() throws Exception {
    againstFake(b -> b, client -> {
      long start = System.nanoTime();
      assertThatThrownBy(() -> client.unaryCall(TestService.ECHO, StringValue.of("hi"),
          CallOptions.DEFAULT.withTimeout(Duration.ofMillis(500))))
          .isInstanceOfSatisfying(StatusException.class,
              s -> assertThat(s.code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));
      long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      assertThat(tookMs).as("ended after %d ms", tookMs).isBetween(400L, 3_000L);
    }, peer -> {
      RawPeer.RawFrame r = nextRequest(peer);
      peer.send(java.util.Arrays.copyOf(RawPeer.response(r.requestId(), r.body()), HEADER_SIZE / 2));
    });
  }
  /**
   * A CANCEL says why in its status byte: DEADLINE_EXCEEDED when the call's deadline passed, CANCELLED when its
   * caller cancelled it. The server counts the call so, although its own reading of the deadline (taken when the
   * request arrived, rounded up to whole milliseconds) has usually not passed when the CANCEL comes.
   */
  @Test
  void aCancelSaysWhetherTheDeadlinePassedOrTheCallerCancelled() throws Exception {
    java.util.concurrent.BlockingQueue<String> requests = new java.util.concurrent.LinkedBlockingQueue<>();
    java.util.concurrent.BlockingQueue<String> cancels = new java.util.concurrent.LinkedBlockingQueue<>();
    againstFake(b -> b, client -> {
      assertThatThrownBy(() -> client.unaryCall(TestService.ECHO, StringValue.of("late"),
          CallOptions.DEFAULT.withTimeout(Duration.ofMillis(300))))
          .isInstanceOfSatisfying(StatusException.class,
              s -> assertThat(s.code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));
      assertThat(requests.poll(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("late");
      assertThat(cancels.poll(WAIT_SECONDS, TimeUnit.SECONDS))
          .isEqualTo("late " + Status.Code.DEADLINE_EXCEEDED.value());
      CompletableFuture<StringValue> dropped = client.unaryCallAsync(TestService.ECHO, StringValue.of("dropped"),
          CallOptions.DEFAULT.withTimeout(Duration.ofMinutes(1)));
      assertThat(requests.poll(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("dropped"); // sent, then cancelled
      assertThat(dropped.cancel(true)).isTrue();
      assertThat(cancels.poll(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("dropped " + Status.Code.CANCELLED.value());
    }, peer -> {
      java.util.Map<Integer, String> byId = new java.util.HashMap<>();
      int cancelsRead = 0;
      while (cancelsRead < 2) {
        RawPeer.RawFrame f = peer.readRaw();
        if (f.type() == TYPE_PING) {
          peer.send(RawPeer.control(TYPE_PONG, f.requestId()));
        } else if (f.type() == TYPE_REQUEST) {
          String value = StringValue.parseFrom(f.body()).getValue();
          byId.put(f.requestId(), value);
          requests.add(value);
        } else if (f.type() == TYPE_CANCEL) {
          cancelsRead++;
          cancels.add(byId.get(f.requestId()) + " " + f.status());
        }
      }
    });
  }
}
