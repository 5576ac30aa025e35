package io.petrel.rpc.transport.netty;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.StringValue;
import io.netty.buffer.PooledByteBufAllocator;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The client against servers that vanish, stop reading, refuse, or restart, and against user code that blocks
 * its event loop. Each test is one weakness of issue 13 (numbered as there).
 */
class ClientResilienceTest extends TransportFixture {
  private static final int MIB = 1024 * 1024;

  /**
   * A server socket that accepts, announces that it takes any number of calls (so that the client writes until
   * its high water mark rather than wait for a first frame), and then neither reads nor writes: a black hole.
   */
  private static ServerSocket blackHole(List<Socket> accepted) throws IOException {
    ServerSocket ss = new ServerSocket();
    ss.setReceiveBufferSize(4096);
    ss.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 5);
    Thread t = new Thread(() -> {
      try {
        while (!ss.isClosed()) {
          Socket s = ss.accept();
          accepted.add(s);
          s.getOutputStream().write(RawPeer.settingsFrame(Protocol.SETTING_MAX_CONCURRENT_CALLS, 1_000_000));
        }
      } catch (IOException closed) {
        // test over
      }
    }, "black-hole-accept");
    t.setDaemon(true);
    t.start();
    return ss;
  }

  /** Weakness 2: calls to a server that does not read cannot grow the client's memory. */
  @Test
  void callsToAServerThatDoesNotReadDoNotGrowClientMemory() throws Exception {
    List<Socket> sockets = new java.util.concurrent.CopyOnWriteArrayList<>();
    try (ServerSocket hole = blackHole(sockets)) {
      RpcClient client = client(hole.getLocalPort(), b -> b.keepAliveTime(Duration.ZERO).maxPendingCalls(100_000));
      long before = PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory();
      byte[] payload = new byte[4096];
      List<CompletableFuture<byte[]>> calls = new ArrayList<>();
      for (int i = 0; i < 20_000; i++) { // 80 MB of requests that can never be sent
        calls.add(client.unaryCallAsync(TestService.BYTES, payload,
            CallOptions.DEFAULT.withTimeout(Duration.ofMillis(300))));
      }
      long maxDirect = 0;
      for (CompletableFuture<byte[]> f : calls) {
        try {
          f.get(20, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
          assertThat(((StatusException) e.getCause()).code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
        }
        maxDirect = Math.max(maxDirect, PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory());
      }
      System.out.printf("black-holed server: client direct memory %d MiB before, up to %d MiB after 20000"
          + " calls of 4 KiB%n", before / MIB, maxDirect / MIB);
      assertThat(maxDirect - before).as("client direct memory grown (bytes)").isLessThan(16L * MIB);
      assertThat(client.pendingCalls()).isZero();
    } finally {
      for (Socket s : sockets) {
        s.close();
      }
    }
  }

  /** Weakness 5: while a server is down, calls do not each start a connection attempt. */
  @Test
  void callsWhileTheServerIsDownFollowTheBackoffInsteadOfStormingIt() throws Exception {
    AtomicInteger attempts = new AtomicInteger();
    try (ServerSocket slammer = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      Thread t = new Thread(() -> {
        try {
          while (!slammer.isClosed()) {
            Socket s = slammer.accept(); // accept, then hang up at once: a server that is not really there
            attempts.incrementAndGet();
            s.close();
          }
        } catch (IOException closed) {
          // test over
        }
      }, "slammer");
      t.setDaemon(true);
      t.start();
      RpcClient client = client(slammer.getLocalPort());
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
      int failures = 0;
      String lastMessage = "";
      while (System.nanoTime() < until && failures < 1_000_000) {
        try {
          client.unaryCall(TestService.ECHO, StringValue.of("x"), CallOptions.DEFAULT.withTimeout(
              Duration.ofMillis(200)));
        } catch (StatusException e) {
          assertThat(e.code()).isIn(Status.Code.UNAVAILABLE, Status.Code.DEADLINE_EXCEEDED);
          lastMessage = e.status().description();
          failures++;
        }
      }
      System.out.printf("server down: %d connection attempts in 1 s while %d calls failed%n", attempts.get(),
          failures);
      // Backoff 100 ms doubling (+-20%): about 4 attempts in a second, whatever the number of calls.
      assertThat(attempts.get()).as("connection attempts in 1 s (%d calls failed)", failures).isBetween(1, 8);
      assertThat(lastMessage).contains("reconnectBackoff");
    }
    // A port nobody listens on: the failure names the cause and when the next attempt is due.
    int closedPort;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      closedPort = s.getLocalPort();
    }
    RpcClient client = client(closedPort);
    for (int i = 0; i < 2; i++) {
      try {
        client.unaryCall(TestService.ECHO, StringValue.of("x"));
      } catch (StatusException e) {
        assertThat(e.code()).isEqualTo(Status.Code.UNAVAILABLE);
        if (i == 1) {
          assertThat(e.status().description()).contains("cannot connect").contains("next attempt in");
        }
      }
    }
  }

  /** Weakness 6: far deadlines fire within 20 ms, like near ones. */
  @Test
  void deadlinesOfASecondOrMoreFireWithinTwentyMilliseconds() throws Exception {
    RpcServer server = startServer();
    RpcClient client = client(server.port());
    int n = 9;
    long[] late = new long[n];
    CountDownLatch done = new CountDownLatch(n);
    for (int i = 0; i < n; i++) {
      int k = i;
      long timeoutMs = 1000 + 50L * i;
      long start = System.nanoTime();
      client.unaryCallAsync(TestService.BLOCK, StringValue.of("late " + i),
          CallOptions.DEFAULT.withTimeout(Duration.ofMillis(timeoutMs))).whenComplete((r, t) -> {
            late[k] = System.nanoTime() - start - TimeUnit.MILLISECONDS.toNanos(timeoutMs);
            done.countDown();
          });
    }
    assertThat(done.await(20, TimeUnit.SECONDS)).isTrue();
    int within = 0;
    StringBuilder all = new StringBuilder();
    for (long l : late) {
      assertThat(l).isGreaterThanOrEqualTo(0);
      assertThat(l).isLessThan(TimeUnit.MILLISECONDS.toNanos(100));
      within += l <= TimeUnit.MILLISECONDS.toNanos(20) ? 1 : 0;
      all.append(String.format(" %.1f", l / 1e6));
    }
    System.out.println("deadline lateness (ms):" + all);
    assertThat(within).as("calls ended within 20 ms of the deadline; lateness ms:" + all).isGreaterThanOrEqualTo(8);
  }

  /** Weakness 9: a blocking call on the client's event loop fails at once, and deadlines keep working. */
  @Test
  void aBlockingCallOnTheEventLoopFailsAtOnceNamingTheFix() throws Exception {
    RpcServer server = startServer();
    RpcClient client = client(server.port());
    CompletableFuture<String> chained = client.unaryCallAsync(TestService.BLOCK, StringValue.of("outer"),
        CallOptions.DEFAULT).thenApply(r -> {
          try { // runs on the event loop that read the response
            return client.unaryCall(TestService.ECHO, StringValue.of("inner"),
                CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(3))).getValue();
          } catch (StatusException e) {
            return e.code() + ": " + e.status().description();
          }
        });
    assertThat(service.blockStarted.poll(10, TimeUnit.SECONDS)).isEqualTo("outer");
    long start = System.nanoTime();
    service.gate.countDown();
    String result = chained.get(5, TimeUnit.SECONDS);
    assertThat(result).startsWith("FAILED_PRECONDITION").contains("callbackExecutor").contains("async");
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(2_000);
    // The loop is free: the client's calls and deadlines work as before.
    assertThat(client.unaryCall(TestService.ECHO, StringValue.of("after")).getValue()).isEqualTo("after");
  }

  /** Weakness 9: a blocking caller ends its call by its deadline even if the event loop is blocked by user code. */
  @Test
  void aBlockingCallEndsByItsDeadlineEvenWhenTheEventLoopIsBlocked() throws Exception {
    RpcServer server = startServer();
    RpcClient client = client(server.port());
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch loopBlocked = new CountDownLatch(1);
    CompletableFuture<StringValue> blocker = client.unaryCallAsync(TestService.BLOCK, StringValue.of("x"),
        CallOptions.DEFAULT);
    blocker.thenAccept(r -> { // user code that blocks the event loop (what the docs say not to do)
      loopBlocked.countDown();
      try {
        release.await(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    try {
      assertThat(service.blockStarted.poll(10, TimeUnit.SECONDS)).isEqualTo("x");
      // The response arrives and the callback blocks the event loop. (No blocker.get() here: a thread waiting
      // in get() may run the callback itself, CompletableFuture helps complete what it waits for.)
      service.gate.countDown();
      assertThat(loopBlocked.await(5, TimeUnit.SECONDS)).isTrue();
      long start = System.nanoTime();
      try {
        client.unaryCall(TestService.ECHO, StringValue.of("y"), CallOptions.DEFAULT.withTimeout(
            Duration.ofMillis(300)));
        throw new AssertionError("the call cannot succeed while the loop is blocked");
      } catch (StatusException e) {
        assertThat(e.code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
      }
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isBetween(290L, 1_000L);
    } finally {
      release.countDown();
    }
  }

  /** Weakness 10: calls racing the client's shutdown all end with a status, never another exception. */
  @Test
  void callsRacingShutdownEndWithAStatus() throws Exception {
    RpcServer server = startServer();
    RpcClient client = client(server.port());
    ConcurrentLinkedQueue<Throwable> odd = new ConcurrentLinkedQueue<>();
    AtomicInteger ok = new AtomicInteger();
    CountDownLatch warm = new CountDownLatch(200);
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      boolean async = t % 2 == 0;
      Thread th = new Thread(() -> {
        int failures = 0;
        for (int i = 0; i < 20_000 && failures < 50; i++) {
          try {
            if (async) {
              client.unaryCallAsync(TestService.ECHO, StringValue.of("a"), CallOptions.DEFAULT)
                  .get(10, TimeUnit.SECONDS);
            } else {
              client.unaryCall(TestService.ECHO, StringValue.of("b"));
            }
            ok.incrementAndGet();
            warm.countDown();
          } catch (StatusException e) {
            failures++;
          } catch (ExecutionException e) {
            if (!(e.getCause() instanceof StatusException)) {
              odd.add(e.getCause());
            }
            failures++;
          } catch (Throwable e) {
            odd.add(e);
            failures++;
          }
        }
      }, "racer-" + t);
      threads.add(th);
      th.start();
    }
    assertThat(warm.await(20, TimeUnit.SECONDS)).isTrue();
    client.shutdownNow();
    for (Thread th : threads) {
      th.join(20_000);
      assertThat(th.isAlive()).as(th.getName() + " still running").isFalse();
    }
    assertThat(odd).as("exceptions that are not a status").isEmpty();
    assertThat(client.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }

  /** Weakness 10: calls while the server restarts on the same port end with a result or a status. */
  @Test
  void callsAcrossServerRestartsEndWithAResultOrAStatus() throws Exception {
    RpcServer server = startServer();
    int port = server.port();
    RpcClient client = client(port, b -> b.reconnectBackoff(Duration.ofMillis(5), Duration.ofMillis(20)));
    ConcurrentLinkedQueue<Throwable> odd = new ConcurrentLinkedQueue<>();
    AtomicInteger ok = new AtomicInteger();
    java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
    Thread caller = new Thread(() -> {
      for (int i = 0; i < 1_000_000 && !stop.get(); i++) {
        try {
          if (i % 2 == 0) {
            client.unaryCall(TestService.ECHO, StringValue.of("r"));
          } else {
            client.unaryCallAsync(TestService.ECHO, StringValue.of("r"), CallOptions.DEFAULT).get(10,
                TimeUnit.SECONDS);
          }
          ok.incrementAndGet();
        } catch (StatusException e) {
          // expected while the server is down
        } catch (ExecutionException e) {
          if (!(e.getCause() instanceof StatusException)) {
            odd.add(e.getCause());
          }
        } catch (Throwable e) {
          odd.add(e);
        }
      }
    }, "restart-caller");
    caller.start();
    try {
      for (int r = 0; r < 10; r++) {
        int before = ok.get();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (ok.get() < before + 20 && System.nanoTime() < until) {
          Thread.onSpinWait();
        }
        assertThat(ok.get()).as("calls succeed after restart " + r + ": " + client).isGreaterThanOrEqualTo(before + 20);
        server.shutdownNow();
        assertThat(server.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        server = RpcServer.builder().bindAddress("127.0.0.1", port).addService(service.definition()).build()
            .start();
      }
    } finally {
      stop.set(true);
      caller.join(20_000);
      server.shutdownNow();
      server.awaitTermination(10, TimeUnit.SECONDS);
    }
    assertThat(odd).as("exceptions that are not a status").isEmpty();
  }
}
