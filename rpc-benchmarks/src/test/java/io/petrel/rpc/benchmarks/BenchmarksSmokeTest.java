package io.petrel.rpc.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;

/**
 * Runs every benchmark (every framework of the default run and payload; SampleTime and the constant-rate mode
 * with BenchmarkMessage; the TLS frameworks with BenchmarkMessage) for one very short iteration against a server
 * embedded in this JVM. It proves that each one works and that the report can be made from its results; it times
 * nothing.
 */
class BenchmarksSmokeTest {
  /** The frameworks a run measures unless told otherwise: Target's default {@code @Param} list. */
  private static final List<Framework> DEFAULT_FRAMEWORKS = defaultFrameworks();
  /** The payloads a run measures unless told otherwise (the larger opaque bodies are asked for by name). */
  private static final List<Payload> DEFAULT_PAYLOADS = defaultPayloads();

  private static BenchmarkServer server;

  private static List<Framework> defaultFrameworks() {
    try {
      String[] names = Target.class.getField("framework").getAnnotation(org.openjdk.jmh.annotations.Param.class)
          .value();
      return java.util.Arrays.stream(names).map(Framework::valueOf).toList();
    } catch (NoSuchFieldException e) {
      throw new AssertionError(e);
    }
  }

  private static List<Payload> defaultPayloads() {
    try {
      String[] names = Target.class.getField("payload").getAnnotation(org.openjdk.jmh.annotations.Param.class)
          .value();
      return java.util.Arrays.stream(names).map(Payload::valueOf).toList();
    } catch (NoSuchFieldException e) {
      throw new AssertionError(e);
    }
  }

  @TempDir
  static Path dir;

  @BeforeAll
  static void startServer() throws Exception {
    server = BenchmarkServer.start(ServerOptions.parse("--bind", "127.0.0.1", "--port", "0", "--worker-threads", "2"));
  }

  @AfterAll
  static void stopServer() {
    if (server != null) {
      server.close();
    }
  }

  private static ChainedOptionsBuilder shortRun(String benchmark, Path json) {
    return shortRun(benchmark, json, server.controlPort());
  }

  /** One 100 ms iteration in this JVM against the benchmark server at {@code controlPort}, results to {@code json}. */
  static ChainedOptionsBuilder shortRun(String benchmark, Path json, int controlPort) {
    return new OptionsBuilder()
        .include("\\." + benchmark + "\\.")
        .forks(0)
        .warmupIterations(0)
        .measurementIterations(1)
        .measurementTime(TimeValue.milliseconds(100))
        .threads(1)
        .param("host", "127.0.0.1")
        .param("port", Integer.toString(controlPort))
        .addProfiler(PetrelProfiler.class)
        .shouldFailOnError(true)
        .verbosity(VerboseMode.SILENT)
        .resultFormat(ResultFormatType.JSON)
        .result(json.toString());
  }

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES)
  void everySyncBenchmarkRunsAgainstEveryFrameworkWithEveryPayload() throws Exception {
    Path json = dir.resolve("sync.json");
    Collection<RunResult> results = new Runner(shortRun("SyncCallBenchmark", json)
        .mode(Mode.Throughput)
        .threads(2)
        .build()).run();

    int frameworks = DEFAULT_FRAMEWORKS.size();
    int payloads = DEFAULT_PAYLOADS.size();
    assertThat(results).hasSize(frameworks * payloads);
    for (RunResult r : results) {
      assertThat(r.getPrimaryResult().getScore()).as(r.getParams().toString()).isPositive();
      assertThat(r.getSecondaryResults()).as(r.getParams().toString()).containsKeys("rtt.p99", "server.cpu");
    }
    // SampleTime once per framework (one thread: JMH's trial teardown makes other threads wait a second).
    Path sampled = dir.resolve("sample.json");
    Collection<RunResult> samples = new Runner(shortRun("SyncCallBenchmark", sampled)
        .mode(Mode.SampleTime)
        .param("payload", Payload.MESSAGE.name())
        .build()).run();
    assertThat(samples).hasSize(frameworks);
    samples.forEach(r -> assertThat(r.getPrimaryResult().getSampleCount()).isPositive());

    List<ResultRow> rows = Report.parse(parse(json));
    assertThat(rows).hasSize(frameworks * payloads);
    String md = Report.markdown(rows, Charts.write(rows, dir));
    for (Framework f : DEFAULT_FRAMEWORKS) {
      assertThat(md).contains("| " + f.label() + " | 2 callers |");
    }
    assertThat(md).doesNotContain("TLS");
    assertThat(md).contains("### Ratios (blocking callers)");
    assertThat(dir.resolve("latency-message-2.png")).isNotEmptyFile();
    assertThat(Report.parse(parse(sampled))).allSatisfy(r -> assertThat(r.p99()).isPositive());
  }

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES)
  void everyAsyncBenchmarkRunsWithAWindowAndAtAConstantRate() throws Exception {
    Path json = dir.resolve("async.json");
    Collection<RunResult> results = new Runner(shortRun("AsyncCallBenchmark", json)
        .param("window", "16")
        .build()).run();
    assertThat(results).hasSize(DEFAULT_FRAMEWORKS.size() * DEFAULT_PAYLOADS.size());

    Path paced = dir.resolve("paced.json");
    results = new java.util.ArrayList<>(results);
    results.addAll(new Runner(shortRun("AsyncCallBenchmark", paced)
        .param("window", "16")
        .param("rate", "2000")
        .param("payload", Payload.MESSAGE.name())
        .build()).run());
    for (RunResult r : results) {
      assertThat(r.getPrimaryResult().getScore()).as(r.getParams().toString()).isPositive();
      assertThat(r.getSecondaryResults()).as(r.getParams().toString()).containsKeys("rtt.p50", "rtt.p999");
    }
    List<ResultRow> rows = new java.util.ArrayList<>(Report.parse(parse(json)));
    rows.addAll(Report.parse(parse(paced)));
    String md = Report.markdown(rows, Charts.write(rows, dir));
    assertThat(md).contains("window 16 @ 2000/s").contains("### Pipelined async calls, BenchmarkMessage");
    assertThat(dir.resolve("latency-async-message-window16-rate2000.png")).isNotEmptyFile();
  }

  @Test
  @Timeout(value = 2, unit = TimeUnit.MINUTES)
  void refusedCallsAreCountedAndTheRunGoesOn() throws Exception {
    // One business thread and no queue: most of 8 callers' calls are refused with RESOURCE_EXHAUSTED.
    try (BenchmarkServer narrow = BenchmarkServer.start(ServerOptions.parse("--bind", "127.0.0.1", "--port", "0",
        "--worker-threads", "1", "--frameworks", "petrel", "--business-threads", "1", "--business-queue", "0"))) {
      Path json = dir.resolve("refused.json");
      Collection<RunResult> results = new Runner(shortRun("SyncCallBenchmark", json, narrow.controlPort())
          .measurementTime(TimeValue.milliseconds(300))
          .threads(8)
          .mode(Mode.Throughput)
          .param("framework", "PETREL")
          .param("payload", Payload.MESSAGE.name())
          .build()).run();
      assertThat(results).hasSize(1);
      RunResult r = results.iterator().next();
      assertThat(r.getSecondaryResults().get("calls.refused").getScore()).isPositive();
      assertThat(r.getSecondaryResults().get("calls.failed").getScore()).isZero();
      ResultRow row = Report.parse(parse(json)).get(0);
      assertThat(row.refused()).isPositive();
      assertThat(Report.markdown(List.of(row), List.of())).contains("| failed | refused |")
          .contains(" | 0 | " + row.refused() + " |");
    }
  }

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES)
  void aOneMebibyteBodyGoesBothWaysThroughEveryFrameworkBlockingAndPipelined() throws Exception {
    // Each framework's default limits: Petrel's maxFrameSize (8 MiB), gRPC-java's maxInboundMessageSize (4 MiB)
    // and the echo's 16 MiB frames take 1 MiB; every reply is checked to be the whole body (BenchClient.verify),
    // a short one counting as failed.
    Path sync = dir.resolve("sync-1m.json");
    Collection<RunResult> results = new java.util.ArrayList<>(new Runner(shortRun("SyncCallBenchmark", sync)
        .mode(Mode.Throughput)
        .threads(4)
        .param("payload", Payload.BYTES_1M.name())
        .build()).run());
    Path async = dir.resolve("async-1m.json");
    results.addAll(new Runner(shortRun("AsyncCallBenchmark", async)
        .param("payload", Payload.BYTES_1M.name())
        .param("window", "8")
        .build()).run());
    assertThat(results).hasSize(2 * DEFAULT_FRAMEWORKS.size());
    for (RunResult r : results) {
      String what = r.getParams().getBenchmark() + " " + r.getParams().getParam("framework");
      assertThat(r.getPrimaryResult().getScore()).as(what).isPositive();
      assertThat(r.getSecondaryResults().get("calls.failed").getScore()).as(what).isZero();
      assertThat(r.getSecondaryResults().get("calls.refused").getScore()).as(what).isZero();
      assertThat(r.getSecondaryResults().get("rtt.p50").getScore()).as(what).isPositive();
    }
    List<ResultRow> rows = new java.util.ArrayList<>(Report.parse(parse(sync)));
    rows.addAll(Report.parse(parse(async)));
    assertThat(rows).allSatisfy(r -> assertThat(r.megabytesPerSecond()).isGreaterThan(r.tps()));
    String md = Report.markdown(rows, List.of());
    assertThat(md).contains("### Blocking callers, 1 MiB opaque", "### Pipelined async calls, 1 MiB opaque");
  }

  @Test
  @Timeout(value = 2, unit = TimeUnit.MINUTES)
  void petrelsClientKeepsItsCallsWithinTheServersPerConnectionLimitSoTheBusinessPoolRefusesNone() throws Exception {
    // A business pool of one thread and two queue places takes three calls at once. With the benchmark server's
    // 65536 calls per connection, a window of 64 goes over it and calls are refused; with
    // --max-calls-per-connection 2 the server announces 2 when the client connects, the client holds the rest
    // of the window itself, and none is refused. (The pool needs one place more than the limit: a call counts in
    // the connection's limit until its response is written, and the pool thread that wrote it is busy a moment
    // longer, while the client may already have sent the next call.)
    String[] narrowPool = {"--bind", "127.0.0.1", "--port", "0", "--worker-threads", "1", "--frameworks", "petrel",
        "--business-threads", "1", "--business-queue", "2"};
    RunResult open = runAsyncWindow64(ServerOptions.parse(narrowPool));
    assertThat(open.getSecondaryResults().get("calls.refused").getScore()).isPositive();

    String[] limited = java.util.Arrays.copyOf(narrowPool, narrowPool.length + 2);
    limited[narrowPool.length] = "--max-calls-per-connection";
    limited[narrowPool.length + 1] = "2";
    RunResult held = runAsyncWindow64(ServerOptions.parse(limited));
    assertThat(held.getPrimaryResult().getScore()).isPositive();
    assertThat(held.getSecondaryResults().get("calls.refused").getScore()).isZero();
    assertThat(held.getSecondaryResults().get("calls.failed").getScore()).isZero();
  }

  private static RunResult runAsyncWindow64(ServerOptions options) throws Exception {
    try (BenchmarkServer server = BenchmarkServer.start(options)) {
      Collection<RunResult> results = new Runner(shortRun("AsyncCallBenchmark", dir.resolve("window64.json"),
              server.controlPort())
          .measurementTime(TimeValue.milliseconds(300))
          .param("framework", "PETREL")
          .param("payload", Payload.MESSAGE.name())
          .param("window", "64")
          .build()).run();
      assertThat(results).hasSize(1);
      return results.iterator().next();
    }
  }

  @Test
  void theDefaultRunMeasuresTheFourPayloadsItAlwaysHas() {
    assertThat(DEFAULT_PAYLOADS).containsExactly(Payload.MESSAGE, Payload.EMPTY, Payload.BYTES_4, Payload.BYTES_1K);
  }

  @Test
  void theDefaultRunLeavesTheTlsFrameworksOut() {
    assertThat(DEFAULT_FRAMEWORKS).containsExactly(Framework.PETREL, Framework.PETREL_DIRECT, Framework.GRPC,
        Framework.GRPC_DIRECT, Framework.NETTY);
  }

  @Test
  @Timeout(value = 2, unit = TimeUnit.MINUTES)
  void theTlsComparisonRunsAndTheReportComparesItWithPlaintext() throws Exception {
    Path json = dir.resolve("tls.json");
    Collection<RunResult> results = new Runner(shortRun("SyncCallBenchmark", json)
        .mode(Mode.Throughput)
        .threads(2)
        .param("framework", "PETREL", "PETREL_TLS", "GRPC", "GRPC_TLS")
        .param("payload", Payload.MESSAGE.name())
        .build()).run();
    assertThat(results).hasSize(4);
    for (RunResult r : results) {
      assertThat(r.getPrimaryResult().getScore()).as(r.getParams().toString()).isPositive();
      assertThat(r.getSecondaryResults()).as(r.getParams().toString()).containsKeys("rtt.p99", "server.cpu");
    }
    List<ResultRow> rows = Report.parse(parse(json));
    String md = Report.markdown(rows, Charts.write(rows, dir));
    assertThat(md).contains("| Petrel (business pool, TLS) | 2 callers |",
        "| gRPC-java (default executor, TLS) | 2 callers |", "### Ratios with TLS (blocking callers)");
    // Both TLS ratios and both costs of TLS are figures, not "-".
    assertThat(md).containsPattern("\\| BenchmarkMessage \\| 2 \\| \\d+\\.\\d\\d \\| \\d+\\.\\d\\d \\| \\d+\\.\\d\\d"
        + " \\| \\d+\\.\\d\\d \\|\\n");
  }

  @Test
  @Timeout(value = 2, unit = TimeUnit.MINUTES)
  void marshallerBenchmarkRunsOnDirectAndHeapBuffers() throws Exception {
    Collection<RunResult> results = runInProcess("\\.MarshallerBenchmark\\.", 1);
    // 7 methods (the marshaller, via an array, protobuf over the NIO view, each way, and aliased reads) x 2 buffers.
    assertThat(results).hasSize(7 * 2);
    results.forEach(r -> assertThat(r.getPrimaryResult().getScore()).isPositive());
  }

  @Test
  @Timeout(value = 2, unit = TimeUnit.MINUTES)
  void stubAndMetricsOverheadBenchmarksRun() throws Exception {
    Collection<RunResult> results =
        runInProcess("\\.(StubOverheadBenchmark|MetricsOverheadBenchmark|MetricsRecordBenchmark)\\.", 2);
    // Stub: 2 benchmarks x 2 transports; metrics: off and on; metrics record: off and on.
    assertThat(results).hasSize(2 * 2 + 2 + 2);
    results.forEach(r -> assertThat(r.getPrimaryResult().getScore()).isPositive());
  }

  @Test
  @Timeout(value = 2, unit = TimeUnit.MINUTES)
  void inProcessBenchmarkRunsAgainstThePlainMethodCall() throws Exception {
    Collection<RunResult> results = runInProcess("\\.InProcessBenchmark\\.", 1);
    // plainCall and plainCallWithMarshalling once; inProcessCall with each executor.
    assertThat(results).hasSize(1 + 1 + 2);
    results.forEach(r -> assertThat(r.getPrimaryResult().getScore()).as(r.getParams().getBenchmark()).isPositive());
  }

  /** One 100 ms iteration of the benchmarks matching {@code include}, in this JVM, no server of its own. */
  private static Collection<RunResult> runInProcess(String include, int threads) throws Exception {
    return new Runner(new OptionsBuilder()
        .include(include)
        .forks(0)
        .warmupIterations(0)
        .measurementIterations(1)
        .measurementTime(TimeValue.milliseconds(100))
        .threads(threads)
        .shouldFailOnError(true)
        .verbosity(VerboseMode.SILENT)
        .build()).run();
  }

  private static com.google.gson.JsonArray parse(Path json) throws java.io.IOException {
    return com.google.gson.JsonParser.parseString(Files.readString(json)).getAsJsonArray();
  }
}
