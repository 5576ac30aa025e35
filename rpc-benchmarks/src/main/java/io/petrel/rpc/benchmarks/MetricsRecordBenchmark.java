package io.petrel.rpc.benchmarks;

import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.petrel.rpc.Status;
import io.petrel.rpc.internal.CallMetrics;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What metrics add to one call, without I/O noise: the record Petrel makes when a call ends on one side
 * (timer by status plus request and response size), against the no-registry path. A call records once on
 * the server and once on the client; set the difference beside the CPU per call of the sync benchmark.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@State(Scope.Benchmark)
public class MetricsRecordBenchmark {
  private CallMetrics on;
  private long nanos = 123_456;

  @Setup
  public void setUp() {
    on = new CallMetrics(new SimpleMeterRegistry(), "server", Tags.of("server", "bench"),
        EchoServiceRpc.METHOD_ECHO, false);
  }

  @Benchmark
  public void recordOff() {
    CallMetrics.NOOP.record(Status.Code.OK, nanos++, 581, 527);
  }

  @Benchmark
  public void recordOn() {
    on.record(Status.Code.OK, nanos++, 581, 527);
  }
}
