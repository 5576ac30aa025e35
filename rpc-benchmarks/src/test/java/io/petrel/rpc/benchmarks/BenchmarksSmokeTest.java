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
    return new OptionsBuilder()
        .include("\\." + benchmark + "\\.")
        .forks(0)
        .warmupIterations(0)
        .measurementIterations(1)
        .measurementTime(TimeValue.milliseconds(100))
        .threads(1)
        .param("host", "127.0.0.1")
        .param("port", Integer.toString(server.controlPort()))
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
    int payloads = Payload.values().length;
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
    assertThat(results).hasSize(DEFAULT_FRAMEWORKS.size() * Payload.values().length);

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
      Collection<RunResult> results = new Runner(new OptionsBuilder()
          .include("\\.SyncCallBenchmark\\.")
          .forks(0)
          .warmupIterations(0)
          .measurementIterations(1)
          .measurementTime(TimeValue.milliseconds(300))
          .threads(8)
          .mode(Mode.Throughput)
          .param("host", "127.0.0.1")
          .param("port", Integer.toString(narrow.controlPort()))
          .param("framework", "PETREL")
          .param("payload", Payload.MESSAGE.name())
          .addProfiler(PetrelProfiler.class)
          .shouldFailOnError(true)
          .verbosity(VerboseMode.SILENT)
          .resultFormat(ResultFormatType.JSON)
          .result(json.toString())
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
    assertThat(results).hasSize(4 * 2);
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
