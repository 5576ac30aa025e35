package io.petrel.rpc.transport.netty;

import com.google.protobuf.StringValue;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.testing.FaultProxy;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A bounded soak run: a server, a client calling it directly and one through a {@link FaultProxy} whose fault
 * changes every few seconds (latency, bandwidth cap, 1-byte slices, black hole, resets, a peer that stops
 * reading), plus raw hostile peers (connections that send nothing, half a frame, or requests they never read
 * the answers to). Mixed calls (sync, async, oneway, failing, large) run the whole time, each with a deadline.
 * Every report period it prints heap, direct memory, threads, open files and call outcomes; at the end it
 * checks that every call ended with a result or a status, that no call is left pending, and that the resources
 * of the last period are within bounds of the first. Exit code 0 when all holds.
 *
 * <pre>
 * --minutes N    how long to run (default 1); or --seconds N
 * --report N     seconds between reports (default 60)
 * </pre>
 */
public final class SoakRunner {
  private final long runNanos;
  private final long reportNanos;
  private final PrintStream out;
  private final AtomicBoolean stop = new AtomicBoolean();
  private final AtomicLongArray outcomes = new AtomicLongArray(256);
  private final AtomicLong calls = new AtomicLong();
  private final ConcurrentLinkedQueue<Throwable> odd = new ConcurrentLinkedQueue<>();
  private final List<Sample> samples = new ArrayList<>();
  private final TestService service = new TestService();

  /** One report line. */
  record Sample(long second, long heapUsed, long directUsed, int threads, long openFiles, long callsPerSecond) {}

  SoakRunner(Duration run, Duration report, PrintStream out) {
    this.runNanos = run.toNanos();
    this.reportNanos = report.toNanos();
    this.out = out;
  }

  public static void main(String[] args) throws Exception {
    long seconds = 60;
    long report = 60;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--minutes" -> seconds = 60 * Long.parseLong(args[++i]);
        case "--seconds" -> seconds = Long.parseLong(args[++i]);
        case "--report" -> report = Long.parseLong(args[++i]);
        default -> throw new IllegalArgumentException("unknown option " + args[i]
            + " (use --minutes N | --seconds N, --report SECONDS)");
      }
    }
    boolean ok = new SoakRunner(Duration.ofSeconds(seconds), Duration.ofSeconds(report), System.out).run();
    System.exit(ok ? 0 : 1);
  }

  /** Runs the soak; returns whether every check held. */
  boolean run() throws Exception {
    service.gate.countDown(); // BLOCK answers at once
    RpcServer server = RpcServer.builder().bindAddress("127.0.0.1", 0).addService(service.definition())
        .unwritableTimeout(Duration.ofSeconds(3)).handshakeTimeout(Duration.ofSeconds(2))
        .frameReceiveTimeout(Duration.ofSeconds(2)).keepAlive(Duration.ofSeconds(2), Duration.ofSeconds(2))
        .build().start();
    FaultProxy proxy = new FaultProxy(server.port());
    RpcClient direct = RpcClient.builder().address("127.0.0.1", server.port()).name("soak-direct").build();
    RpcClient faulty = RpcClient.builder().address("127.0.0.1", proxy.port()).name("soak-faulty")
        .keepAliveTime(Duration.ofSeconds(1)).reconnectBackoff(Duration.ofMillis(50), Duration.ofSeconds(1))
        .build();
    List<Thread> threads = new ArrayList<>();
    threads.add(loop("sync-direct", () -> syncCalls(direct)));
    threads.add(loop("sync-faulty", () -> syncCalls(faulty)));
    threads.add(loop("async-direct", () -> asyncWindow(direct)));
    threads.add(loop("faults", () -> faults(proxy)));
    threads.add(loop("hostile", () -> hostilePeers(server.port())));
    long start = System.nanoTime();
    long lastCalls = 0;
    long nextReport = start + reportNanos;
    out.printf("soak: %d s, report every %d s; server %s, proxy %d%n", TimeUnit.NANOSECONDS.toSeconds(runNanos),
        TimeUnit.NANOSECONDS.toSeconds(reportNanos), server.localAddress(), proxy.port());
    out.println("second  heap-MiB  direct-MiB  threads  open-files  calls/s  outcomes");
    while (System.nanoTime() - start < runNanos) {
      long wait = Math.min(nextReport, start + runNanos) - System.nanoTime();
      if (wait > 0) {
        TimeUnit.NANOSECONDS.sleep(wait); // the runner's own clock: it reports at fixed times
      }
      if (System.nanoTime() >= nextReport) {
        long now = calls.get();
        samples.add(report(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start),
            (now - lastCalls) / Math.max(1, TimeUnit.NANOSECONDS.toSeconds(reportNanos))));
        lastCalls = now;
        nextReport += reportNanos;
      }
    }
    stop.set(true);
    proxy.heal();
    for (Thread t : threads) {
      t.join(30_000);
    }
    boolean ok = true;
    for (Thread t : threads) {
      if (t.isAlive()) {
        out.println("FAIL: " + t.getName() + " did not stop within 30 s");
        ok = false;
      }
    }
    int pendingDirect = direct.pendingCalls();
    int pendingFaulty = faulty.pendingCalls();
    direct.shutdownNow();
    faulty.shutdownNow();
    proxy.close();
    server.shutdownNow();
    server.awaitTermination(20, TimeUnit.SECONDS);
    ok &= check(odd.isEmpty(), "every call ended with a result or a status",
        odd.size() + " calls ended otherwise, first: " + odd.peek());
    ok &= check(pendingDirect == 0 && pendingFaulty == 0, "no call left pending after the load stopped",
        "pending direct " + pendingDirect + ", faulty " + pendingFaulty);
    ok &= check(outcomes.get(0) > 0, "calls succeeded", "no call succeeded");
    if (samples.size() >= 2) {
      Sample first = samples.get(0);
      Sample last = samples.get(samples.size() - 1);
      ok &= check(last.directUsed() <= first.directUsed() + (32L << 20), "direct memory flat (within 32 MiB of"
          + " the first report)", "direct memory grew from " + mib(first.directUsed()) + " to "
          + mib(last.directUsed()) + " MiB");
      ok &= check(last.threads() <= first.threads() + 16, "threads flat (within 16 of the first report)",
          "threads grew from " + first.threads() + " to " + last.threads());
      ok &= check(last.openFiles() <= first.openFiles() + 64, "open files flat (within 64 of the first report)",
          "open files grew from " + first.openFiles() + " to " + last.openFiles());
    }
    out.println(ok ? "soak: PASSED" : "soak: FAILED");
    return ok;
  }

  private boolean check(boolean holds, String what, String otherwise) {
    out.println((holds ? "ok: " : "FAIL: ") + (holds ? what : otherwise));
    return holds;
  }

  private static long mib(long bytes) {
    return bytes >> 20;
  }

  private Sample report(long second, long callsPerSecond) {
    Runtime rt = Runtime.getRuntime();
    long heap = rt.totalMemory() - rt.freeMemory();
    long directUsed = DirectMemory.used();
    int threadCount = ManagementFactory.getThreadMXBean().getThreadCount();
    long files = -1;
    if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.UnixOperatingSystemMXBean u) {
      files = u.getOpenFileDescriptorCount();
    }
    Map<Status.Code, Long> byCode = new EnumMap<>(Status.Code.class);
    for (Status.Code c : Status.Code.values()) {
      long n = outcomes.get(c.value());
      if (n > 0) {
        byCode.put(c, n);
      }
    }
    Sample s = new Sample(second, heap, directUsed, threadCount, files, callsPerSecond);
    out.printf("%6d  %8d  %10d  %7d  %10d  %7d  %s%n", second, mib(heap), mib(directUsed), threadCount, files,
        callsPerSecond, byCode);
    return s;
  }

  private interface Body {
    void run() throws Exception;
  }

  private Thread loop(String name, Body body) {
    Thread t = new Thread(() -> {
      while (!stop.get()) {
        try {
          body.run();
        } catch (Throwable e) {
          odd.add(e);
        }
      }
    }, "soak-" + name);
    t.setDaemon(true);
    t.start();
    return t;
  }

  private void ended(Throwable error) {
    calls.incrementAndGet();
    if (error == null) {
      outcomes.incrementAndGet(0);
      return;
    }
    Throwable t = error instanceof ExecutionException && error.getCause() != null ? error.getCause() : error;
    if (t instanceof java.util.concurrent.CompletionException && t.getCause() != null) {
      t = t.getCause();
    }
    if (t instanceof StatusException se) {
      outcomes.incrementAndGet(se.code().value());
    } else {
      odd.add(t);
    }
  }

  private static final CallOptions DEADLINE = CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(2));

  /** One sync call of a random kind. */
  private void syncCalls(RpcClient client) {
    int kind = ThreadLocalRandom.current().nextInt(10);
    try {
      switch (kind) {
        case 0 -> client.unaryCall(TestService.FAIL, StringValue.of("soak"), DEADLINE);
        case 1 -> client.unaryCall(TestService.BIG_RESPONSE, new Object[] {256 * 1024}, DEADLINE);
        case 2 -> client.oneway(TestService.LOG, StringValue.of("soak"), DEADLINE).get(3, TimeUnit.SECONDS);
        case 3 -> client.unaryCall(TestService.BYTES, new byte[ThreadLocalRandom.current().nextInt(64 * 1024)],
            DEADLINE);
        default -> client.unaryCall(TestService.ECHO, StringValue.of("soak"), DEADLINE);
      }
      ended(null);
    } catch (Throwable t) {
      ended(t);
    }
    if (service.logged.size() > 1000) {
      service.logged.clear(); // the oneway handler records what it got; keep that bounded
    }
  }

  /** Async calls with a window of 200 in flight. */
  private void asyncWindow(RpcClient client) throws InterruptedException {
    Semaphore window = new Semaphore(200);
    for (int i = 0; i < 10_000 && !stop.get(); i++) {
      if (!window.tryAcquire(5, TimeUnit.SECONDS)) {
        odd.add(new IllegalStateException("200 async calls did not end within 5 s (deadline 2 s)"));
        return;
      }
      CompletableFuture<StringValue> f = client.unaryCallAsync(TestService.ASYNC_ECHO, StringValue.of("a"),
          DEADLINE);
      f.whenComplete((r, t) -> {
        ended(t);
        window.release();
      });
    }
    window.acquire(200); // the whole window back: every call ended
  }

  /** Changes the proxy's fault every 4 s, cycling through all of them. */
  private void faults(FaultProxy proxy) throws InterruptedException {
    Runnable[] faults = {
        () -> proxy.heal(),
        () -> proxy.heal().latency(20, TimeUnit.MILLISECONDS),
        () -> proxy.heal().bandwidth(256 * 1024),
        () -> proxy.heal().slice(1),
        () -> proxy.heal().blackHole(true),
        () -> {
          proxy.heal();
          proxy.resetAll();
        },
        () -> proxy.heal().pauseReading(true),
    };
    for (Runnable f : faults) {
      if (stop.get()) {
        return;
      }
      f.run();
      TimeUnit.SECONDS.sleep(4); // how long each fault lasts
    }
  }

  /**
   * A round of hostile raw peers: silent, half a header, and four large ones that each pipeline 500 requests for
   * 64 KiB answers (31 MiB of responses each) in one write and never read.
   */
  private void hostilePeers(int port) throws IOException, InterruptedException {
    List<RawPeer> greedy = new ArrayList<>();
    try (RawPeer silent = new RawPeer(port); RawPeer half = new RawPeer(port)) {
      half.send(new byte[] {0, 0, 0, 28, 0x50, 0x52, 1});
      for (int c = 0; c < 4; c++) {
        RawPeer p = new RawPeer(port, 4096);
        greedy.add(p);
        java.io.ByteArrayOutputStream all = new java.io.ByteArrayOutputStream();
        for (int i = 0; i < 500; i++) {
          all.write(RawPeer.request(TestService.BIG_RESPONSE, i + 1, 0, new Object[] {64 * 1024}));
        }
        p.send(all.toByteArray());
      }
      TimeUnit.SECONDS.sleep(5); // hold them open past the server's timeouts
    } finally {
      for (RawPeer p : greedy) {
        p.close();
      }
    }
  }
}
