package io.petrel.rpc.benchmarks;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.jspecify.annotations.Nullable;

/**
 * What the calls of one seed run came to: successes with their latency (an HdrHistogram in nanoseconds),
 * failed and refused calls, and how often each return value came back. Only calls that end while the run is
 * {@linkplain #begin() measuring} count, so that a warm-up is left out. Thread-safe.
 *
 * <p>A call is <em>refused</em> when the server or the client turned it away without running it: status
 * RESOURCE_EXHAUSTED (a full queue, too many calls in flight) or UNAVAILABLE (no connection), and a refused
 * TCP connection. Every other error, and a reply that is not the one the server must send, is <em>failed</em>.
 * No failure stops a run: it is counted, and the first of each kind is kept for the report.
 */
final class Tally {
  private final Recorder latency = new Recorder(3);
  private final LongAdder ok = new LongAdder();
  private final LongAdder failed = new LongAdder();
  private final LongAdder refused = new LongAdder();
  private final Map<String, LongAdder> returns = new ConcurrentHashMap<>();
  private final AtomicReference<String> firstFailure = new AtomicReference<>();
  private final AtomicReference<String> firstRefusal = new AtomicReference<>();
  private volatile boolean measuring;
  private volatile long begunNanos;
  private volatile long endedNanos;

  /** Starts counting (the end of the warm-up). */
  void begin() {
    latency.reset();
    begunNanos = System.nanoTime();
    measuring = true;
  }

  /** Stops counting. */
  void end() {
    measuring = false;
    endedNanos = System.nanoTime();
  }

  /**
   * Stops counting, with the measured window closed at {@code nanoTime} (an open-loop run stops counting
   * once its last calls are back, but its window closed when the last call was due).
   */
  void endAt(long nanoTime) {
    measuring = false;
    endedNanos = nanoTime;
  }

  boolean measuring() {
    return measuring;
  }

  /** Seconds between {@link #begin()} and {@link #end()}. */
  double seconds() {
    return (endedNanos - begunNanos) / 1e9;
  }

  /** A call that succeeded after {@code nanos}, returning {@code value} (null: not tallied by value). */
  void success(long nanos, @Nullable Object value) {
    if (!measuring) {
      return;
    }
    ok.increment();
    latency.recordValue(Math.max(1, Math.min(nanos, MAX_NANOS)));
    if (value != null) {
      returns.computeIfAbsent(String.valueOf(value), k -> new LongAdder()).increment();
    }
  }

  /** A call that ended with {@code t}: counted as refused or failed. */
  void failure(Throwable t) {
    if (!measuring) {
      return;
    }
    Throwable cause = unwrap(t);
    if (isRefusal(cause)) {
      refused.increment();
      firstRefusal.compareAndSet(null, describe(cause));
    } else {
      failed.increment();
      firstFailure.compareAndSet(null, describe(cause));
    }
  }

  /** The counts so far, with the latency recorded since {@link #begin()}. */
  SeedRun toRun(String seed, Map<String, String> labels, Map<String, Long> counters) {
    Histogram h = latency.getIntervalHistogram();
    Map<String, Long> r = new TreeMap<>();
    returns.forEach((k, v) -> r.put(k, v.sum()));
    String error = firstFailure.get() != null ? "failed: " + firstFailure.get()
        : firstRefusal.get() != null ? "refused: " + firstRefusal.get() : null;
    return new SeedRun(seed, labels, ok.sum(), failed.sum(), refused.sum(), seconds(), h, counters, r, error);
  }

  /** Longest latency recorded: one hour (a call that takes longer is recorded as one hour). */
  static final long MAX_NANOS = 3_600_000_000_000L;

  static Throwable unwrap(Throwable t) {
    Throwable c = t;
    while ((c instanceof CompletionException || c instanceof ExecutionException) && c.getCause() != null) {
      c = c.getCause();
    }
    return c;
  }

  /** RESOURCE_EXHAUSTED or UNAVAILABLE (Petrel or gRPC-java), or a refused TCP connection. */
  static boolean isRefusal(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof io.petrel.rpc.StatusException se) {
        return se.code() == io.petrel.rpc.Status.Code.RESOURCE_EXHAUSTED
            || se.code() == io.petrel.rpc.Status.Code.UNAVAILABLE;
      }
      if (c instanceof io.grpc.StatusRuntimeException se) {
        return se.getStatus().getCode() == io.grpc.Status.Code.RESOURCE_EXHAUSTED
            || se.getStatus().getCode() == io.grpc.Status.Code.UNAVAILABLE;
      }
      if (c instanceof java.net.ConnectException) {
        return true;
      }
      if (c.getCause() == c) {
        break;
      }
    }
    return false;
  }

  private static String describe(Throwable t) {
    if (t instanceof CancellationException) {
      return "cancelled";
    }
    String m = t.getMessage();
    String s = t.getClass().getSimpleName() + (m == null ? "" : ": " + m);
    return s.length() > 300 ? s.substring(0, 300) + "..." : s;
  }
}
