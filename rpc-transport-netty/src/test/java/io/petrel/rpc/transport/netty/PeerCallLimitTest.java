package io.petrel.rpc.transport.netty;

import static io.petrel.rpc.transport.netty.Protocol.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.entry;

import com.google.protobuf.StringValue;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.RpcServerBuilder;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.testing.FaultProxy;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The server announces its limits in a SETTINGS frame, and the client keeps its calls in flight on a connection
 * within the server's maxConcurrentCallsPerConnection: calls beyond it wait in the client (bounded by
 * maxPendingCalls) instead of being refused by the server.
 */
class PeerCallLimitTest extends TransportFixture {
  private static final long WAIT_SECONDS = 20;

  private static ClientConnection connection(RpcClient client) {
    ClientConnection c = transportOf(client).connection();
    assertThat(c).as("the client's connection").isNotNull();
    return c;
  }

  /** Runs {@code task} on the connection's event loop, the only thread that may look at its state. */
  private static <T> T onLoop(ClientConnection c, Callable<T> task) throws Exception {
    return c.channel().eventLoop().submit(task).get(WAIT_SECONDS, TimeUnit.SECONDS);
  }

  /**
   * Waits until the event loop sees {@code condition} (asked again after each of the loop's answers): the calls a
   * test has just made reach the connection through its write queue, a task or two later.
   */
  private static void awaitOnLoop(ClientConnection c, BooleanSupplier condition, String what) throws Exception {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
    while (!onLoop(c, condition::getAsBoolean)) {
      assertThat(System.nanoTime()).as("waiting for: " + what + "; " + c).isLessThan(until);
    }
  }

  private static StatusException statusOf(CompletableFuture<?> f) throws Exception {
    try {
      f.get(WAIT_SECONDS, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      assertThat(e.getCause()).isInstanceOf(StatusException.class);
      return (StatusException) e.getCause();
    }
    throw new AssertionError("the call succeeded");
  }

  private RpcServer holdingServer(HoldingService hold, int limit) throws Exception {
    return startServer(b -> {
      RpcServerBuilder with = b.addService(hold.definition());
      // The default limit is left as it is, so that the test covers what users get.
      return limit == RpcServerBuilder.DEFAULT_MAX_CONCURRENT_CALLS_PER_CONNECTION ? with
          : with.maxConcurrentCallsPerConnection(limit);
    });
  }

  private static CompletableFuture<StringValue> hold(RpcClient client, String value) {
    return client.unaryCallAsync(HoldingService.HOLD, StringValue.of(value), CallOptions.DEFAULT);
  }

  /** The regression test of the bug: 3000 async calls fired at once on one connection all succeed. */
  @ParameterizedTest(name = "server limit {0}")
  @ValueSource(ints = {RpcServerBuilder.DEFAULT_MAX_CONCURRENT_CALLS_PER_CONNECTION, 10})
  void threeThousandAsyncCallsOnOneConnectionAllSucceedAndTheServerNeverSeesMoreThanItsLimit(int limit)
      throws Exception {
    HoldingService hold = new HoldingService(limit);
    RpcServer server = holdingServer(hold, limit);
    // Not started: the first calls race the connection and the server's SETTINGS.
    RpcClient client = client(server.port());
    int n = 3000;
    List<CompletableFuture<StringValue>> calls = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      calls.add(hold(client, "c" + i));
    }
    // The server fills up to its limit and no further; the rest wait in the client, none has failed.
    assertThat(hold.started.tryAcquire(limit, WAIT_SECONDS, TimeUnit.SECONDS)).as("calls started").isTrue();
    ClientConnection conn = connection(client);
    awaitOnLoop(conn, () -> conn.waitingCount() == n - limit, (n - limit) + " calls waiting in the client");
    assertThat(onLoop(conn, conn::inFlightCount)).isEqualTo(limit);
    assertThat(onLoop(conn, conn::peerMaxCalls)).isEqualTo(limit);
    assertThat(calls).noneMatch(CompletableFuture::isDone);
    assertThat(client.pendingCalls()).isEqualTo(n);

    hold.releaseAll();
    for (int i = 0; i < n; i++) {
      assertThat(calls.get(i).get(WAIT_SECONDS, TimeUnit.SECONDS).getValue()).isEqualTo("held:c" + i);
    }
    assertThat(hold.overLimit).as("calls that found the server over its limit").isEmpty();
    assertThat(hold.maxRunning()).isEqualTo(limit);
    assertThat(hold.seen).hasSize(n); // each call reached the server once, none was refused there
    assertThat(client.pendingCalls()).isZero();
    assertThat(server.inFlightCalls()).isZero();
  }

  /** Each connection of an endpoint has its own queue and keeps within the limit on its own. */
  @Test
  void severalConnectionsPerEndpointEachKeepWithinTheLimit() throws Exception {
    HoldingService hold = new HoldingService(4);
    RpcServer server = holdingServer(hold, 4);
    RpcClient client = client(server.port(), b -> b.connectionsPerEndpoint(3)).start();
    List<CompletableFuture<StringValue>> calls = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      calls.add(hold(client, "m" + i));
    }
    assertThat(hold.started.tryAcquire(12, WAIT_SECONDS, TimeUnit.SECONDS)).isTrue(); // 3 connections x 4
    hold.releaseAll();
    for (int i = 0; i < calls.size(); i++) {
      assertThat(calls.get(i).get(WAIT_SECONDS, TimeUnit.SECONDS).getValue()).isEqualTo("held:m" + i);
    }
    assertThat(hold.overLimit).isEmpty();
    assertThat(hold.maxRunning()).isEqualTo(4);
  }

  @Test
  void callsBeyondMaxPendingCallsFailAtOnceWithResourceExhaustedNamingTheOption() throws Exception {
    HoldingService hold = new HoldingService(2);
    RpcServer server = holdingServer(hold, 2);
    RpcClient client = client(server.port(), b -> b.maxPendingCalls(10)).start();
    List<CompletableFuture<StringValue>> calls = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      calls.add(hold(client, "p" + i));
    }
    assertThat(hold.started.tryAcquire(2, WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
    CompletableFuture<StringValue> over = hold(client, "over");
    assertThat(over).as("failed before unaryCallAsync returned").isCompletedExceptionally();
    StatusException e = statusOf(over);
    assertThat(e.code()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(e.status().description()).contains("maxPendingCalls").contains("10 calls pending");
    assertThat(calls).noneMatch(CompletableFuture::isDone); // 2 on the server, 8 waiting: none failed
    hold.releaseAll();
    for (int i = 0; i < calls.size(); i++) {
      assertThat(calls.get(i).get(WAIT_SECONDS, TimeUnit.SECONDS).getValue()).isEqualTo("held:p" + i);
    }
    assertThat(hold.seen).doesNotContain("over");
    assertThat(hold.overLimit).isEmpty();
  }

  @Test
  void aQueuedCallWhoseDeadlinePassesEndsOnTimeAndNeverReachesTheServer() throws Exception {
    HoldingService hold = new HoldingService(1);
    RpcServer server = holdingServer(hold, 1);
    RpcClient client = client(server.port()).start();
    CompletableFuture<StringValue> first = hold(client, "first");
    assertThat(hold.started.tryAcquire(1, WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
    // Under 1 s: a timer of its own; from 1 s: the connection's 10 ms sweep. Both must end on time.
    long[] timeouts = {300, 1100};
    long[] late = new long[timeouts.length];
    List<CompletableFuture<StringValue>> queued = new ArrayList<>();
    for (int i = 0; i < timeouts.length; i++) {
      int k = i;
      long start = System.nanoTime();
      CompletableFuture<StringValue> f = client.unaryCallAsync(HoldingService.HOLD, StringValue.of("late" + i),
          CallOptions.DEFAULT.withTimeout(Duration.ofMillis(timeouts[i])));
      f.whenComplete((r, t) -> late[k] = System.nanoTime() - start - TimeUnit.MILLISECONDS.toNanos(timeouts[k]));
      queued.add(f);
    }
    for (int i = 0; i < timeouts.length; i++) {
      StatusException e = statusOf(queued.get(i));
      assertThat(e.code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
      assertThat(e.status().description()).contains("not sent").contains("maxConcurrentCallsPerConnection");
      assertThat(late[i]).as("lateness of the %d ms deadline (ns)", timeouts[i]).isBetween(0L,
          TimeUnit.MILLISECONDS.toNanos(100));
    }
    System.out.printf("queued calls ended %.1f ms and %.1f ms after their deadlines%n", late[0] / 1e6,
        late[1] / 1e6);
    ClientConnection conn = connection(client);
    assertThat(onLoop(conn, conn::waitingCount)).isZero();
    hold.releaseAll();
    assertThat(first.get(WAIT_SECONDS, TimeUnit.SECONDS).getValue()).isEqualTo("held:first");
    assertThat(hold(client, "after").get(WAIT_SECONDS, TimeUnit.SECONDS).getValue()).isEqualTo("held:after");
    assertThat(hold.seen).containsExactly("first", "after");
    assertThat(client.pendingCalls()).isZero();
  }

  @Test
  void aQueuedCallThatIsCancelledLeavesTheQueueAtOnceAndNeverReachesTheServer() throws Exception {
    HoldingService hold = new HoldingService(1);
    RpcServer server = holdingServer(hold, 1);
    RpcClient client = client(server.port()).start();
    CompletableFuture<StringValue> first = hold(client, "first");
    assertThat(hold.started.tryAcquire(1, WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
    CompletableFuture<StringValue> cancelled = hold(client, "cancelled");
    CompletableFuture<StringValue> kept = hold(client, "kept");
    ClientConnection conn = connection(client);
    awaitOnLoop(conn, () -> conn.waitingCount() == 2, "two calls waiting");
    assertThat(cancelled.cancel(true)).isTrue();
    assertThat(cancelled.isCancelled()).isTrue();
    assertThat(client.pendingCalls()).isEqualTo(2);
    // The cancel handed the connection a task; one submitted after it finds the call gone, its request freed.
    assertThat(onLoop(conn, conn::waitingCount)).isEqualTo(1);
    hold.releaseAll();
    assertThat(first.get(WAIT_SECONDS, TimeUnit.SECONDS).getValue()).isEqualTo("held:first");
    assertThat(kept.get(WAIT_SECONDS, TimeUnit.SECONDS).getValue()).isEqualTo("held:kept");
    assertThat(hold.seen).containsExactly("first", "kept");
    assertThat(client.pendingCalls()).isZero();
  }

  /**
   * A call in flight that ends by its deadline (or is cancelled) is cancelled on the server, which still counts
   * it until its handler has finished and the (late) response is written: the client keeps its place until that
   * response arrives, so the next call is not refused for want of it.
   */
  @Test
  void aCallInFlightThatTimesOutKeepsItsPlaceUntilTheServerAnswersIt() throws Exception {
    HoldingService hold = new HoldingService(1);
    RpcServer server = holdingServer(hold, 1);
    RpcClient client = client(server.port()).start();
    CompletableFuture<StringValue> expires = client.unaryCallAsync(HoldingService.HOLD, StringValue.of("expires"),
        CallOptions.DEFAULT.withTimeout(Duration.ofMillis(300)));
    assertThat(hold.started.tryAcquire(1, WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
    CompletableFuture<StringValue> next = hold(client, "next");
    assertThat(statusOf(expires).code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    ClientConnection conn = connection(client);
    awaitOnLoop(conn, () -> conn.waitingCount() == 1, "the next call waiting");
    assertThat(onLoop(conn, conn::inFlightCount)).as("the expired call still counted").isEqualTo(1);
    assertThat(client.pendingCalls()).isEqualTo(1); // the expired call has ended for the caller
    hold.releaseAll(); // the server answers the expired call (dropped by the client); that frees the place
    assertThat(next.get(WAIT_SECONDS, TimeUnit.SECONDS).getValue()).isEqualTo("held:next");
    assertThat(hold.seen).containsExactly("expires", "next");
    assertThat(hold.overLimit).isEmpty();
    assertThat(onLoop(conn, conn::inFlightCount)).isZero();
  }

  /**
   * The server counts a oneway against its limit while it runs, and drops one that finds the connection full:
   * so a oneway waits in the client for a free place too.
   */
  @Test
  void aOnewayWaitsForAFreePlaceInsteadOfBeingDroppedByTheServer() throws Exception {
    HoldingService hold = new HoldingService(1);
    RpcServer server = holdingServer(hold, 1);
    RpcClient client = client(server.port()).start();
    CompletableFuture<StringValue> first = hold(client, "first");
    assertThat(hold.started.tryAcquire(1, WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
    CompletableFuture<Void> oneway = client.oneway(TestService.LOG, StringValue.of("queued oneway"),
        CallOptions.DEFAULT);
    ClientConnection conn = connection(client);
    awaitOnLoop(conn, () -> conn.waitingCount() == 1, "the oneway waiting");
    assertThat(oneway).isNotDone(); // a oneway's future completes when it is written
    hold.releaseAll();
    assertThat(first.get(WAIT_SECONDS, TimeUnit.SECONDS).getValue()).isEqualTo("held:first");
    oneway.get(WAIT_SECONDS, TimeUnit.SECONDS);
    assertThat(service.logged.poll(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("queued oneway");
  }

  /** Queued calls of a connection that gets GOAWAY or closes go to another connection; they are not failed. */
  @Test
  void queuedCallsOfAConnectionThatGoesAwayOrClosesAreSentOnAnotherOne() throws Exception {
    HoldingService hold = new HoldingService(1);
    RpcServer server = holdingServer(hold, 1);
    try (FaultProxy proxy = new FaultProxy(server.port())) {
      RpcClient client = client(proxy.port()).start();
      CompletableFuture<StringValue> first = hold(client, "first");
      assertThat(hold.started.tryAcquire(1, WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
      CompletableFuture<StringValue> second = hold(client, "second");
      ClientConnection conn = connection(client);
      awaitOnLoop(conn, () -> conn.waitingCount() == 1, "the second call waiting");
      // The server's first frame must have reached the client through the proxy: a connection closed before the
      // server answered anything counts as a failed attempt (backoff, calls fail at once), which is not this test.
      awaitOnLoop(conn, conn::answered, "the server's SETTINGS received");
      proxy.resetAll(); // the connection dies: the call in flight fails, the unsent one moves
      StatusException e = statusOf(first);
      assertThat(e.code()).isEqualTo(Status.Code.UNAVAILABLE);
      assertThat(hold.started.tryAcquire(1, WAIT_SECONDS, TimeUnit.SECONDS)).as("second call on a new connection")
          .isTrue();
      assertThat(proxy.acceptedConnections()).isEqualTo(2);
      hold.releaseAll();
      assertThat(second.get(WAIT_SECONDS, TimeUnit.SECONDS).getValue()).isEqualTo("held:second");
      assertThat(hold.seen).containsExactly("first", "second");
    }
    // GOAWAY (here: maxConnectionAge) moves the waiting calls at once, while the call in flight finishes there.
    HoldingService aging = new HoldingService(1);
    RpcServer old = startServer(b -> b.addService(aging.definition()).maxConcurrentCallsPerConnection(1)
        .maxConnectionAge(Duration.ofMillis(500)));
    RpcClient client = client(old.port()).start();
    CompletableFuture<StringValue> first = hold(client, "first");
    assertThat(aging.started.tryAcquire(1, WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
    CompletableFuture<StringValue> second = hold(client, "second");
    assertThat(aging.started.tryAcquire(1, WAIT_SECONDS, TimeUnit.SECONDS)).as("second call after the GOAWAY")
        .isTrue();
    assertThat(first).isNotDone();
    aging.releaseAll();
    assertThat(first.get(WAIT_SECONDS, TimeUnit.SECONDS).getValue()).isEqualTo("held:first");
    assertThat(second.get(WAIT_SECONDS, TimeUnit.SECONDS).getValue()).isEqualTo("held:second");
    assertThat(aging.overLimit).isEmpty();
  }

  @Test
  void theServersFirstFrameIsSettingsWithItsLimits() throws Exception {
    RpcServer server = startServer(b -> b.maxConcurrentCallsPerConnection(7).maxFrameSize(100_000)
        .maxMetadataSize(2048));
    try (RawPeer p = new RawPeer(server.port())) {
      RawPeer.RawFrame first = p.readRaw(); // before the peer has sent anything
      assertThat(first.type()).isEqualTo(TYPE_SETTINGS);
      assertThat(first.requestId()).isZero();
      assertThat(first.methodId()).isZero();
      assertThat(first.status()).isZero();
      assertThat(first.body()).hasSize(3 * SETTINGS_ENTRY_SIZE);
      assertThat(first.settings()).containsExactly(entry(SETTING_MAX_CONCURRENT_CALLS, 7L),
          entry(SETTING_MAX_FRAME_SIZE, 100_000L), entry(SETTING_MAX_METADATA_SIZE, 2048L));
      // A SETTINGS from a client (reserved for a later version) is ignored; the connection goes on.
      p.send(RawPeer.settingsFrame(SETTING_MAX_CONCURRENT_CALLS, 5, 0x7777, 1));
      p.send(RawPeer.control(TYPE_PING, 5));
      RawPeer.RawFrame pong = p.readRaw();
      assertThat(pong.type()).isEqualTo(TYPE_PONG);
      assertThat(pong.requestId()).isEqualTo(5);
    }
  }

  @Test
  void aRequestOverTheServersAnnouncedFrameSizeFailsBeforeItIsSent() throws Exception {
    RpcServer server = startServer(b -> b.maxFrameSize(1024));
    RpcClient client = client(server.port());
    assertThat(client.unaryCall(TestService.ECHO, StringValue.of("warm")).getValue()).isEqualTo("warm");
    CompletableFuture<byte[]> big = client.unaryCallAsync(TestService.BYTES, new byte[4096], CallOptions.DEFAULT);
    StatusException e = statusOf(big);
    assertThat(e.code()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(e.status().description()).contains("the server's maxFrameSize 1024").contains("SETTINGS")
        .contains("not sent");
    assertThat(client.unaryCall(TestService.BYTES, new byte[100])).hasSize(100);
  }

  /**
   * The calls of a new connection wait for the server's first frame, its SETTINGS: they are checked against the
   * limits it announces there too, and one over them fails before it is sent, as on a connection that has been up
   * for a while; the server sees nothing to refuse.
   */
  @Test
  void theCallsOfANewConnectionAreCheckedAgainstTheServersAnnouncedLimitsToo() throws Exception {
    RpcServer server = startServer(b -> b.maxFrameSize(1024));
    RpcServer small = startServer(b -> b.maxMetadataSize(2048));
    try (LogCapture serverLog = new LogCapture(RpcServer.class)) {
      RpcClient client = client(server.port());
      StatusException big = statusOf(client.unaryCallAsync(TestService.BYTES, new byte[4096], CallOptions.DEFAULT));
      assertThat(big.code()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
      assertThat(big.status().description()).contains("the server's maxFrameSize 1024", "SETTINGS", "not sent");
      RpcClient other = client(small.port());
      StatusException metadata = statusOf(other.unaryCallAsync(TestService.ECHO, StringValue.of("m"),
          CallOptions.DEFAULT.withMetadata(io.petrel.rpc.Metadata.of("big", "x".repeat(3000)))));
      assertThat(metadata.code()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
      assertThat(metadata.status().description()).contains("the server's maxMetadataSize 2048", "not sent");
      assertThat(other.unaryCall(TestService.ECHO, StringValue.of("fits")).getValue()).isEqualTo("fits");
      assertThat(serverLog.lines(ch.qos.logback.classic.Level.WARN, "")).as("the server refused nothing").isEmpty();
    }
  }

  /**
   * A server that sends no SETTINGS (an older one): its first frame answers the client's PING, and from then on
   * the client applies no limit, as before. The fake server answers nothing until all 50 calls are in flight.
   */
  @Test
  void aClientAgainstAServerThatNeverSendsSettingsWorksAsBefore() throws Exception {
    int n = 50;
    CountDownLatch testDone = new CountDownLatch(1);
    try (ServerSocket ss = new ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
      CompletableFuture<Integer> fake = CompletableFuture.supplyAsync(() -> {
        try (RawPeer peer = new RawPeer(ss.accept())) {
          List<RawPeer.RawFrame> requests = new ArrayList<>();
          while (requests.size() < n) {
            RawPeer.RawFrame f = peer.readRaw();
            if (f.type() == TYPE_PING) {
              peer.send(RawPeer.control(TYPE_PONG, f.requestId()));
            } else if (f.type() == TYPE_REQUEST) {
              requests.add(f);
            }
          }
          for (RawPeer.RawFrame r : requests) {
            peer.send(RawPeer.response(r.requestId(), r.body()));
          }
          testDone.await(WAIT_SECONDS, TimeUnit.SECONDS);
          return requests.size();
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      RpcClient client = client(ss.getLocalPort(), b -> b.keepAliveTime(Duration.ZERO));
      List<CompletableFuture<StringValue>> calls = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        calls.add(client.unaryCallAsync(TestService.ECHO, StringValue.of("old" + i), CallOptions.DEFAULT));
      }
      for (int i = 0; i < n; i++) {
        assertThat(calls.get(i).get(WAIT_SECONDS, TimeUnit.SECONDS).getValue()).isEqualTo("old" + i);
      }
      assertThat(onLoop(connection(client), connection(client)::peerMaxCalls)).isEqualTo(Integer.MAX_VALUE);
      testDone.countDown();
      assertThat(fake.get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo(n);
    }
  }

  /**
   * A fake server that checks exactly how many calls the client has in flight whenever it is about to answer
   * one: it sends a PING and reads up to the client's PONG. The client answers a PING at once, so every request it
   * wrote before reading the PING, which follows every response sent so far, is read before the PONG.
   */
  private static final class CountingFakeServer {
    final RawPeer peer;
    final Deque<RawPeer.RawFrame> outstanding = new ArrayDeque<>();
    final List<String> violations = new CopyOnWriteArrayList<>();
    int received;
    private int nextPing = 1000;

    CountingFakeServer(RawPeer peer) {
      this.peer = peer;
    }

    /** Reads one frame: a request is counted, a PING answered. Returns the frame. */
    RawPeer.RawFrame readOne() throws Exception {
      RawPeer.RawFrame f = peer.readRaw();
      if (f.type() == TYPE_REQUEST) {
        outstanding.add(f);
        received++;
      } else if (f.type() == TYPE_PING) {
        peer.send(RawPeer.control(TYPE_PONG, f.requestId()));
      }
      return f;
    }

    /** After the barrier, the client's calls in flight are exactly {@link #outstanding}: at most {@code allowed}. */
    void barrier(int allowed, String when) throws Exception {
      int id = nextPing++;
      peer.send(RawPeer.control(TYPE_PING, id));
      RawPeer.RawFrame f;
      do {
        f = readOne();
      } while (f.type() != TYPE_PONG || f.requestId() != id);
      if (outstanding.size() > allowed) {
        violations.add(when + ": " + outstanding.size() + " calls in flight, allowed " + allowed);
      }
    }

    void answerOldest() throws Exception {
      RawPeer.RawFrame r = outstanding.poll();
      peer.send(RawPeer.response(r.requestId(), r.body()));
    }
  }

  /**
   * The server's first SETTINGS comes only once the client's PING has arrived and carries a setting the client
   * does not know; later SETTINGS raise the limit, then lower it while calls are in flight: the latest applies, to
   * new calls only.
   */
  @Test
  void settingsWithAnUnknownEntryAndLaterChangesOfTheLimitAreHonoured() throws Exception {
    int n = 40;
    CountDownLatch testDone = new CountDownLatch(1);
    try (ServerSocket ss = new ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
      CompletableFuture<List<String>> fake = CompletableFuture.supplyAsync(() -> {
        try (RawPeer peer = new RawPeer(ss.accept())) {
          CountingFakeServer f = new CountingFakeServer(peer);
          // Nothing from this side until the client's first PING has arrived (no call comes before the server's
          // first frame: aServerThatNeverSendsItsFirstFrameGetsNoCall).
          RawPeer.RawFrame ping = peer.readRaw();
          assertThat(ping.type()).as("the client's first frame").isEqualTo(TYPE_PING);
          peer.send(RawPeer.settingsFrame(SETTING_MAX_CONCURRENT_CALLS, 1, 0x7777, 99));
          peer.send(RawPeer.control(TYPE_PONG, ping.requestId()));
          f.readOne();
          f.barrier(1, "after the first SETTINGS"); // one call, and SETTINGS(1) allows no more
          peer.send(RawPeer.settingsFrame(SETTING_MAX_CONCURRENT_CALLS, 3)); // raised: two more may come
          int limit = 3;
          int carried = 0; // calls in flight when the limit was lowered, not yet answered
          int answered = 0;
          while (answered < n) {
            if (f.outstanding.size() < limit && f.received < n) {
              f.readOne();
              continue;
            }
            f.barrier(Math.max(limit, carried), "after " + answered + " answers, limit " + limit);
            if (answered == 20) {
              peer.send(RawPeer.settingsFrame(SETTING_MAX_CONCURRENT_CALLS, 1)); // lowered with 3 in flight
              limit = 1;
              carried = f.outstanding.size();
            }
            f.answerOldest();
            answered++;
            carried = Math.max(0, carried - 1);
          }
          testDone.await(WAIT_SECONDS, TimeUnit.SECONDS);
          return f.violations;
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      RpcClient client = client(ss.getLocalPort(), b -> b.keepAliveTime(Duration.ZERO));
      List<CompletableFuture<StringValue>> calls = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        calls.add(client.unaryCallAsync(TestService.ECHO, StringValue.of("s" + i), CallOptions.DEFAULT));
      }
      for (int i = 0; i < n; i++) {
        assertThat(calls.get(i).get(WAIT_SECONDS, TimeUnit.SECONDS).getValue()).isEqualTo("s" + i);
      }
      assertThat(onLoop(connection(client), connection(client)::peerMaxCalls)).isEqualTo(1);
      testDone.countDown();
      assertThat(fake.get(WAIT_SECONDS, TimeUnit.SECONDS)).as("calls over the announced limit").isEmpty();
    }
  }

  /**
   * A client writes no call on a new connection before the server's first frame has arrived (docs/protocol.md,
   * "Before the first frame"): to a peer that accepts and never answers it sends its PING and nothing else, and its
   * calls end at their deadline, not sent. (So a connection that closes before its first frame carried no call,
   * and its calls are sent again: ReconnectTest.aConnectionClosedBeforeTheServersFirstFrameCarriedNoCall.)
   */
  /** A peer that accepts one connection on {@code ss} and never answers: the frame types it read, once closed. */
  private static CompletableFuture<List<Integer>> silentPeer(ServerSocket ss) {
    return CompletableFuture.supplyAsync(() -> {
      try (RawPeer peer = new RawPeer(ss.accept())) {
        return peer.readUntilClosed();
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
  }

  @Test
  void aServerThatNeverSendsItsFirstFrameGetsNoCall() throws Exception {
    try (ServerSocket ss = new ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
      CompletableFuture<List<Integer>> fake = silentPeer(ss);
      RpcClient client = client(ss.getLocalPort(), b -> b.keepAliveTime(Duration.ZERO));
      List<CompletableFuture<StringValue>> calls = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        calls.add(client.unaryCallAsync(TestService.ECHO, StringValue.of("unanswered " + i),
            CallOptions.DEFAULT.withTimeout(Duration.ofMillis(500))));
      }
      for (CompletableFuture<StringValue> call : calls) {
        StatusException e = statusOf(call);
        assertThat(e.code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
        assertThat(e.status().description()).contains("not sent");
      }
      client.close();
      assertThat(fake.get(WAIT_SECONDS, TimeUnit.SECONDS)).as("the frames the server received")
          .containsOnly((int) TYPE_PING);
    }
  }

  /**
   * A server that accepts and then says nothing (a frozen process: its kernel still accepts connections) has the
   * connect timeout to send its first frame: then the connection closes as a failed connect attempt, the calls
   * waiting on it fail with UNAVAILABLE saying so (before their deadline), and the endpoint is not READY meanwhile
   * (a trial saw a frozen server's endpoint counted ready, its calls held to their deadlines). Beside a live server,
   * calls go there.
   */
  @Test
  void aServerSilentForTheConnectTimeoutIsAFailedConnect() throws Exception {
    try (ServerSocket ss = new ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
      CompletableFuture<List<Integer>> fake = silentPeer(ss);
      RpcClient client = client(ss.getLocalPort(), b -> b.keepAliveTime(Duration.ZERO)
          .connectTimeout(Duration.ofMillis(300)));
      long start = System.nanoTime();
      StatusException e = statusOf(client.unaryCallAsync(TestService.ECHO, StringValue.of("silent"),
          CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(5))));
      assertThat(e.code()).isEqualTo(Status.Code.UNAVAILABLE);
      assertThat(e.status().description()).contains("the server sent nothing within the connect timeout of 300 ms",
          "(RpcClient.builder().connectTimeout)");
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).as("ms to fail").isLessThan(3_000);
      assertThat(fake.get(WAIT_SECONDS, TimeUnit.SECONDS)).as("the frames the server received")
          .containsOnly((int) TYPE_PING);
      client.close();
    }
  }

  /**
   * {@code start()} counts an endpoint connected once its server answered, not at TCP connect: against a frozen
   * server it fails after the connect timeout saying so (as Dubbo's check=true would), and against a live one it
   * returns.
   */
  @Test
  void startFailsAgainstAServerThatAcceptsAndNeverAnswers() throws Exception {
    try (ServerSocket ss = new ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
      CompletableFuture<List<Integer>> fake = silentPeer(ss);
      RpcClient client = client(ss.getLocalPort(), b -> b.keepAliveTime(Duration.ZERO)
          .connectTimeout(Duration.ofMillis(300)));
      long start = System.nanoTime();
      assertThatThrownBy(client::start).isInstanceOfSatisfying(StatusException.class, e -> {
        assertThat(e.code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(e.status().description()).contains("cannot connect to 127.0.0.1:" + ss.getLocalPort(),
            "the server sent nothing within the connect timeout of 300 ms");
      });
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).as("ms to fail").isLessThan(3_000);
      assertThat(fake.get(WAIT_SECONDS, TimeUnit.SECONDS)).containsOnly((int) TYPE_PING);
      client.close();
    }
    RpcServer live = startServer(b -> b);
    RpcClient ok = client(live.port(), b -> b.connectTimeout(Duration.ofMillis(300)));
    ok.start();
    assertThat(ok.unaryCall(TestService.ECHO, StringValue.of("up")).getValue()).isEqualTo("up");
  }

  @Test
  void aSettingsFrameWhoseBodyIsNotWholeEntriesClosesTheConnection() throws Exception {
    try (ServerSocket ss = new ServerSocket(0, 5, InetAddress.getLoopbackAddress());
        LogCapture log = new LogCapture(NettyRpcClient.class)) {
      CompletableFuture<Void> fake = CompletableFuture.runAsync(() -> {
        try (RawPeer peer = new RawPeer(ss.accept())) {
          peer.send(RawPeer.frame(TYPE_SETTINGS, 0, new byte[5]));
          peer.readUntilClosed();
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      RpcClient client = client(ss.getLocalPort(), b -> b.keepAliveTime(Duration.ZERO));
      StatusException e = statusOf(client.unaryCallAsync(TestService.ECHO, StringValue.of("x"),
          CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(2))));
      // Never written there (nothing is before the server's first frame is understood): sent again on a new
      // connection, which this fake accepts and never answers.
      assertThat(e.code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
      assertThat(e.status().description()).contains("not sent");
      assertThat(log.await(ch.qos.logback.classic.Level.WARN, Duration.ofSeconds(WAIT_SECONDS),
          "protocol violation", "SETTINGS body of 5 bytes")).isNotNull();
      fake.get(WAIT_SECONDS, TimeUnit.SECONDS);
    }
  }

  private static NettyRpcClient transportOf(io.petrel.rpc.RpcClient client) {
    return (NettyRpcClient) io.petrel.rpc.internal.ClientChannel.transportOf(client);
  }
}
