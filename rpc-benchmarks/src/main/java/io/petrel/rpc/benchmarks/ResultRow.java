package io.petrel.rpc.benchmarks;

import java.util.Map;

/**
 * One line of a report: one framework, payload and load, with the figures of one JMH run. Latencies are in
 * microseconds, throughput in calls per second; NaN where the run did not measure a figure.
 *
 * @param benchmark the JMH benchmark's simple name (SyncCallBenchmark, AsyncCallBenchmark)
 * @param load callers for sync benchmarks, calls in flight for async ones
 * @param rate the constant rate of an async run, 0 for as fast as the window allows
 * @param connections TCP connections from the client JVM
 * @param io the I/O of the run: the client's {@code io} parameter ("auto", "epoll", "nio"), or "client X, server Y"
 *     when the server was started with another {@code --io}
 * @param jdk the benchmark JVM's version as JMH reports it ("17.0.15"); empty when the result does not say
 * @param runs how many runs the figures are the medians of
 * @param steal the highest share (percent) of CPU time the hypervisor took during a measured iteration, over
 *     all runs of the row; NaN where not measured
 * @param tpsRuns each run's TPS by its run (the result file it came from; also avgRuns, p99Runs), in the order the
 *     runs were given: ratios are taken between two rows' figures of the same run, then their median
 * @param serverCpuRuns each run's server CPU per call in microseconds, likewise (empty where not measured)
 * @param failed calls that failed, over all runs' measured iterations (JMH's TPS counts them as calls made)
 * @param refused calls that were refused (RESOURCE_EXHAUSTED, UNAVAILABLE, a refused connection), likewise
 */
record ResultRow(
    String benchmark,
    Framework framework,
    Payload payload,
    int load,
    int rate,
    int connections,
    String io,
    String jdk,
    int runs,
    double tps,
    double avg,
    double p50,
    double p90,
    double p99,
    double p999,
    double serverCpu,
    double clientCpu,
    double steal,
    Map<String, Double> tpsRuns,
    Map<String, Double> avgRuns,
    Map<String, Double> p99Runs,
    Map<String, Double> serverCpuRuns,
    long failed,
    long refused) {

  boolean async() {
    return benchmark.startsWith("Async");
  }

  /**
   * Payload megabytes (10^6 bytes) per second, request and reply bodies together ({@link Payload#bytesPerCall}):
   * the calls/s times what each call moves both ways, without headers; NaN without a TPS.
   */
  double megabytesPerSecond() {
    return tps * payload.bytesPerCall() / 1e6;
  }

  /** Calls that did not succeed, failed or refused. */
  long unsuccessful() {
    return failed + refused;
  }

  /** "16 callers", "window 1000", "window 1000 @ 20000/s". */
  String loadLabel() {
    if (!async()) {
      return load + (load == 1 ? " caller" : " callers");
    }
    return "window " + load + (rate > 0 ? " @ " + rate + "/s" : "");
  }
}
