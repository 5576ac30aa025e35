package io.petrel.rpc.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The report from JMH JSON written here the way JMH writes it: the MB/s column, the scale tables ("How cost
 * grows with the work"), the failed and refused calls in their cells, the I/O and Java columns, ratios taken
 * between rows of the same configuration, and the charts of a sweep.
 */
class ReportTest {
  @TempDir
  Path dir;

  /** One JMH result: a Throughput run of {@code benchmark} with its secondary results as PetrelProfiler gives them. */
  private static JsonObject result(String benchmark, int threads, String jdk, double tps, long failed, long refused,
      Map<String, String> params) {
    JsonObject o = new JsonObject();
    o.addProperty("benchmark", "io.petrel.rpc.benchmarks." + benchmark + ".call");
    o.addProperty("mode", "thrpt");
    o.addProperty("threads", threads);
    o.addProperty("jdkVersion", jdk);
    JsonObject p = new JsonObject();
    params.forEach(p::addProperty);
    o.add("params", p);
    JsonObject primary = new JsonObject();
    primary.addProperty("score", tps);
    primary.addProperty("scoreUnit", "ops/s");
    o.add("primaryMetric", primary);
    JsonObject secondary = new JsonObject();
    Map<String, Double> figures = Map.of("rtt.avg", 100.0, "rtt.p50", 90.0, "rtt.p90", 150.0, "rtt.p99", 300.0,
        "rtt.p999", 900.0, "server.cpu", 5.0, "client.cpu", 9.0, "calls.failed", (double) failed,
        "calls.refused", (double) refused);
    figures.forEach((name, v) -> {
      JsonObject m = new JsonObject();
      m.addProperty("score", v);
      secondary.add(name, m);
    });
    o.add("secondaryMetrics", secondary);
    return o;
  }

  private static JsonObject sync(Framework f, Payload payload, int threads, double tps) {
    return result("SyncCallBenchmark", threads, "17.0.15", tps, 0, 0,
        Map.of("framework", f.name(), "payload", payload.name(), "connections", "1", "io", "auto"));
  }

  private static List<ResultRow> rows(JsonObject... results) {
    JsonArray a = new JsonArray();
    for (JsonObject o : results) {
      a.add(o);
    }
    return Report.parse(a);
  }

  @Test
  void megabytesPerSecondArePayloadBytesBothWays() {
    List<ResultRow> rows = rows(sync(Framework.PETREL, Payload.BYTES_1M, 16, 1000));
    // 1000 calls/s x 2 x 1 MiB = 2,097,152,000 bytes/s.
    assertThat(rows.get(0).megabytesPerSecond()).isEqualTo(2097.152);
    assertThat(Report.markdown(rows, List.of()))
        .contains("| TPS | MB/s | avg ms |")
        .contains("| Petrel (business pool) | 16 callers | 1 | 1 | 1,000 | 2,097 | 0.100 |")
        .contains("MB/s is the payload both ways");
    assertThat(rows(sync(Framework.NETTY, Payload.MESSAGE, 16, 10_000)).get(0).megabytesPerSecond())
        .isEqualTo(10_000 * (581 + 527) / 1e6);
  }

  @Test
  void aPayloadSweepGivesCallsAndMegabytesPerSecondOfEachFramework() {
    List<ResultRow> rows = rows(sync(Framework.PETREL, Payload.BYTES_1M, 16, 1000),
        sync(Framework.NETTY, Payload.BYTES_1M, 16, 1500), sync(Framework.PETREL, Payload.BYTES_4, 16, 50_000),
        sync(Framework.NETTY, Payload.BYTES_4, 16, 90_000));
    String md = Report.markdown(rows, List.of());
    assertThat(md).contains("### How cost grows with the work")
        .contains("#### By payload: blocking callers, 16 callers, 1 connection, I/O auto, Java 17.0.15")
        .contains("| payload | Petrel (business pool) | raw Netty echo |")
        // calls/s, smallest body first
        .containsSubsequence("| 4 B opaque | 50,000 | 90,000 |", "| 1 MiB opaque | 1,000 | 1,500 |",
            "MB/s (payload bytes both ways per second):", "| 4 B opaque | 0.400 | 0.720 |",
            "| 1 MiB opaque | 2,097 | 3,146 |");
    assertThat(md).doesNotContain("#### By callers");
  }

  @Test
  void failedAndRefusedCallsStayInTheirCells() {
    List<ResultRow> rows = rows(sync(Framework.GRPC, Payload.MESSAGE, 1, 8_000),
        sync(Framework.GRPC, Payload.MESSAGE, 5000, 15_000),
        result("SyncCallBenchmark", 1, "17.0.15", 20_000, 0, 0, Map.of("framework", "PETREL", "payload", "MESSAGE")),
        result("SyncCallBenchmark", 5000, "17.0.15", 250_000, 3, 1234,
            Map.of("framework", "PETREL", "payload", "MESSAGE")));
    String md = Report.markdown(rows, List.of());
    assertThat(md).contains("#### By callers: blocking callers, BenchmarkMessage, 1 connection, I/O auto")
        .contains("| callers | Petrel (business pool) | gRPC-java (default executor) |")
        .contains("| 1 | 20,000 | 8,000 |")
        .contains("| 5000 | 250,000 (3 failed, 1,234 refused) | 15,000 |");
    // and in the full table's columns
    assertThat(md).contains("| Petrel (business pool) | 5000 callers | 1 | 1 | 250,000 |").contains(" | 3 | 1234 |");
  }

  @Test
  void pipelinedWindowsMakeATableOfTheirOwn() {
    List<ResultRow> rows = rows(
        result("AsyncCallBenchmark", 1, "17.0.15", 200_000, 0, 0, Map.of("framework", "PETREL", "window", "16")),
        result("AsyncCallBenchmark", 1, "17.0.15", 100_000, 0, 9, Map.of("framework", "PETREL", "window", "5000")),
        sync(Framework.PETREL, Payload.MESSAGE, 16, 70_000));
    String md = Report.markdown(rows, List.of());
    assertThat(md).contains("#### By window: pipelined async calls, BenchmarkMessage, 1 connection")
        .contains("| window | Petrel (business pool) |")
        .containsSubsequence("| 16 | 200,000 |", "| 5000 | 100,000 (0 failed, 9 refused) |");
  }

  @Test
  void ioAndJavaColumnsAppearOnlyWhenARunVariesThem() {
    List<ResultRow> one = rows(sync(Framework.PETREL, Payload.MESSAGE, 16, 1));
    assertThat(Report.markdown(one, List.of())).doesNotContain("| I/O").doesNotContain("| Java |");

    List<ResultRow> rows = rows(
        result("SyncCallBenchmark", 16, "25.0.1", 110, 0, 0, Map.of("framework", "PETREL", "io", "epoll")),
        result("SyncCallBenchmark", 16, "25.0.1", 90, 0, 0, Map.of("framework", "PETREL", "io", "nio")),
        result("SyncCallBenchmark", 16, "17.0.15", 100, 0, 0, Map.of("framework", "PETREL", "io", "epoll")),
        result("SyncCallBenchmark", 16, "17.0.15", 80, 0, 0, Map.of("framework", "PETREL", "io", "nio")));
    String md = Report.markdown(rows, List.of());
    assertThat(md).contains("| framework | load | conns | I/O | Java | runs | TPS |")
        .contains("| Petrel (business pool) | 16 callers | 1 | nio | 25.0.1 | 1 | 90 |")
        .contains("#### By I/O: blocking callers, BenchmarkMessage, 16 callers, 1 connection, Java 17.0.15")
        .containsSubsequence("| epoll | 100 |", "| nio | 80 |")
        .contains("#### By Java: blocking callers, BenchmarkMessage, 16 callers, 1 connection, I/O nio")
        // Java 17 before 25 (by number), in the rows and the table
        .containsSubsequence("| 17.0.15 | 80 |", "| 25.0.1 | 90 |");
  }

  @Test
  void everyLineOfEveryTableHasAsManyCellsAsItsHeader() {
    List<ResultRow> rows = rows(
        result("SyncCallBenchmark", 16, "25.0.1", 110, 0, 0, Map.of("framework", "PETREL", "io", "epoll")),
        result("SyncCallBenchmark", 16, "17.0.15", 80, 2, 0, Map.of("framework", "NETTY", "io", "nio")),
        result("SyncCallBenchmark", 16, "17.0.15", 80, 0, 0, Map.of("framework", "PETREL", "connections", "8")),
        sync(Framework.PETREL, Payload.BYTES_4, 1, 50_000), sync(Framework.GRPC, Payload.BYTES_1M, 1, 500));
    for (String md : List.of(Report.markdown(rows, List.of()), Report.markdown(rows.subList(3, 5), List.of()))) {
      int columns = -1;
      int tables = 0;
      for (String line : md.split("\n")) {
        if (!line.startsWith("|")) {
          columns = -1;
          continue;
        }
        int cells = line.length() - line.replace("|", "").length() - 1;
        if (columns < 0) {
          columns = cells;
          tables++;
        }
        assertThat(cells).as(line).isEqualTo(columns);
      }
      assertThat(tables).isGreaterThanOrEqualTo(3);
    }
  }

  @Test
  void javaVersionsSortByTheirNumbers() {
    List<ResultRow> rows = rows(
        result("SyncCallBenchmark", 1, "25", 1, 0, 0, Map.of()),
        result("SyncCallBenchmark", 1, "9.0.4", 1, 0, 0, Map.of()),
        result("SyncCallBenchmark", 1, "17.0.15", 1, 0, 0, Map.of()),
        result("SyncCallBenchmark", 1, "21.0.2", 1, 0, 0, Map.of()));
    assertThat(rows).extracting(ResultRow::jdk).containsExactly("9.0.4", "17.0.15", "21.0.2", "25");
  }

  @Test
  void theIoLabelSaysWhenTheServerRanAnotherIo() {
    JsonObject p = new JsonObject();
    assertThat(Report.ioLabel(p)).isEqualTo("auto");
    p.addProperty("io", "NIO");
    assertThat(Report.ioLabel(p)).isEqualTo("nio");
    p.addProperty("serverArgs", "--business-queue 8192 --io nio");
    assertThat(Report.ioLabel(p)).isEqualTo("nio");
    p.addProperty("serverArgs", "--io epoll");
    assertThat(Report.ioLabel(p)).isEqualTo("client nio, server epoll");
  }

  @Test
  void ratiosAreTakenBetweenRowsThatDifferInTheFrameworkOnly() {
    List<ResultRow> rows = rows(
        result("SyncCallBenchmark", 16, "17.0.15", 100, 0, 0, Map.of("framework", "PETREL", "connections", "1")),
        result("SyncCallBenchmark", 16, "17.0.15", 200, 0, 0, Map.of("framework", "NETTY", "connections", "1")),
        result("SyncCallBenchmark", 16, "17.0.15", 300, 0, 0, Map.of("framework", "PETREL", "connections", "8")),
        result("SyncCallBenchmark", 16, "17.0.15", 200, 0, 0, Map.of("framework", "NETTY", "connections", "8")));
    String ratios = Report.ratios(rows);
    assertThat(ratios).contains("| payload | callers | conns | TPS pool / Netty | TPS direct / Netty |")
        .contains("|---|---:|---|---:|")
        .contains("| BenchmarkMessage | 16 | 1 | 0.50 | - |")
        .contains("| BenchmarkMessage | 16 | 8 | 1.50 | - |");
    assertThat(Report.markdown(rows, List.of())).contains("#### By connections:")
        .containsSubsequence("| 1 | 100 | 200 |", "| 8 | 300 | 200 |");
  }

  /**
   * Every goal's figure of one configuration, over three runs: each is the median of the within-run ratios (or,
   * for the server CPU, differences), not the ratio of the medians.
   */
  @Test
  void theGoalsFiguresAreMediansOfWithinRunRatios() {
    JsonArray runs = new JsonArray();
    // Per run: pool, direct, gRPC-java (default), gRPC-java (direct), echo.
    double[][] tps = {{60, 80, 20, 30, 100}, {90, 100, 20, 30, 150}, {70, 70, 35, 30, 100}};
    // Per run: pool's and direct's server CPU per call (us).
    double[][] cpu = {{9, 4}, {10, 2}, {12, 10}};
    Framework[] fw = {Framework.PETREL, Framework.PETREL_DIRECT, Framework.GRPC, Framework.GRPC_DIRECT,
        Framework.NETTY};
    for (int run = 0; run < 3; run++) {
      for (int f = 0; f < fw.length; f++) {
        JsonObject o = sync(fw[f], Payload.MESSAGE, 16, tps[run][f]);
        if (f < 2) {
          o.getAsJsonObject("secondaryMetrics").getAsJsonObject("server.cpu").addProperty("score", cpu[run][f]);
        }
        runs.add(o);
      }
    }
    // pool / echo 0.60, 0.60, 0.70; direct / echo 0.80, 0.67, 0.70; pool / gRPC 3, 4.5, 2; direct / gRPC direct
    // 2.67, 3.33, 2.33 (the medians' ratios would be 0.70 and 0.80 of the echo). Server CPU pool - direct: 5, 8,
    // 2 (the medians' difference would be 6).
    assertThat(Report.ratios(Report.parse(runs)))
        .contains("| BenchmarkMessage | 16 | 0.60 | 0.70 | 3.00 | 2.67 | 1.00 | 1.00 | 5.0 | 1.00 | 1.00 |");
  }

  /**
   * Three result files, one per run; gRPC-java's trial of the second run is missing (it failed, or was not run).
   * Each ratio pairs figures of the same file: the second run gives no pool / gRPC ratio, instead of its pool
   * figure being divided by the third run's gRPC figure (and the third's pool by nothing).
   */
  @Test
  void aRunMissingAFrameworkIsLeftOutOfItsRatiosNotPairedWithAnotherRun() {
    double[][] tps = {{60, 20, 100}, {90, Double.NaN, 150}, {70, 10, 100}};
    Framework[] fw = {Framework.PETREL, Framework.GRPC, Framework.NETTY};
    List<JsonArray> files = new java.util.ArrayList<>();
    for (double[] run : tps) {
      JsonArray file = new JsonArray();
      for (int f = 0; f < fw.length; f++) {
        if (!Double.isNaN(run[f])) {
          file.add(sync(fw[f], Payload.MESSAGE, 16, run[f]));
        }
      }
      files.add(file);
    }
    List<ResultRow> rows = Report.parse(files);
    // pool / gRPC: runs 1 and 3 only, 3.0 and 7.0: median 5.00 (paired by position it would be 60/20 and 90/10,
    // median 6.00). pool / echo: all three runs, 0.60, 0.60, 0.70.
    assertThat(Report.ratios(rows)).contains("| BenchmarkMessage | 16 | 0.60 | - | 5.00 |");
    assertThat(rows).filteredOn(r -> r.framework() == Framework.GRPC).singleElement()
        .satisfies(r -> assertThat(r.runs()).isEqualTo(2))
        .satisfies(r -> assertThat(r.tpsRuns()).containsOnlyKeys("0", "2"));
  }

  /** A SampleTime entry of {@code f}: its own score and percentiles, and the recorded figures given. */
  private static JsonObject sampled(Framework f, double avgMicros, double p99Micros, double serverCpu, long failed) {
    JsonObject o = sync(f, Payload.MESSAGE, 16, 0);
    o.addProperty("mode", "sample");
    JsonObject primary = new JsonObject();
    primary.addProperty("score", avgMicros);
    primary.addProperty("scoreUnit", "us/op");
    JsonObject pct = new JsonObject();
    for (String k : new String[] {"50.0", "90.0", "99.0", "99.9"}) {
      pct.addProperty(k, p99Micros);
    }
    primary.add("scorePercentiles", pct);
    o.add("primaryMetric", primary);
    JsonObject secondary = o.getAsJsonObject("secondaryMetrics");
    secondary.getAsJsonObject("rtt.avg").addProperty("score", avgMicros);
    secondary.getAsJsonObject("rtt.p99").addProperty("score", p99Micros);
    secondary.getAsJsonObject("server.cpu").addProperty("score", serverCpu);
    secondary.getAsJsonObject("calls.failed").addProperty("score", (double) failed);
    return o;
  }

  /**
   * Runs made with {@code -bm thrpt,sample}: a run's Throughput and SampleTime entries are one run, whichever
   * comes first, and the Throughput entry's figures stand for it (its failed calls are not counted twice); a run
   * that has only a SampleTime entry still counts, with its figures.
   */
  @Test
  void aRunsThroughputAndSampleTimeEntriesAreOneRun() {
    JsonArray both = new JsonArray();
    both.add(sampled(Framework.PETREL, 400, 4000, 50, 3)); // listed first: the Throughput entry still wins
    JsonObject pool = sync(Framework.PETREL, Payload.MESSAGE, 16, 60);
    pool.getAsJsonObject("secondaryMetrics").getAsJsonObject("calls.failed").addProperty("score", 2.0);
    both.add(pool);
    both.add(sync(Framework.NETTY, Payload.MESSAGE, 16, 100));
    both.add(sampled(Framework.NETTY, 300, 3000, 40, 0));
    JsonArray sampleOnly = new JsonArray();
    sampleOnly.add(sampled(Framework.PETREL, 200, 600, 7, 1));
    List<ResultRow> rows = Report.parse(List.of(both, sampleOnly));
    ResultRow petrel = rows.stream().filter(r -> r.framework() == Framework.PETREL).findFirst().orElseThrow();
    assertThat(petrel.runs()).isEqualTo(2);
    assertThat(petrel.tpsRuns()).containsOnlyKeys("0");
    // Run 0: the Throughput entry's figures (rtt.avg 100, rtt.p99 300, server CPU 5, 2 failed); run 1: the
    // SampleTime entry's (200, 600, 7, 1 failed).
    assertThat(petrel.avgRuns()).containsExactlyInAnyOrderEntriesOf(Map.of("0", 100.0, "1", 200.0));
    assertThat(petrel.p99Runs()).containsExactlyInAnyOrderEntriesOf(Map.of("0", 300.0, "1", 600.0));
    assertThat(petrel.serverCpuRuns()).containsExactlyInAnyOrderEntriesOf(Map.of("0", 5.0, "1", 7.0));
    assertThat(petrel.failed()).isEqualTo(3);
    // The echo, in run 0 only: the ratios of run 0 alone (TPS 0.60; avg and p99 of both from the recording).
    assertThat(Report.ratios(rows)).contains("| BenchmarkMessage | 16 | 0.60 | - | - | - | 1.00 | - | - |");
  }

  /** One file holding the same configuration twice (runs joined by hand): each occurrence is its own run. */
  @Test
  void aConfigurationRepeatedInOneFileCountsAsThatManyRuns() {
    List<ResultRow> rows = rows(sync(Framework.PETREL, Payload.MESSAGE, 16, 60),
        sync(Framework.NETTY, Payload.MESSAGE, 16, 100), sync(Framework.PETREL, Payload.MESSAGE, 16, 80),
        sync(Framework.NETTY, Payload.MESSAGE, 16, 100));
    assertThat(rows).filteredOn(r -> r.framework() == Framework.PETREL).singleElement()
        .satisfies(r -> assertThat(r.runs()).isEqualTo(2))
        .satisfies(r -> assertThat(r.tps()).isEqualTo(70.0));
    assertThat(Report.ratios(rows)).contains("| BenchmarkMessage | 16 | 0.70 |");
  }

  @Test
  void aSweepsChartsAreDrawnOncePerVariant() throws Exception {
    List<ResultRow> rows = rows(
        result("SyncCallBenchmark", 16, "17.0.15", 100, 0, 0, Map.of("framework", "PETREL", "connections", "1")),
        result("SyncCallBenchmark", 16, "17.0.15", 200, 0, 0, Map.of("framework", "NETTY", "connections", "1")),
        result("SyncCallBenchmark", 16, "17.0.15", 300, 0, 0, Map.of("framework", "PETREL", "connections", "8")),
        result("SyncCallBenchmark", 16, "17.0.15", 200, 0, 0, Map.of("framework", "NETTY", "connections", "8")),
        sync(Framework.PETREL, Payload.BYTES_4, 16, 50_000), sync(Framework.PETREL, Payload.BYTES_64K, 16, 20_000),
        sync(Framework.PETREL, Payload.BYTES_1M, 16, 1_000), sync(Framework.PETREL, Payload.EMPTY, 16, 60_000));
    List<Path> charts = Charts.write(rows, dir);
    assertThat(charts).extracting(c -> c.getFileName().toString()).contains("latency-message-16.png",
        "latency-message-16-c8.png", "tps-connections-sync-message-16.png", "mbps-payload-sync-16.png");
    charts.forEach(c -> assertThat(c).isNotEmptyFile());
    assertThat(charts).doesNotHaveDuplicates();
  }
}
