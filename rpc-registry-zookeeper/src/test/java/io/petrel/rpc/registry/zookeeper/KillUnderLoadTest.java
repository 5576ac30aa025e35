package io.petrel.rpc.registry.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.petrel.rpc.AsyncUnaryHandler;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.RpcServerBuilder;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.marshal.Marshallers;
import io.petrel.rpc.testing.FaultProxy;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * Issue 21's kill under load: three servers found through a real ZooKeeper ({@code zk://} target), 64 callers on
 * one client; one server is killed (every connection reset, new ones refused), another is drained gracefully.
 * Each call carries a unique id and each server counts its executions per id (the ledger), so the test can tell
 * which calls ran, where, and how often. Load and phases are bounded in calls and in time; the test takes about
 * 10-25 s. docs/cluster.md ("Kill under load") gives its counts.
 */
class KillUnderLoadTest {
  private static final String SERVICE = "kill.Ledger";
  /** Marked idempotent: the client may run it again when it may have run (docs/cluster.md, retries). */
  private static final MethodDescriptor<byte[], byte[]> READ = method("read", true);
  /** Not idempotent: must never run twice. */
  private static final MethodDescriptor<byte[], byte[]> WRITE = method("write", false);
  /** Answers with the server's name, outside the ledger: the warm-up before the load. */
  private static final MethodDescriptor<byte[], byte[]> WHO = method("who", true);

  private static final int CALLERS = 64;
  /** Of the callers, this many make slow calls (the handler answers after {@link #SLOW_CALL}). */
  private static final int SLOW_CALLERS = 16;
  private static final Duration SLOW_CALL = Duration.ofSeconds(2);
  private static final Duration DEADLINE = Duration.ofSeconds(8);
  /** A call that ends later than its deadline plus this counts as late (deadlines fire late on a busy machine). */
  private static final Duration LATE = Duration.ofSeconds(1);
  private static final Duration DRAIN_DELAY = Duration.ofMillis(500);
  private static final Duration GRACE = Duration.ofSeconds(5);
  /** Ids are 0..MAX_CALLS-1: the callers stop there at the latest. */
  private static final int MAX_CALLS = 1_000_000;
  /** Calls that end between two steps of the scenario ... */
  private static final int PHASE_CALLS = 8_000;
  /** ... or this long, whichever comes first. */
  private static final Duration PHASE_LIMIT = Duration.ofSeconds(6);
  /**
   * Slow calls a server must have in flight, started within {@link #RECENT}, when it is killed or drained: they
   * are still running at the kill, and at the GOAWAY that comes {@link #DRAIN_DELAY} after the drain began.
   */
  private static final int SLOW_IN_FLIGHT = 3;
  private static final Duration RECENT = Duration.ofMillis(500);

  private static final int IN_FLIGHT = 0;
  private static final int OK = 1;

  private static MethodDescriptor<byte[], byte[]> method(String name, boolean idempotent) {
    return MethodDescriptor.<byte[], byte[]>newBuilder().serviceName(SERVICE).methodName(name)
        .requestMarshaller(Marshallers.bytes()).responseMarshaller(Marshallers.bytes()).idempotent(idempotent)
        .build();
  }

  /** Even ids call the idempotent method, odd ones the other. */
  private static boolean idempotent(int id) {
    return (id & 1) == 0;
  }

  @Test
  void oneServerKilledAndOneDrainedUnderLoadLoseNoCallAndRunNoNonIdempotentCallTwice() throws Exception {
    ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "slow-handlers");
      t.setDaemon(true);
      return t;
    });
    try (TestingServer zk = new TestingServer();
        ZooKeeperRegistry reg1 = ZooKeeperRegistry.builder().connectString(zk.getConnectString()).build();
        ZooKeeperRegistry reg3 = ZooKeeperRegistry.builder().connectString(zk.getConnectString()).build();
        CuratorFramework killedSession = CuratorFrameworkFactory.newClient(zk.getConnectString(),
            new ExponentialBackoffRetry(100, 3));
        LedgerServer s1 = new LedgerServer("server-1", timer, RpcServer.builder()
            .addLifecycleListener(reg1.registrar(SERVICE).build()));
        LedgerServer s2 = new LedgerServer("server-2", timer, RpcServer.builder());
        FaultProxy s2Crash = new FaultProxy(s2.server.port());
        LedgerServer s3 = new LedgerServer("server-3", timer, RpcServer.builder()
            .addLifecycleListener(reg3.registrar(SERVICE).build()).drainDelay(DRAIN_DELAY)
            .shutdownGracePeriod(GRACE))) {
      // server-2 is reached through a proxy that will play its crash; it is registered under the proxy's address
      // by the documented layout, in a session of its own that the test expires after the crash.
      killedSession.start();
      String s2Node = reg1.servicePath(SERVICE) + "/127.0.0.1:" + s2Crash.port();
      killedSession.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(s2Node,
          ("{\"host\":\"127.0.0.1\",\"port\":" + s2Crash.port() + "}").getBytes(StandardCharsets.UTF_8));

      Load load;
      long killedAt;
      int inFlightAtKill;
      long goawayAt;
      String target = "zk://" + zk.getConnectString() + ZooKeeperRegistry.DEFAULT_BASE_PATH + "/" + SERVICE;
      // The client's defaults, retry budget included: it must hold the burst of one server dying with its calls in
      // flight (about 25 here, each failed attempt takes a token; retries stop after about 50).
      try (RpcClient client = RpcClient.builder().target(target).build()) {
        warmUp(client);
        load = new Load(client, "127.0.0.1:" + s2Crash.port());
        load.start();
        List<String> steps = new ArrayList<>();
        try {
          // 1. All three serve; then server-2 crashes while it holds slow calls.
          steps.add("3 servers: " + load.awaitPhase());
          inFlightAtKill = s2.whileHoldingSlowCalls(s2Crash::kill);
          killedAt = System.nanoTime();
          steps.add("server-2 killed: " + load.awaitPhase());

          // 2. server-3 drains while it holds slow calls: deregistered, serves DRAIN_DELAY more, GOAWAY, grace.
          s3.whileHoldingSlowCalls(() -> {});
          long drainAt = System.nanoTime();
          s3.server.shutdown(); // returns once deregistered; the GOAWAY comes DRAIN_DELAY later
          goawayAt = System.nanoTime() + DRAIN_DELAY.toNanos();
          assertThat(s3.server.awaitTermination(DRAIN_DELAY.plus(GRACE).toSeconds() + 5, TimeUnit.SECONDS))
              .as("server-3 drained").isTrue();
          steps.add("server-3 drained in " + ms(System.nanoTime() - drainAt) + " ms: " + load.awaitPhase());

          // 3. server-2's session expires, as it would sessionTimeout after the crash: its node goes.
          ZooKeeperSessions.expire(killedSession, zk);
          steps.add("server-2's session expired " + ms(System.nanoTime() - killedAt) + " ms after the kill: "
              + load.awaitPhase());
        } finally {
          load.stop();
          steps.forEach(s -> System.out.println("[kill-under-load] " + s));
        }
      }

      Report r = new Report(load, s1, s2, s3, inFlightAtKill, goawayAt);
      r.print();

      assertThat(r.hungCallers).as("callers still in a call after the load stopped").isZero();
      assertThat(r.issued).as("calls issued").isGreaterThanOrEqualTo(PHASE_CALLS);
      assertThat(r.succeeded + r.failed).as("succeeded + failed = issued (no call lost)").isEqualTo(r.issued);
      assertThat(r.late).as("calls that ended more than %s after their deadline", LATE).isZero();
      assertThat(r.unclear).as("failures that are not a status with a description: %s", r.unclearSamples)
          .isZero();
      assertThat(r.failedElsewhere).as("failures that do not name the killed server: %s", r.samples).isZero();
      assertThat(r.idempotentFailedByStatus).as("idempotent calls that failed (they are retried on UNAVAILABLE)")
          .isEmpty();
      assertThat(r.nonIdempotentDuplicates).as("non-idempotent calls that ran more than once").isZero();
      assertThat(r.executedNotIssued).as("executions of ids never issued").isZero();
      assertThat(r.succeededWithoutExecution).as("successes that no server ran").isZero();
      assertThat(r.drainedFailed).as("calls server-3 ran that failed (it was drained, not killed)").isZero();
      assertThat(r.drainedInFlightAtGoaway).as("slow calls in flight on server-3 when its GOAWAY came")
          .isPositive();
      assertThat(r.killedInFlightAtKill).as("slow calls in flight on server-2 when it was killed").isPositive();
    } finally {
      timer.shutdownNow();
    }
  }

  /**
   * Calls until each server has answered once, so that the load starts with the connections made (on a busy
   * machine the first connections and the code's first runs can take seconds).
   */
  private static void warmUp(RpcClient client) {
    Set<String> answered = new TreeSet<>();
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    CallOptions options = CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(30));
    for (int i = 0; i < 1000 && answered.size() < 3 && System.nanoTime() - end < 0; i++) {
      answered.add(new String(client.unaryCall(WHO, new byte[0], options), StandardCharsets.UTF_8));
    }
    assertThat(answered).as("servers that answered the warm-up").containsExactly("server-1", "server-2",
        "server-3");
  }

  private static long ms(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(nanos);
  }

  /** A server on 127.0.0.1 whose handlers record every execution per call id (the ledger). */
  static final class LedgerServer implements AutoCloseable {
    final String name;
    final RpcServer server;
    final AtomicIntegerArray executions = new AtomicIntegerArray(MAX_CALLS);
    /** Start and end (nanoTime) of each slow call. */
    final ConcurrentLinkedQueue<long[]> slowCalls = new ConcurrentLinkedQueue<>();
    /** Start (nanoTime) of each slow call in flight; guarded by this. */
    private final List<Long> slowInFlight = new ArrayList<>();

    LedgerServer(String name, ScheduledExecutorService timer, RpcServerBuilder builder) throws IOException {
      this.name = name;
      byte[] answer = name.getBytes(StandardCharsets.UTF_8);
      AsyncUnaryHandler<byte[], byte[]> handler = req -> {
        ByteBuffer b = ByteBuffer.wrap(req);
        int id = (int) b.getLong();
        boolean slow = b.get() == 1;
        executions.incrementAndGet(id);
        if (!slow) {
          return CompletableFuture.completedFuture(answer);
        }
        long start = System.nanoTime();
        slowStarted(start);
        CompletableFuture<byte[]> done = new CompletableFuture<>();
        timer.schedule(() -> {
          slowEnded(start);
          done.complete(answer);
        }, SLOW_CALL.toNanos(), TimeUnit.NANOSECONDS);
        return done;
      };
      ServiceDefinition def = ServiceDefinition.builder(SERVICE).async(READ, handler).async(WRITE, handler)
          .unary(WHO, req -> answer).build();
      this.server = builder.name(name).bindAddress("127.0.0.1", 0).addService(def).build().start();
    }

    private synchronized void slowStarted(long start) {
      slowInFlight.add(start);
      notifyAll();
    }

    private synchronized void slowEnded(long start) {
      slowInFlight.remove(Long.valueOf(start));
      slowCalls.add(new long[] {start, System.nanoTime()});
    }

    private long recentSlowInFlight() {
      long since = System.nanoTime() - RECENT.toNanos();
      return slowInFlight.stream().filter(start -> start - since > 0).count();
    }

    /**
     * Waits (at most a phase's limit) until this server holds {@link #SLOW_IN_FLIGHT} slow calls that started
     * within {@link #RECENT}, then runs {@code action} while none of its slow calls can end (they end under the
     * same lock); returns how many slow calls were in flight.
     */
    synchronized int whileHoldingSlowCalls(Action action) throws Exception {
      long end = System.nanoTime() + PHASE_LIMIT.toNanos();
      long left;
      while (recentSlowInFlight() < SLOW_IN_FLIGHT && (left = end - System.nanoTime()) > 0) {
        TimeUnit.NANOSECONDS.timedWait(this, left);
      }
      assertThat(recentSlowInFlight()).as("slow calls in flight on %s, started within %s", name, RECENT)
          .isGreaterThanOrEqualTo(SLOW_IN_FLIGHT);
      action.run();
      return slowInFlight.size();
    }

    /** Slow calls that started before {@code at} and ended after it. */
    int slowInFlightAt(long at) {
      return (int) slowCalls.stream().filter(c -> c[0] < at && c[1] > at).count();
    }

    @Override
    public void close() {
      server.shutdownNow();
    }
  }

  interface Action {
    void run() throws Exception;
  }

  /** 64 callers making blocking calls until stopped, each with a unique id; what happened to each id. */
  static final class Load {
    final RpcClient client;
    final AtomicLong nextId = new AtomicLong();
    /** Per id: {@link #IN_FLIGHT}, {@link #OK}, or 2 + the failure's status code ordinal. */
    final AtomicIntegerArray outcome = new AtomicIntegerArray(MAX_CALLS);
    final AtomicLong late = new AtomicLong();
    final AtomicLong longestNanos = new AtomicLong();
    final AtomicLong unclear = new AtomicLong();
    /** The address clients know server-2 by, and failures whose description does not name it. */
    final String killedAddress;
    final AtomicLong failedElsewhere = new AtomicLong();
    final Map<String, String> samples = new ConcurrentHashMap<>();
    final List<Thread> callers = new ArrayList<>();
    private volatile boolean stopped;
    private volatile CountDownLatch phase = new CountDownLatch(PHASE_CALLS);
    private long phaseStart = System.nanoTime();
    private long phaseStartIds;

    Load(RpcClient client, String killedAddress) {
      this.client = client;
      this.killedAddress = killedAddress;
    }

    void start() {
      phaseStart = System.nanoTime();
      for (int i = 0; i < CALLERS; i++) {
        boolean slow = i < SLOW_CALLERS;
        Thread t = new Thread(() -> callUntilStopped(slow), "caller-" + i);
        t.setDaemon(true);
        callers.add(t);
        t.start();
      }
    }

    private void callUntilStopped(boolean slow) {
      CallOptions options = CallOptions.DEFAULT.withTimeout(DEADLINE);
      while (!stopped) {
        long next = nextId.getAndIncrement();
        if (next >= MAX_CALLS) {
          nextId.set(MAX_CALLS);
          return;
        }
        int id = (int) next;
        byte[] request = ByteBuffer.allocate(9).putLong(id).put((byte) (slow ? 1 : 0)).array();
        long start = System.nanoTime();
        int result;
        try {
          client.unaryCall(idempotent(id) ? READ : WRITE, request, options);
          result = OK;
        } catch (StatusException e) {
          Status s = e.status();
          result = 2 + s.code().ordinal();
          String description = s.description();
          if (description == null || description.isBlank()) {
            unclear.incrementAndGet();
            samples.putIfAbsent("unclear " + s.code(), String.valueOf(s));
          } else if (!description.contains(killedAddress)) {
            failedElsewhere.incrementAndGet();
            samples.putIfAbsent(s.code() + " not naming server-2", description);
          } else {
            samples.putIfAbsent(s.code() + (idempotent(id) ? " idempotent" : " non-idempotent"), description);
          }
        } catch (RuntimeException e) {
          result = 2 + Status.Code.UNKNOWN.ordinal();
          unclear.incrementAndGet();
          samples.putIfAbsent("unclear " + e.getClass().getName(), String.valueOf(e));
        }
        long took = System.nanoTime() - start;
        longestNanos.accumulateAndGet(took, Math::max);
        if (took > DEADLINE.plus(LATE).toNanos()) {
          late.incrementAndGet();
        }
        outcome.set(id, result);
        phase.countDown();
      }
    }

    /** Waits until {@link #PHASE_CALLS} more calls ended, or {@link #PHASE_LIMIT}; says what the phase saw. */
    String awaitPhase() throws InterruptedException {
      boolean reached = phase.await(PHASE_LIMIT.toMillis(), TimeUnit.MILLISECONDS);
      long now = System.nanoTime();
      long ids = Math.min(nextId.get(), MAX_CALLS);
      String said = (ids - phaseStartIds) + " calls issued since the step before, over " + ms(now - phaseStart) + " ms"
          + (reached ? "" : " (phase limit reached before " + PHASE_CALLS + " calls ended)");
      phaseStartIds = ids;
      phaseStart = now;
      phase = new CountDownLatch(PHASE_CALLS);
      return said;
    }

    /** Stops issuing calls and waits for the callers to end their last call (at most a deadline and a bit). */
    void stop() throws InterruptedException {
      stopped = true;
      long end = System.nanoTime() + DEADLINE.plus(LATE).plusSeconds(2).toNanos();
      for (Thread t : callers) {
        t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime())));
      }
    }

    int hungCallers() {
      return (int) callers.stream().filter(Thread::isAlive).count();
    }
  }

  /** The counts, from the client's outcomes and the servers' ledgers. */
  static final class Report {
    final long issued;
    long succeeded;
    long failed;
    final Map<String, Long> failedByStatus = new TreeMap<>();
    final long late;
    final long longestMs;
    final long unclear;
    final long failedElsewhere;
    final Map<String, String> unclearSamples = new TreeMap<>();
    final Map<String, String> samples = new TreeMap<>();
    final int hungCallers;
    final Map<String, Long> executionsByServer = new TreeMap<>();
    long executions;
    long idempotentCalls;
    long idempotentSucceeded;
    final Map<String, Long> idempotentFailedByStatus = new TreeMap<>();
    long idempotentDuplicates;
    long nonIdempotentDuplicates;
    long executedNotIssued;
    long succeededWithoutExecution;
    long drainedFailed;
    final Map<String, Long> failedByWhereTheyRan = new TreeMap<>();
    final int drainedInFlightAtGoaway;
    final int killedInFlightAtKill;

    Report(Load load, LedgerServer s1, LedgerServer s2, LedgerServer s3, int inFlightAtKill, long goawayAt) {
      issued = Math.min(load.nextId.get(), MAX_CALLS);
      late = load.late.get();
      longestMs = ms(load.longestNanos.get());
      unclear = load.unclear.get();
      failedElsewhere = load.failedElsewhere.get();
      hungCallers = load.hungCallers();
      load.samples.forEach((k, v) -> (k.startsWith("unclear") ? unclearSamples : samples).put(k, v));
      LedgerServer[] servers = {s1, s2, s3};
      Status.Code[] codes = Status.Code.values();
      for (int id = 0; id < MAX_CALLS; id++) {
        int runs = 0;
        @Nullable String ranOn = null;
        for (LedgerServer s : servers) {
          int n = s.executions.get(id);
          if (n > 0) {
            runs += n;
            executionsByServer.merge(s.name, (long) n, Long::sum);
            ranOn = ranOn == null ? s.name : ranOn + "+" + s.name;
          }
        }
        executions += runs;
        if (id >= issued) {
          executedNotIssued += runs;
          continue;
        }
        int o = load.outcome.get(id);
        boolean idem = idempotent(id);
        if (runs > 1) {
          if (idem) {
            idempotentDuplicates++;
          } else {
            nonIdempotentDuplicates++;
          }
        }
        if (idem) {
          idempotentCalls++;
        }
        if (o == OK) {
          succeeded++;
          if (idem) {
            idempotentSucceeded++;
          }
          if (runs == 0) {
            succeededWithoutExecution++;
          }
        } else if (o != IN_FLIGHT) {
          failed++;
          String code = codes[o - 2].name();
          failedByStatus.merge(code, 1L, Long::sum);
          if (idem) {
            idempotentFailedByStatus.merge(code, 1L, Long::sum);
          }
          failedByWhereTheyRan.merge(ranOn == null ? "nowhere" : ranOn, 1L, Long::sum);
          if (s3.executions.get(id) > 0) {
            drainedFailed++;
          }
        }
      }
      killedInFlightAtKill = inFlightAtKill;
      drainedInFlightAtGoaway = s3.slowInFlightAt(goawayAt);
    }

    void print() {
      String p = "[kill-under-load] ";
      System.out.println(p + "issued " + issued + ", succeeded " + succeeded + ", failed " + failed + " "
          + failedByStatus + ", not ended " + (issued - succeeded - failed) + ", callers hung " + hungCallers
          + "; longest call " + longestMs + " ms (deadline " + DEADLINE.toMillis() + " ms), ended over "
          + LATE.toMillis() + " ms after their deadline " + late);
      System.out.println(p + "failed calls by where they ran: " + failedByWhereTheyRan + "; failures whose"
          + " status does not name server-2 (the killed one) " + failedElsewhere);
      System.out.println(p + "executions " + executions + " " + executionsByServer + "; ids run more than once:"
          + " non-idempotent " + nonIdempotentDuplicates + ", idempotent " + idempotentDuplicates
          + "; executions of ids never issued " + executedNotIssued + "; successes no server ran "
          + succeededWithoutExecution);
      System.out.println(p + "idempotent calls " + idempotentCalls + ": succeeded " + idempotentSucceeded
          + ", failed " + idempotentFailedByStatus);
      System.out.println(p + "server-2 (killed): slow calls in flight at the kill " + killedInFlightAtKill
          + "; server-3 (drained): slow calls in flight at its GOAWAY " + drainedInFlightAtGoaway
          + ", calls it ran that failed " + drainedFailed);
      samples.forEach((k, v) -> System.out.println(p + "a " + k + " failure: " + v));
      unclearSamples.forEach((k, v) -> System.out.println(p + k + ": " + v));
    }
  }
}
