package io.petrel.rpc.transport.netty;

import static io.petrel.rpc.testing.CallFailures.assertFails;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.StringValue;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.Status;
import java.io.IOException;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * How a client comes back to a server that was down (issue 20): calls made during the reconnect backoff wait for
 * the next attempt, which the client makes by itself when the backoff ends; a failed {@code start()} leaves a
 * client that recovers the same way.
 */
class ReconnectTest extends TransportFixture {
  private static final CallOptions THREE_SECONDS = CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(3));

  /**
   * A free loopback port below the kernel's ephemeral range where it can be read, else any free port. The tests
   * here leave their port with no listener while the client keeps connecting to it; a port from the ephemeral
   * range can then be given to one of those connections as its own local port, and it connects to itself (TCP's
   * simultaneous open), which holds the port: the server's next start failed with "Address already in use" once.
   */
  private static int freePort() throws IOException {
    int low = 0;
    Path range = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
    if (Files.exists(range)) {
      // Line by line: Files.readString sees a /proc file's size as 0 and returned only its first byte ("3"), so
      // the port came from the ephemeral range after all.
      low = Integer.parseInt(Files.readAllLines(range).get(0).trim().split("\\s+")[0]);
      assertThat(low).as("the first ephemeral port, from %s", range).isGreaterThan(1024);
    }
    for (int i = 0; low > 11_000 && i < 100; i++) {
      int port = 10_000 + ThreadLocalRandom.current().nextInt(low - 10_000);
      try (ServerSocket s = new ServerSocket()) {
        s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1);
        return port;
      } catch (IOException taken) {
        // try another
      }
    }
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  private static String echo(RpcClient client, String text, CallOptions options) {
    return client.unaryCall(TestService.ECHO, StringValue.of(text), options).getValue();
  }

  /**
   * The loop of the issue: a server restarted on a fixed port is called right after each start with a 3 s
   * deadline. While it is down, its port is held by a socket that accepts and hangs up at once (a server that is
   * not really there), which records when each connection attempt arrives: the attempts follow the backoff
   * (100 ms doubling, +-20 %), neither faster nor waiting for a call to come after it.
   */
  @Test
  void callsRightAfterEachRestartSucceedAndAttemptsWhileTheServerIsDownFollowTheBackoff() throws Exception {
    int port = freePort();
    RpcServer server = startServer(port, b -> b);
    RpcClient client = client(port);
    for (int round = 0; round < 15; round++) {
      assertThat(echo(client, "up " + round, THREE_SECONDS)).isEqualTo("up " + round);
      server.shutdownNow();
      assertThat(server.awaitTermination(10, TimeUnit.SECONDS)).isTrue();

      List<Long> attempts = new CopyOnWriteArrayList<>();
      CountDownLatch threeAttempts = new CountDownLatch(3);
      AtomicBoolean stop = new AtomicBoolean();
      Thread caller;
      Thread acceptor;
      try (ServerSocket down = new ServerSocket()) {
        down.setReuseAddress(true);
        down.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 50);
        acceptor = new Thread(() -> {
          try {
            while (true) {
              Socket s = down.accept();
              attempts.add(System.nanoTime());
              threeAttempts.countDown();
              s.close();
            }
          } catch (IOException closed) {
            // the round's down phase is over
          }
        }, "down-" + round);
        acceptor.setDaemon(true);
        acceptor.start();
        caller = new Thread(() -> {
          while (!stop.get()) {
            try {
              echo(client, "down", THREE_SECONDS);
            } catch (io.petrel.rpc.StatusException e) {
              // expected while the server is down (the call that waits over the restart may succeed)
            }
          }
        }, "caller-" + round);
        caller.start();
        assertThat(threeAttempts.await(10, TimeUnit.SECONDS)).as("three attempts while down: " + client).isTrue();
      }
      // The listening socket is closed for good only once the thread blocked in its accept has let go of it (and
      // of a connection it may have just accepted): until then the port is still held, and the restart below
      // could find it in use.
      acceptor.join(10_000);
      assertThat(acceptor.isAlive()).as("the down phase's acceptor ended").isFalse();
      long[] at = attempts.stream().mapToLong(Long::longValue).toArray();
      for (int i = 1; i < 3; i++) {
        long backoffMs = 100L << (i - 1);
        long gapMs = TimeUnit.NANOSECONDS.toMillis(at[i] - at[i - 1]);
        assertThat(gapMs).as("round %d: gap before attempt %d (backoff %d ms +-20%%)", round, i, backoffMs)
            .isGreaterThanOrEqualTo(backoffMs * 3 / 4)
            .isLessThan(backoffMs * 6 / 5 + 1000);
      }
      server = startServer(port, b -> b);
      assertThat(echo(client, "right after start " + round, THREE_SECONDS)).isEqualTo("right after start " + round);
      stop.set(true);
      caller.join(10_000);
      assertThat(caller.isAlive()).isFalse();
    }
  }

  /**
   * A server stopping while a client connects: the client's connect completed into the backlog of the server's
   * listening socket, which then closed and reset it (a real server's shutdown does this to connections not yet
   * accepted). The server never answered that connection, so it ran nothing there: the call waiting on it is sent
   * again, non-idempotent as it is, and succeeds once a server is back on the port. (When a client still wrote one
   * call before the server's first frame, that call failed "closed while test.Echo/echo was in flight; the server
   * may or may not have run it": once in CI, in the restart loop above.)
   */
  @Test
  void aConnectionClosedBeforeTheServersFirstFrameCarriedNoCall() throws Exception {
    int port = freePort();
    RpcClient client;
    java.util.concurrent.CompletableFuture<StringValue> call;
    try (ServerSocket backlog = new ServerSocket()) {
      backlog.setReuseAddress(true);
      backlog.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 50); // never accepts
      // A first backoff of 1 s: the server below is up before the client's next attempt, however slow the machine.
      client = client(port, b -> b.reconnectBackoff(Duration.ofSeconds(1), Duration.ofSeconds(10)));
      call = client.unaryCallAsync(TestService.ECHO, StringValue.of("after the reset"),
          CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(10)));
      NettyRpcClient transport = (NettyRpcClient) io.petrel.rpc.internal.ClientChannel.transportOf(client);
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (!waitsOnAConnection(transport)) {
        assertThat(System.nanoTime()).as("the call waiting on a connection: " + transport).isLessThan(until);
      }
    } // closed: the kernel resets the connection it completed for the client
    RpcServer server = startServer(port, b -> b);
    assertThat(call.get(10, TimeUnit.SECONDS).getValue()).isEqualTo("after the reset");
    assertThat(server.port()).isEqualTo(port);
  }

  // Asked on the connection's event loop (each answer is a round trip through it, so this is no busy spin).
  private static boolean waitsOnAConnection(NettyRpcClient transport) throws Exception {
    ClientConnection c = transport.connection();
    if (c == null) {
      java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1)); // still connecting
      return false;
    }
    return c.channel().isActive()
        && c.channel().eventLoop().submit(() -> c.waitingCount() + c.inFlightCount() == 1).get(10, TimeUnit.SECONDS);
  }

  @Test
  void aClientWhoseStartFailedReachesTheServerOnceItComesUp() throws Exception {
    int port = freePort();
    // A first backoff of 1 s, so that the calls below are made during it whatever the machine's speed.
    RpcClient client = client(port, b -> b.reconnectBackoff(Duration.ofSeconds(1), Duration.ofSeconds(10))
        .maxPendingCalls(2));
    assertFails(client::start, Status.Code.UNAVAILABLE, "cannot connect to 127.0.0.1:" + port);
    assertThat(client.isShutdown()).isFalse();

    // During the backoff: a fail-fast call fails at once, naming the cause and the next attempt; so does a call
    // whose deadline comes before that attempt.
    assertFails(() -> echo(client, "x", CallOptions.DEFAULT.withFailFast(true)), Status.Code.UNAVAILABLE,
        "cannot connect to 127.0.0.1:" + port, "next attempt in", "reconnectBackoff");
    long before = System.nanoTime();
    assertFails(() -> echo(client, "x", CallOptions.DEFAULT.withTimeout(Duration.ofMillis(300))),
        Status.Code.UNAVAILABLE, "next attempt in", "after the call's deadline");
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - before)).as("failed at once, ms")
        .isLessThan(300);

    // Calls waiting for the next attempt count against maxPendingCalls like any other.
    java.util.concurrent.CompletableFuture<StringValue> first =
        client.unaryCallAsync(TestService.ECHO, StringValue.of("waited 1"), THREE_SECONDS);
    java.util.concurrent.CompletableFuture<StringValue> second =
        client.unaryCallAsync(TestService.ECHO, StringValue.of("waited 2"), THREE_SECONDS);
    assertFails(() -> echo(client, "third", THREE_SECONDS), Status.Code.RESOURCE_EXHAUSTED, "maxPendingCalls");
    assertThat(first).isNotDone();

    startServer(port, b -> b);
    // These calls wait for the attempt at the end of the backoff, which finds the server.
    assertThat(first.get(10, TimeUnit.SECONDS).getValue()).isEqualTo("waited 1");
    assertThat(second.get(10, TimeUnit.SECONDS).getValue()).isEqualTo("waited 2");
    assertThat(echo(client, "recovered", THREE_SECONDS)).isEqualTo("recovered");
    assertThat(echo(client, "again", THREE_SECONDS)).isEqualTo("again");
  }

  @Test
  void aClientDroppedAfterAFailedStartReleasesItsShareOfTheEventLoops() throws Exception {
    int port = freePort();
    IoSupport io = IoSupport.select(IoMode.AUTO);
    int users = SharedEventLoops.users(io.name);
    ReferenceQueue<RpcClient> collected = new ReferenceQueue<>();
    WeakReference<RpcClient> ref = failedStart(port, collected);
    assertThat(SharedEventLoops.users(io.name)).isEqualTo(users + 1);
    // Nothing holds the client once its backoff timer (100 ms) has fired with no call waiting: it is collected,
    // and its share of the shared event loops released.
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (SharedEventLoops.users(io.name) != users && System.nanoTime() < until) {
      System.gc();
      collected.remove(50); // a wait for the collection, not a sleep: it returns as soon as it happens
    }
    assertThat(ref.get()).isNull();
    assertThat(SharedEventLoops.users(io.name)).as("users of the shared event loops").isEqualTo(users);
  }

  private static WeakReference<RpcClient> failedStart(int port, ReferenceQueue<RpcClient> queue) {
    RpcClient client = RpcClient.builder().address("127.0.0.1", port).build();
    assertFails(client::start, Status.Code.UNAVAILABLE, "cannot connect to 127.0.0.1:" + port);
    return new WeakReference<>(client, queue);
  }

  /**
   * A client never {@code start()}ed connects on its first call: the call waits for that connect (within its
   * deadline) and is answered, blocking or async, as a started client's would be.
   */
  @Test
  void theFirstCallOfAClientNeverStartedWaitsForItsConnectAndIsAnswered() throws Exception {
    RpcServer server = startServer();
    RpcClient blocking = client(server.port());
    assertThat(blocking.state()).as("nothing connected before the first call").isEqualTo(
        io.petrel.rpc.ConnectivityState.IDLE);
    assertThat(echo(blocking, "cold", THREE_SECONDS)).isEqualTo("cold");
    RpcClient async = client(server.port());
    assertThat(async.unaryCallAsync(TestService.ECHO, StringValue.of("cold async"), THREE_SECONDS)
        .get(10, TimeUnit.SECONDS).getValue()).isEqualTo("cold async");
  }

  /**
   * The first call of a client never started, to an address where nothing listens: it fails with UNAVAILABLE at
   * once (the refused connect is all it waited for), long before its deadline, and its message names the address,
   * what happened, and what to check. Before, it gave the transport's exception and the system call that failed
   * ("io.netty.channel.AbstractChannel$AnnotatedConnectException: finishConnect(..) failed with error(-111):
   * Connection refused: /127.0.0.1:PORT"), and nothing to check.
   */
  @Test
  void theFirstCallOfAClientNeverStartedToAnAddressWhereNothingListensFailsAtOnceNamingIt() throws Exception {
    int port = freePort();
    String address = "127.0.0.1:" + port;
    CallOptions tenSeconds = CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(10));
    long start = System.nanoTime();
    io.petrel.rpc.StatusException blocking = assertFails(() -> echo(client(port), "cold", tenSeconds),
        Status.Code.UNAVAILABLE, "cannot connect to " + address + ": ", "refused");
    io.petrel.rpc.StatusException async = assertFails(client(port).unaryCallAsync(TestService.ECHO,
        StringValue.of("cold async"), tenSeconds), Status.Code.UNAVAILABLE, "cannot connect to " + address + ": ",
        "refused");
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    assertThat(tookMs).as("both failed after %d ms, deadlines 10 s", tookMs).isLessThan(5_000);
    for (io.petrel.rpc.StatusException e : List.of(blocking, async)) {
      assertThat(e.status().description()).as("what happened, and what to check").startsWith("cannot connect to "
          + address + ": connection refused: nothing listens on that port (is the server running, and is the address"
          + " right?); next attempt in ");
      assertThat(e).as("the transport's exception").hasCauseInstanceOf(java.net.ConnectException.class);
    }
  }

  /**
   * The first call of a client never started, to an address whose connects hang (a listening socket whose accept
   * queue is full: the kernel drops the SYNs, as a powered-off host's network does): it waits for that connect within
   * its deadline. A deadline before the connect timeout ends it then, DEADLINE_EXCEEDED, saying it was not sent and
   * what it waited for; a connect timeout before the deadline fails it then, UNAVAILABLE. Both name the address.
   */
  @Test
  void theFirstCallOfAClientNeverStartedWaitsForAHangingConnectWithinItsDeadline() throws Exception {
    InetAddress loopback = InetAddress.getByName("127.0.0.1");
    try (ServerSocket hole = new ServerSocket(0, 1, loopback)) {
      List<Socket> queued = new java.util.ArrayList<>();
      try {
        boolean hangs = false;
        for (int i = 0; i < 16 && !hangs; i++) { // fill the accept queue until a connect hangs
          Socket s = new Socket();
          try {
            s.connect(new InetSocketAddress(loopback, hole.getLocalPort()), 300);
            queued.add(s);
          } catch (java.net.SocketTimeoutException full) {
            s.close();
            hangs = true;
          }
        }
        assertThat(hangs).as("a connect to the full accept queue hangs").isTrue();
        String address = "127.0.0.1:" + hole.getLocalPort();
        long start = System.nanoTime();
        // Async: a blocking caller on a loaded machine may end the call itself, naming what the endpoint was doing
        assertFails(client(hole.getLocalPort()).unaryCallAsync(TestService.ECHO, StringValue.of("cold"),
            CallOptions.DEFAULT.withTimeout(Duration.ofMillis(500))), Status.Code.DEADLINE_EXCEEDED, "not sent",
            "it waited for the connect attempt to " + address + " under way");
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertThat(tookMs).as("ended after %d ms, deadline 500 ms, connectTimeout 5 s", tookMs).isBetween(450L, 3_000L);
        start = System.nanoTime();
        assertFails(() -> echo(client(hole.getLocalPort(), b -> b.connectTimeout(Duration.ofMillis(500))), "cold",
            CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(10))), Status.Code.UNAVAILABLE,
            "cannot connect to " + address + ": connection timed out after 500 ms: no answer from that address",
            "RpcClient.builder().connectTimeout");
        tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertThat(tookMs).as("failed after %d ms, connectTimeout 500 ms, deadline 10 s", tookMs)
            .isBetween(450L, 5_000L);
      } finally {
        for (Socket s : queued) {
          s.close();
        }
      }
    }
  }
}
