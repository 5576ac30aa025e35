package io.petrel.rpc.benchmarks;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.HdrHistogram.Histogram;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.profile.InternalProfiler;
import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ScalarResult;
import org.jspecify.annotations.Nullable;

/**
 * Adds to each iteration's results the figures JMH does not measure itself: the server's CPU time per call
 * ({@code server.cpu}, microseconds of server process CPU time per call served), the benchmark JVM's
 * ({@code client.cpu}, all its threads, per call it made) and, from HdrHistogram, the
 * round trip of every call ({@code rtt.avg}, {@code rtt.p50} ... {@code rtt.p999}, {@code rtt.max}, in
 * microseconds), and the share of this machine's CPU time its hypervisor took ({@code machine.steal}, percent,
 * the highest of the iterations; Linux only), and the calls that failed and that were refused
 * ({@code calls.failed}, {@code calls.refused}, summed over the iterations). Percentiles are per iteration; JMH reports their mean over the measurement iterations.
 * {@link BenchmarkMain} enables it; with JMH's own main, add {@code -prof io.petrel.rpc.benchmarks.PetrelProfiler}.
 */
public final class PetrelProfiler implements InternalProfiler {
  private long @Nullable [] stealAtStart;

  @Override
  public String getDescription() {
    return "Petrel benchmarks: server CPU time per call and HdrHistogram round-trip percentiles";
  }

  @Override
  public void beforeIteration(BenchmarkParams benchmarkParams, IterationParams iterationParams) {
    Measurements.beginInterval();
    stealAtStart = StealTime.sample();
  }

  @Override
  public Collection<? extends Result> afterIteration(BenchmarkParams benchmarkParams,
      IterationParams iterationParams, IterationResult result) {
    List<Result> out = new ArrayList<>();
    double steal = StealTime.percent(stealAtStart, StealTime.sample());
    if (!Double.isNaN(steal)) {
      out.add(new ScalarResult("machine.steal", steal, "%", AggregationPolicy.MAX));
    }
    long[] failures = Measurements.intervalFailures();
    out.add(new ScalarResult("calls.failed", failures[0], "calls", AggregationPolicy.SUM));
    out.add(new ScalarResult("calls.refused", failures[1], "calls", AggregationPolicy.SUM));
    double cpu = Measurements.intervalServerCpuNanosPerCall();
    if (!Double.isNaN(cpu)) {
      out.add(new ScalarResult("server.cpu", cpu / 1000.0, "us/call", AggregationPolicy.AVG));
    }
    Histogram h = Measurements.intervalLatencies();
    double clientCpu = Measurements.intervalClientCpuNanosPerCall(h);
    if (!Double.isNaN(clientCpu)) {
      out.add(new ScalarResult("client.cpu", clientCpu / 1000.0, "us/call", AggregationPolicy.AVG));
    }
    if (h != null && h.getTotalCount() > 0) {
      out.add(us("rtt.avg", h.getMean()));
      out.add(us("rtt.p50", h.getValueAtPercentile(50)));
      out.add(us("rtt.p90", h.getValueAtPercentile(90)));
      out.add(us("rtt.p99", h.getValueAtPercentile(99)));
      out.add(us("rtt.p999", h.getValueAtPercentile(99.9)));
      out.add(new ScalarResult("rtt.max", h.getMaxValue() / 1000.0, "us", AggregationPolicy.MAX));
      out.add(new ScalarResult("rtt.count", h.getTotalCount(), "calls", AggregationPolicy.SUM));
    }
    return out;
  }

  private static ScalarResult us(String label, double nanos) {
    return new ScalarResult(label, nanos / 1000.0, "us", AggregationPolicy.AVG);
  }
}
