package io.petrel.rpc.benchmarks;

import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Recorder;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * Pipelined asynchronous calls with a bounded window: at most {@code window} calls are in flight at once (the
 * rpcx benchmark's concurrency of 1000 or 5000 outstanding requests); a caller waits for a free slot before it
 * sends. The score is calls sent per second, which in steady state is calls answered per second. Round trips
 * are recorded in HdrHistogram (rtt.* secondary results) on completion.
 *
 * <p>With {@code rate} > 0 the callers send at that constant total rate instead of as fast as the window allows,
 * and each round trip is counted from when its call was due, not from when it was sent: a stall of the system
 * (or a full window) is charged to every call it delayed, which corrects for coordinated omission.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 5, time = 5)
@Measurement(iterations = 5, time = 5)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Threads(1)
public class AsyncCallBenchmark {

  /** The window and the rate, shared by all callers. */
  @State(Scope.Benchmark)
  public static class Window {
    /** Calls in flight at most, over all threads. */
    @Param({"1000"})
    public int window;

    /** Calls per second over all threads; 0: as fast as the window allows. */
    @Param({"0"})
    public int rate;

    Semaphore permits;
    Recorder recorder;

    @Setup(Level.Trial)
    public void open(Target target) {
      if (window <= 0) {
        throw new IllegalArgumentException("window must be > 0: " + window);
      }
      permits = new Semaphore(window);
      recorder = new Recorder(3);
      Measurements.register(recorder::getIntervalHistogram);
      // Let every call in flight end before the client closes.
      target.beforeClose(() -> {
        try {
          if (!permits.tryAcquire(window, 30, TimeUnit.SECONDS)) {
            System.err.println("async benchmark: " + (window - permits.availablePermits())
                + " calls still in flight after 30 s");
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
    }
  }

  /** One caller's schedule in constant-rate mode. */
  @State(Scope.Thread)
  public static class Pacer {
    long intervalNanos;
    long next;

    @Setup(Level.Iteration)
    public void start(Window w, ThreadParams threads) {
      intervalNanos = w.rate > 0 ? (long) (1e9 * threads.getThreadCount() / w.rate) : 0;
      next = System.nanoTime();
    }
  }

  @Benchmark
  public void call(Target target, Window w, Pacer pacer) throws InterruptedException {
    long start;
    if (pacer.intervalNanos > 0) {
      start = pacer.next;
      pacer.next += pacer.intervalNanos;
      long wait;
      while ((wait = start - System.nanoTime()) > 0) {
        LockSupport.parkNanos(wait);
      }
      w.permits.acquire();
    } else {
      w.permits.acquire();
      start = System.nanoTime();
    }
    BenchClient client = target.client;
    client.callAsync().whenComplete((reply, error) -> {
      try {
        if (error != null) {
          Measurements.failure(error);
        } else {
          long end = System.nanoTime();
          client.verify(reply);
          w.recorder.recordValue(end - start);
        }
      } catch (RuntimeException e) {
        Measurements.failure(e);
      } finally {
        w.permits.release();
      }
    });
  }
}
