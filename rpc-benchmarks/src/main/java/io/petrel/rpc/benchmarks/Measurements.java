package io.petrel.rpc.benchmarks;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import org.HdrHistogram.Histogram;
import org.jspecify.annotations.Nullable;

/**
 * What the benchmarks in this JVM measure beside JMH's own figures, read by {@link PetrelProfiler} between
 * iterations: the round-trip histograms of every caller, and the server that is being measured (for its CPU
 * time per call). JMH's profiler API gives no other way in, hence this one static holder.
 */
final class Measurements {
  private static final List<Supplier<Histogram>> RECORDERS = new CopyOnWriteArrayList<>();
  private static volatile @Nullable Endpoints server;
  private static volatile Endpoints.@Nullable ServerSample lastSample;
  /** The last interval of a trial that has ended: JMH reads it after the trial's teardown closed the server. */
  private static volatile @Nullable Histogram endedLatencies;
  private static volatile double endedCpu = Double.NaN;
  private static volatile boolean ended;
  private static volatile double endedClientCpu = Double.NaN;
  /** This (client) JVM's CPU time when the current interval began. */
  private static volatile long clientCpuAtStart = -1;
  /** Calls that failed, and calls that were refused ({@link Tally#isRefusal}), since the interval began. */
  private static final java.util.concurrent.atomic.LongAdder FAILED = new java.util.concurrent.atomic.LongAdder();
  private static final java.util.concurrent.atomic.LongAdder REFUSED = new java.util.concurrent.atomic.LongAdder();
  private static final java.util.concurrent.atomic.AtomicBoolean TOLD = new java.util.concurrent.atomic.AtomicBoolean();
  private static volatile long endedFailed;
  private static volatile long endedRefused;

  private Measurements() {}

  /** Starts a trial against {@code endpoints}: forgets the previous trial's recorders. */
  static void beginTrial(Endpoints endpoints) {
    RECORDERS.clear();
    FAILED.reset();
    REFUSED.reset();
    TOLD.set(false);
    ended = false;
    server = endpoints;
    lastSample = sampleOrNull();
  }

  /**
   * Ends a trial, before its client and server close: keeps the last interval's figures for the profiler,
   * which JMH calls for the last iteration only after the trial's teardown.
   */
  static void endTrial() {
    endedLatencies = liveLatencies();
    endedCpu = liveServerCpuNanosPerCall();
    endedClientCpu = clientCpuNanosPerCall(endedLatencies);
    endedFailed = FAILED.sum();
    endedRefused = REFUSED.sum();
    ended = true;
    server = null;
    lastSample = null;
    RECORDERS.clear();
  }

  /** Adds a recorder; {@code intervalHistogram} returns what was recorded since its previous call. */
  static void register(Supplier<Histogram> intervalHistogram) {
    RECORDERS.add(intervalHistogram);
  }

  /** Starts an interval: drops what the recorders hold and notes the server's counters. */
  static void beginInterval() {
    clientCpuAtStart = ControlServer.processCpuNanos();
    FAILED.reset();
    REFUSED.reset();
    for (Supplier<Histogram> r : RECORDERS) {
      Histogram unused = r.get(); // drained: the interval starts from nothing
    }
    Endpoints.ServerSample s = sampleOrNull();
    if (s != null) {
      lastSample = s;
    }
  }

  /**
   * A call that failed (or was refused: RESOURCE_EXHAUSTED, UNAVAILABLE, a refused connection): counted, and
   * the first of a trial printed to stderr; the benchmark goes on.
   */
  static void failure(Throwable t) {
    Throwable c = Tally.unwrap(t);
    (Tally.isRefusal(c) ? REFUSED : FAILED).increment();
    if (TOLD.compareAndSet(false, true)) {
      System.err.println("benchmark: a call " + (Tally.isRefusal(c) ? "was refused" : "failed") + " (counted in"
          + " calls.failed / calls.refused; the run goes on): " + c);
    }
  }

  /** {failed, refused} since the interval began. */
  static long[] intervalFailures() {
    return ended ? new long[] {endedFailed, endedRefused} : new long[] {FAILED.sum(), REFUSED.sum()};
  }

  /** The round trips recorded since {@link #beginInterval}, or null if no benchmark records any. */
  static @Nullable Histogram intervalLatencies() {
    return ended ? endedLatencies : liveLatencies();
  }

  private static @Nullable Histogram liveLatencies() {
    Histogram sum = null;
    for (Supplier<Histogram> r : RECORDERS) {
      Histogram h = r.get();
      if (sum == null) {
        sum = new Histogram(3);
      }
      sum.add(h);
    }
    return sum;
  }

  /**
   * This JVM's CPU nanoseconds (all its threads: callers, event loops, GC, JIT, JMH) per call recorded in
   * {@code latencies}, since the interval began; NaN if unknown.
   */
  static double intervalClientCpuNanosPerCall(@Nullable Histogram latencies) {
    return ended ? endedClientCpu : clientCpuNanosPerCall(latencies);
  }

  private static double clientCpuNanosPerCall(@Nullable Histogram latencies) {
    long start = clientCpuAtStart;
    if (start < 0 || latencies == null || latencies.getTotalCount() == 0) {
      return Double.NaN;
    }
    return (double) (ControlServer.processCpuNanos() - start) / latencies.getTotalCount();
  }

  /** Server CPU nanoseconds per call served since the interval began, or NaN if unknown. */
  static double intervalServerCpuNanosPerCall() {
    return ended ? endedCpu : liveServerCpuNanosPerCall();
  }

  private static double liveServerCpuNanosPerCall() {
    Endpoints.ServerSample before = lastSample;
    Endpoints.ServerSample now = sampleOrNull();
    if (now == null || before == null) {
      return Double.NaN;
    }
    lastSample = now;
    long calls = now.calls() - before.calls();
    return calls > 0 ? (double) (now.cpuNanos() - before.cpuNanos()) / calls : Double.NaN;
  }

  private static Endpoints.@Nullable ServerSample sampleOrNull() {
    Endpoints e = server;
    if (e == null) {
      return null;
    }
    try {
      return e.sample();
    } catch (IOException ex) {
      System.err.println("cannot read the benchmark server's counters: " + ex);
      return null;
    }
  }
}
