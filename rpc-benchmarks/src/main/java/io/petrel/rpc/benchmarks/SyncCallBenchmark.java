package io.petrel.rpc.benchmarks;

import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Recorder;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * Closed-loop blocking callers: each JMH thread (-t N: concurrency N) makes one call, waits for the reply,
 * and calls again. Throughput mode gives calls per second over all threads; SampleTime mode JMH's sampled
 * latencies. In both modes every round trip is also recorded in HdrHistogram (rtt.* secondary results).
 *
 * <p>Warm-up is 25 s by default: gRPC-java needs about 20 s of load before its JIT settles on 2 cores, and
 * every framework gets the same.
 */
@BenchmarkMode({Mode.Throughput, Mode.SampleTime})
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 5, time = 5)
@Measurement(iterations = 5, time = 5)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Threads(16)
public class SyncCallBenchmark {

  /**
   * The round-trip recorders, at most {@link #STRIPES}: a caller records into the one of its thread index modulo
   * their number, so that up to 128 callers each have their own (uncontended), and 5000 callers do not hold
   * 5000 histograms (about 300 KiB each once they span milliseconds: more than the benchmark JVM's heap).
   */
  @State(Scope.Benchmark)
  public static class Recorders {
    static final int STRIPES = 128;
    Recorder[] stripes;

    @Setup(Level.Trial)
    public void register(Target target, ThreadParams threads) {
      stripes = new Recorder[Math.min(STRIPES, threads.getThreadCount())];
      for (int i = 0; i < stripes.length; i++) {
        Recorder r = new Recorder(3);
        stripes[i] = r;
        Measurements.register(r::getIntervalHistogram);
      }
    }
  }

  /** One caller's recorder (shared with the callers of the same stripe). */
  @State(Scope.Thread)
  public static class Caller {
    Recorder recorder;

    @Setup(Level.Trial)
    public void pick(Recorders recorders, ThreadParams thread) {
      recorder = recorders.stripes[thread.getThreadIndex() % recorders.stripes.length];
    }
  }

  /**
   * One call. A call that fails, or whose reply is wrong, is counted ({@code calls.failed},
   * {@code calls.refused}) and the run goes on; its round trip is not recorded.
   */
  @Benchmark
  public Object call(Target target, Caller caller) {
    long start = System.nanoTime();
    try {
      Object reply = target.client.call();
      long end = System.nanoTime();
      target.client.verify(reply);
      caller.recorder.recordValue(end - start);
      return reply;
    } catch (Exception e) {
      Measurements.failure(e);
      return e;
    }
  }
}
