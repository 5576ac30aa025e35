package io.petrel.rpc.transport.netty;

import static io.petrel.rpc.testing.CallFailures.assertFails;
import static io.petrel.rpc.testing.CallFailures.failureOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.StringValue;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.Deadline;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.testing.FaultProxy;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

class FailureTest extends TransportFixture {

  @Test
  void slowHandlerFailsWithDeadlineExceededAndTheCallerDoesNotHang() throws Exception {
    RpcServer server = startServer();
    RpcClient client = client(server.port());
    long start = System.nanoTime();
    CompletableFuture<StringValue> f = client.unaryCallAsync(TestService.BLOCK, StringValue.of("slow"),
        CallOptions.DEFAULT.withTimeout(Duration.ofMillis(300)));
    StatusException e = failureOf(f);
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    assertThat(e.code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(e.status().description()).contains("test.Echo/block").contains("127.0.0.1:" + server.port());
    assertThat(tookMs).isBetween(250L, 5_000L);
    assertThat(client.pendingCalls()).isZero();
    // The handler still holds a business thread; the connection keeps serving others.
    assertThat(client.unaryCall(TestService.ECHO, StringValue.of("next")).getValue()).isEqualTo("next");
  }

  /**
   * A call never ends with DEADLINE_EXCEEDED before its deadline (a timer that fired early would cut calls short):
   * asynchronous calls with an absolute deadline, on the per-call timer (under 1 s) and on the connection's sweep
   * (1 s and more), the time left read as the call ends; and blocking ones with a timeout, as a stub's caller
   * makes them.
   */
  @Test
  void aDeadlineIsNeverDeclaredExceededBeforeItPasses() throws Exception {
    RpcServer server = startServer();
    RpcClient client = client(server.port());
    assertThat(client.unaryCall(TestService.ECHO, StringValue.of("warm")).getValue()).isEqualTo("warm");
    for (long millis : new long[] {200, 200, 200, 1_100}) {
      Deadline deadline = Deadline.after(Duration.ofMillis(millis));
      CompletableFuture<StringValue> call = client.unaryCallAsync(TestService.BLOCK, StringValue.of("slow"),
          CallOptions.DEFAULT.withDeadline(deadline));
      CompletableFuture<Long> leftWhenEnded = call.handle((v, t) -> deadline.remainingNanos());
      StatusException e = failureOf(call);
      assertThat(e.code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
      assertThat(leftWhenEnded.get(5, TimeUnit.SECONDS)).as("nanoseconds left when a %d ms call ended", millis)
          .isLessThanOrEqualTo(0);
    }
    for (int i = 0; i < 3; i++) { // blocking, as a stub's caller waits
      long start = System.nanoTime();
      StatusException e = assertFails(() -> client.unaryCall(TestService.BLOCK, StringValue.of("slow"),
          CallOptions.DEFAULT.withTimeout(Duration.ofMillis(200))), Status.Code.DEADLINE_EXCEEDED);
      assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(200));
      // The message's "after N ms" counts from the instant the timeout was counted from: never less than it.
      Matcher after = Pattern.compile("after (\\d+) ms")
          .matcher(String.valueOf(e.status().description()));
      assertThat(after.find()).as("%s", e.status().description()).isTrue();
      assertThat(Long.parseLong(after.group(1))).as("%s", e.status().description()).isGreaterThanOrEqualTo(200);
    }
  }

  @Test
  void farDeadlineIsEnforcedByTheSweepToo() throws Exception {
    RpcServer server = startServer();
    RpcClient client = client(server.port());
    long start = System.nanoTime();
    CompletableFuture<StringValue> f = client.unaryCallAsync(TestService.BLOCK, StringValue.of("far"),
        CallOptions.DEFAULT.withTimeout(Duration.ofMillis(1500))); // >= 1 s: no timer of its own
    StatusException e = failureOf(f);
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    assertThat(e.code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(tookMs).isBetween(1450L, 6_000L);
    assertThat(client.pendingCalls()).isZero();
  }

  @Test
  void clientDefaultDeadlineAppliesWhenTheCallSetsNone() throws Exception {
    RpcServer server = startServer();
    RpcClient client = client(server.port(), b -> b.defaultDeadline(Duration.ofMillis(200)));
    assertFails(() -> client.unaryCall(TestService.BLOCK, StringValue.of("x")), Status.Code.DEADLINE_EXCEEDED);
  }

  @Test
  void oversizeRequestIsRefusedByTheClientBeforeSending() throws Exception {
    RpcServer server = startServer();
    RpcClient client = client(server.port(), b -> b.maxFrameSize(64 * 1024));
    assertFails(() -> client.unaryCall(TestService.BYTES, new byte[100_000]), Status.Code.RESOURCE_EXHAUSTED,
        "request of 100032 bytes exceeds maxFrameSize 65536", "RpcClient.builder().maxFrameSize");
    assertThat(client.unaryCall(TestService.BYTES, new byte[1000])).hasSize(1000);
  }

  @Test
  void oversizeRequestIsRefusedByTheServerWithoutClosingTheConnection() throws Exception {
    RpcServer server = startServer(b -> b.maxFrameSize(64 * 1024));
    RpcClient client = client(server.port());
    assertFails(() -> client.unaryCall(TestService.BYTES, new byte[1_000_000]), Status.Code.RESOURCE_EXHAUSTED,
        "request of 1000032 bytes exceeds the server's maxFrameSize 65536", "RpcServer.builder().maxFrameSize");
    // Same connection, next call: the skipped bytes did not desynchronise the stream.
    assertThat(client.unaryCall(TestService.BYTES, new byte[5000])).hasSize(5000);
    assertThat(client.unaryCall(TestService.ECHO, StringValue.of("after")).getValue()).isEqualTo("after");
  }

  @Test
  void oversizeResponseIsRefusedBySenderAndByReceiver() throws Exception {
    RpcServer server = startServer(b -> b.maxFrameSize(64 * 1024));
    RpcClient client = client(server.port(), b -> b.maxFrameSize(32 * 1024));
    // The server will not send a response over its own limit.
    assertFails(() -> client.unaryCall(TestService.BIG_RESPONSE, new Object[] {100_000}),
        Status.Code.RESOURCE_EXHAUSTED, "response of 100032 bytes exceeds maxFrameSize 65536");
    // The client refuses a response over its limit without buffering it.
    assertFails(() -> client.unaryCall(TestService.BIG_RESPONSE, new Object[] {50_000}),
        Status.Code.RESOURCE_EXHAUSTED, "response of 50032 bytes exceeds the client's maxFrameSize 32768");
    assertThat(client.unaryCall(TestService.BIG_RESPONSE, new Object[] {1000})).hasSize(1000);
  }

  @Test
  void fullBusinessPoolGivesResourceExhaustedAtOnce() throws Exception {
    RpcServer server = startServer(b -> b.businessThreads(1).businessQueueSize(0));
    RpcClient client = client(server.port());
    CompletableFuture<StringValue> blocked =
        client.unaryCallAsync(TestService.BLOCK, StringValue.of("holds the only thread"), CallOptions.DEFAULT);
    assertThat(service.blockStarted.poll(10, TimeUnit.SECONDS)).isEqualTo("holds the only thread");
    CompletableFuture<StringValue> rejected = client.unaryCallAsync(TestService.ECHO, StringValue.of("x"),
        CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(30)));
    StatusException e = failureOf(rejected); // long before the 30 s deadline
    assertThat(e.code()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(e.status().description()).contains("business pool is full").contains("1 threads busy")
        .contains("businessThreads");
    service.gate.countDown();
    assertThat(blocked.get(10, TimeUnit.SECONDS).getValue()).isEqualTo("holds the only thread");
  }

  @Test
  void aCallerThatCallsAgainAsSoonAsItHasItsAnswerFindsTheOnlyThreadFree() throws Exception {
    // One business thread and no queue: the call's place is freed before its answer is written, so a caller
    // that calls again the moment it has each answer is never told the pool is full.
    RpcServer server = startServer(b -> b.businessThreads(1).businessQueueSize(0));
    RpcClient client = client(server.port());
    for (int i = 0; i < 2000; i++) {
      assertThat(client.unaryCall(TestService.ECHO, StringValue.of("n" + i)).getValue()).isEqualTo("n" + i);
    }
  }

  @Test
  void perConnectionCallLimitGivesResourceExhaustedToAPeerThatIgnoresTheServersSettings() throws Exception {
    RpcServer server = startServer(b -> b.maxConcurrentCallsPerConnection(1));
    // A peer that sends beyond the limit the server announced is refused, with the option named.
    try (RawPeer raw = new RawPeer(server.port())) {
      raw.send(RawPeer.request(TestService.BLOCK, 1, 0, StringValue.of("one")));
      assertThat(service.blockStarted.poll(10, TimeUnit.SECONDS)).isEqualTo("one");
      raw.send(RawPeer.request(TestService.ECHO, 2, 0, StringValue.of("two")));
      RawPeer.RawFrame refused = raw.read();
      assertThat(refused.requestId()).isEqualTo(2);
      assertThat(refused.status()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED.value());
      assertThat(refused.text()).contains("maxConcurrentCallsPerConnection");
      assertThat(raw.settings().settings()).containsEntry((int) Protocol.SETTING_MAX_CONCURRENT_CALLS, 1L);
      service.gate.countDown();
      assertThat(raw.read().requestId()).isEqualTo(1);
    }
    // A Petrel client holds the second call until the first has ended, instead of having it refused.
    RpcClient client = client(server.port());
    CompletableFuture<StringValue> first =
        client.unaryCallAsync(TestService.BLOCK, StringValue.of("first"), CallOptions.DEFAULT);
    CompletableFuture<StringValue> second =
        client.unaryCallAsync(TestService.ECHO, StringValue.of("second"), CallOptions.DEFAULT);
    assertThat(first.get(10, TimeUnit.SECONDS).getValue()).isEqualTo("first"); // the gate is open now
    assertThat(second.get(10, TimeUnit.SECONDS).getValue()).isEqualTo("second");
    // A caller that sends its next call as soon as it has the response always finds the slot free.
    for (int i = 0; i < 2000; i++) {
      assertThat(client.unaryCall(TestService.ADD, new Object[] {i, 1})).isEqualTo(i + 1);
    }
  }

  @Test
  void clientPendingCallLimitGivesResourceExhausted() throws Exception {
    RpcServer server = startServer();
    RpcClient client = client(server.port(), b -> b.maxPendingCalls(1));
    CompletableFuture<StringValue> blocked =
        client.unaryCallAsync(TestService.BLOCK, StringValue.of("one"), CallOptions.DEFAULT);
    assertFails(() -> client.unaryCall(TestService.ECHO, StringValue.of("two")), Status.Code.RESOURCE_EXHAUSTED,
        "maxPendingCalls");
    service.gate.countDown();
    assertThat(blocked.get(10, TimeUnit.SECONDS).getValue()).isEqualTo("one");
  }

  @Test
  void killedConnectionFailsOnlyItsOwnPendingCallsPromptly() throws Exception {
    RpcServer server = startServer();
    try (FaultProxy proxy = new FaultProxy(server.port())) {
      RpcClient viaProxy = client(proxy.port());
      RpcClient direct = client(server.port());
      // An established connection (a connection cut before the server ever answered counts as a failed attempt).
      assertThat(viaProxy.unaryCall(TestService.ECHO, StringValue.of("up")).getValue()).isEqualTo("up");
      CompletableFuture<StringValue> doomed =
          viaProxy.unaryCallAsync(TestService.BLOCK, StringValue.of("doomed"), CallOptions.DEFAULT);
      CompletableFuture<StringValue> survivor =
          direct.unaryCallAsync(TestService.BLOCK, StringValue.of("survivor"), CallOptions.DEFAULT);
      assertThat(service.blockStarted.poll(10, TimeUnit.SECONDS)).isNotNull();
      assertThat(service.blockStarted.poll(10, TimeUnit.SECONDS)).isNotNull();
      long start = System.nanoTime();
      proxy.resetAll();
      StatusException e = failureOf(doomed);
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(5_000);
      assertThat(e.code()).isEqualTo(Status.Code.UNAVAILABLE);
      assertThat(e.status().description()).contains("closed").contains("test.Echo/block");
      assertThat(survivor).isNotDone();
      service.gate.countDown();
      assertThat(survivor.get(10, TimeUnit.SECONDS).getValue()).isEqualTo("survivor");
      // The proxied client reconnects on demand and works again.
      assertThat(viaProxy.unaryCall(TestService.ECHO, StringValue.of("again")).getValue()).isEqualTo("again");
    }
  }

  @Test
  void restartedServerIsReachedAgainBySameClient() throws Exception {
    RpcServer first = startServer();
    int port = first.port();
    RpcClient client = client(port, b -> b.reconnectBackoff(Duration.ofMillis(20), Duration.ofMillis(200)));
    assertThat(client.unaryCall(TestService.ECHO, StringValue.of("before")).getValue()).isEqualTo("before");
    first.shutdown();
    assertThat(first.awaitTermination(20, TimeUnit.SECONDS)).isTrue();
    assertFails(() -> client.unaryCall(TestService.ECHO, StringValue.of("down")), Status.Code.UNAVAILABLE);
    startServer(port, b -> b);
    // Bounded retry: each attempt ends at once (refused or answered); reconnection happens in between.
    String reply = null;
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (reply == null && System.nanoTime() < until) {
      try {
        reply = client.unaryCall(TestService.ECHO, StringValue.of("after restart")).getValue();
      } catch (StatusException e) {
        assertThat(e.code()).isEqualTo(Status.Code.UNAVAILABLE);
      }
    }
    assertThat(reply).isEqualTo("after restart");
  }

  @Test
  void shutdownNowEndsQueuedCallsAndReleasesTheirRequests() throws Exception {
    RpcServer server = startServer(b -> b.businessThreads(1).businessQueueSize(100));
    RpcClient client = client(server.port());
    List<CompletableFuture<StringValue>> calls = new java.util.ArrayList<>();
    for (int i = 0; i < 50; i++) { // one runs (blocked), 49 wait in the pool's queue holding their requests
      calls.add(client.unaryCallAsync(TestService.BLOCK, StringValue.of("q" + i), CallOptions.DEFAULT));
    }
    assertThat(service.blockStarted.poll(10, TimeUnit.SECONDS)).startsWith("q");
    server.shutdownNow();
    for (CompletableFuture<StringValue> f : calls) {
      StatusException se = failureOf(f);
      assertThat(se.code()).as(se.status().toString()).isEqualTo(Status.Code.UNAVAILABLE);
    }
    service.gate.countDown();
    assertThat(server.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    // The class's leak check (paranoid) fails if the 49 queued requests were not released.
  }

  @Test
  void gracefulShutdownFinishesInFlightCallsAndRefusesNewOnes() throws Exception {
    RpcServer server = startServer(b -> b.shutdownGracePeriod(Duration.ofSeconds(30)));
    RpcClient client = client(server.port());
    CompletableFuture<StringValue> inFlight =
        client.unaryCallAsync(TestService.BLOCK, StringValue.of("in flight"), CallOptions.DEFAULT);
    assertThat(service.blockStarted.poll(10, TimeUnit.SECONDS)).isEqualTo("in flight");
    server.shutdown();
    assertThat(server.isShutdown()).isTrue();
    // New calls are refused: the same client gets GOAWAY then finds no listener; new clients cannot connect.
    assertFails(() -> client(server.port()).unaryCall(TestService.ECHO, StringValue.of("new")),
        Status.Code.UNAVAILABLE);
    assertThat(inFlight).isNotDone();
    assertThat(server.isTerminated()).isFalse();
    service.gate.countDown();
    assertThat(inFlight.get(10, TimeUnit.SECONDS).getValue()).isEqualTo("in flight");
    assertThat(server.awaitTermination(20, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void garbageAndBadMagicCloseOnlyThatConnection() throws Exception {
    RpcServer server = startServer();
    RpcClient good = client(server.port());
    assertThat(good.unaryCall(TestService.ECHO, StringValue.of("1")).getValue()).isEqualTo("1");
    for (byte[] junk : new byte[][] {
        "GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII),
        {0, 0, 0, 28, 0x50, 0x52, 9, 1, 0, 0, 0, 0}, // right magic, unsupported version 9
        {0, 0, 0, 1, 0x50, 0x52, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    }) {
      try (Socket s = new Socket(InetAddress.getLoopbackAddress(), server.port())) {
        s.setSoTimeout(10_000);
        OutputStream out = s.getOutputStream();
        out.write(junk);
        out.flush();
        InputStream in = s.getInputStream();
        // The server's SETTINGS (its first frame, sent on accept), then nothing: the connection is closed.
        byte[] settings = in.readNBytes(Protocol.HEADER_SIZE + 3 * Protocol.SETTINGS_ENTRY_SIZE);
        assertThat(settings[Protocol.OFF_TYPE]).isEqualTo(Protocol.TYPE_SETTINGS);
        assertThat(in.read()).as("server closes the connection").isEqualTo(-1);
      }
      assertThat(good.unaryCall(TestService.ECHO, StringValue.of("still")).getValue()).isEqualTo("still");
    }
  }

  @Test
  void silentPeerIsDetectedByKeepaliveAndPendingCallsFailBeforeTheirDeadline() throws Exception {
    // A "server" that accepts and reads but never answers: a peer that vanished without closing.
    try (java.net.ServerSocket blackHole = new java.net.ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
      Thread reader = new Thread(() -> {
        try (Socket s = blackHole.accept(); InputStream in = s.getInputStream()) {
          byte[] buf = new byte[4096];
          while (in.read(buf) >= 0) {
            // swallow everything
          }
        } catch (java.io.IOException ignored) {
          // closed by the client or the test
        }
      }, "black-hole");
      reader.setDaemon(true);
      reader.start();
      RpcClient client = client(blackHole.getLocalPort(), b -> b.keepAliveTime(Duration.ofMillis(200)));
      long start = System.nanoTime();
      CompletableFuture<StringValue> f = client.unaryCallAsync(TestService.ECHO, StringValue.of("x"),
          CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(30)));
      StatusException e = failureOf(f);
      assertThat(e.code()).isEqualTo(Status.Code.UNAVAILABLE);
      assertThat(e.status().description()).contains("keepalive");
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(10_000);
    }
  }

  @Test
  void cancelledCallEndsAndLeavesConnectionUsable() throws Exception {
    RpcServer server = startServer();
    RpcClient client = client(server.port());
    CompletableFuture<StringValue> f =
        client.unaryCallAsync(TestService.BLOCK, StringValue.of("c"), CallOptions.DEFAULT);
    assertThat(service.blockStarted.poll(10, TimeUnit.SECONDS)).isEqualTo("c");
    assertThat(f.cancel(false)).isTrue();
    assertThat(client.pendingCalls()).isZero();
    assertThat(client.unaryCall(TestService.ECHO, StringValue.of("d")).getValue()).isEqualTo("d");
  }
}
