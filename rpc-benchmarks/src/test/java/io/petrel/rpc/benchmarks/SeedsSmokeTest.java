package io.petrel.rpc.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Runs every seed workload for a second or two against a benchmark server in this JVM (the Tars one with
 * client processes of its own, the HeTu one against a real Redis), and checks that its table has the seed's
 * columns, that the calls were made, and that failed and refused calls are counted and shown. It times nothing.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SeedsSmokeTest {
  private static BenchmarkServer server;
  /** A Petrel server that can run one call at a time and queue none: it refuses the rest. */
  private static BenchmarkServer narrow;

  @BeforeAll
  static void startServers() throws Exception {
    server = BenchmarkServer.start(ServerOptions.parse("--bind", "127.0.0.1", "--port", "0", "--worker-threads", "2",
        "--frameworks", "petrel,petrel_direct,grpc"));
    narrow = BenchmarkServer.start(ServerOptions.parse("--bind", "127.0.0.1", "--port", "0", "--worker-threads", "1",
        "--frameworks", "petrel", "--business-threads", "1", "--business-queue", "0"));
  }

  @AfterAll
  static void stopServers() {
    if (server != null) {
      server.close();
    }
    if (narrow != null) {
      narrow.close();
    }
  }

  private static List<String> at(BenchmarkServer s, String... more) {
    List<String> a = new ArrayList<>(List.of("--host", "127.0.0.1", "--port", Integer.toString(s.controlPort())));
    a.addAll(List.of(more));
    return a;
  }

  /** Some table in {@code text} has a header with all of {@code columns}. */
  private static void assertHeader(String text, String... columns) {
    List<String> lines = text.lines().toList();
    List<String> headers = new ArrayList<>();
    for (int i = 0; i + 1 < lines.size(); i++) {
      if (lines.get(i).startsWith("|") && lines.get(i + 1).startsWith("|---")) {
        headers.add(lines.get(i));
      }
    }
    assertThat(headers).anySatisfy(h -> {
      for (String c : columns) {
        assertThat(h).contains("| " + c + " |");
      }
    });
  }

  @Test
  void tarsSumsItsClientProcesses() throws Exception {
    List<SeedRun> runs = TarsSeed.run(new SeedArgs(at(server, "--payloads", "BYTES_4,BYTES_1K", "--procs-threads",
        "2x2", "--warmup", "0.5", "--duration", "1")));
    assertThat(runs).hasSize(2);
    for (SeedRun r : runs) {
      assertThat(r.ok()).isPositive();
      assertThat(r.failed() + r.refused()).isZero();
      assertThat(r.label("processes")).isEqualTo("2");
      assertThat(r.counter("server_cpu_ns")).isPositive();
      assertThat(r.counter("net_tx_bytes")).isPositive();
    }
    String table = TarsSeed.table(runs);
    assertHeader(table, "Client machines", "Process num", "Thread num", "Package size (B)", "TPS (w/s)",
        "Avg cost (ms)", "Server CPU", "In traffic (Mb/s)", "Out traffic (Mb/s)", "In packets (/s)",
        "Out packets (/s)", "Failed", "Refused");
    assertThat(table).contains("| petrel | 1 | 2 | 2 | 1024 |");
  }

  @Test
  void tarantoolStoresEveryObjectOnTheServer() throws Exception {
    List<SeedRun> runs = TarantoolSeed.run(new SeedArgs(at(server, "--objects", "300", "--callers", "1,4")));
    assertThat(runs).hasSize(2);
    for (SeedRun r : runs) {
      assertThat(r.ok()).isEqualTo(300);
      assertThat(r.counter("stored")).isEqualTo(300);
    }
    String table = TarantoolSeed.table(runs);
    assertHeader(table, "Amount of objects", "Callers (connections)", "Time taken in seconds",
        "Items stored per second", "Items stored per second per caller", "Failed", "Refused");
    assertThat(table).contains("| 300 | 4 |");
  }

  @Test
  void rpcxPrintsPetrelBesideGrpc() throws Exception {
    List<SeedRun> runs = RpcxSeed.run(new SeedArgs(at(server, "--concurrency", "10,50", "--warmup", "0.3",
        "--duration", "1")));
    assertThat(runs).hasSize(4).allSatisfy(r -> {
      assertThat(r.ok()).isPositive();
      assertThat(r.failed() + r.refused()).isZero();
    });
    String table = RpcxSeed.table(runs);
    assertThat(table).contains("### TPS (calls/s)", "### Latency: mean time (ms)", "### Latency: median time (ms)",
        "### Failed / refused calls");
    assertHeader(table, "concurrency", Framework.PETREL.label(), Framework.GRPC.label());
  }

  @Test
  void refusedCallsAreCountedAndShownNotDropped() throws Exception {
    List<SeedRun> runs = RpcxSeed.run(new SeedArgs(at(narrow, "--frameworks", "petrel", "--concurrency", "64",
        "--warmup", "0", "--duration", "1")));
    SeedRun r = runs.get(0);
    assertThat(r.refused()).isPositive();
    assertThat(r.error()).startsWith("refused: ").contains("RESOURCE_EXHAUSTED");
    assertThat(RpcxSeed.table(runs)).contains(" / " + Table.count(r.refused()) + " |");
  }

  @Test
  void theServersASeedStartsServeEveryFrameworkItsOptionTakes() {
    var plaintext = List.of(Framework.PETREL, Framework.PETREL_DIRECT, Framework.GRPC, Framework.GRPC_DIRECT,
        Framework.NETTY);
    assertThat(ServerOptions.parse(SeedServer.split(TarsSeed.SERVER_ARGS)).frameworks()).containsAll(plaintext);
    assertThat(ServerOptions.parse(SeedServer.split(RpcxSeed.SERVER_ARGS)).frameworks()).containsAll(plaintext);
  }

  @Test
  void aFrameworkTheServerDoesNotServeIsNamedWithWhatToDo() {
    // The one at --host: restart it with the framework.
    assertThatThrownBy(() -> RpcxSeed.run(new SeedArgs(at(server, "--frameworks", "petrel,netty", "--concurrency",
        "10", "--warmup", "0", "--duration", "1"))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("does not serve netty").hasMessageContaining("--frameworks including netty");
    // One the seed started: --server-args.
    assertThatThrownBy(() -> TarantoolSeed.run(new SeedArgs(List.of("--server-args", "--frameworks petrel",
        "--framework", "petrel_direct", "--objects", "10", "--callers", "1"))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("petrel_direct is not served by the server this seed started")
        .hasMessageContaining("--server-args");
  }

  @Test
  void trpcFindsARateAndReportsItsPercentiles() throws Exception {
    List<SeedRun> runs = TrpcSeed.run(new SeedArgs(at(server, "--connections", "4", "--start-rate", "300",
        "--max-rate", "600", "--bisect", "0", "--warmup", "0.2", "--duration", "0.8", "--first-warmup", "0",
        "--sync-threads", "8")));
    assertThat(runs).hasSize(2);
    assertThat(runs).extracting(r -> r.label("mode")).containsExactly("sync", "async");
    for (SeedRun r : runs) {
      assertThat(r.ok()).isPositive();
      assertThat(r.failed() + r.refused()).isZero();
    }
    assertHeader(TrpcSeed.table(runs), "Mode", "Connections", "QPS", "Average latency (ms)", "P90 latency (ms)",
        "P99 latency (ms)", "P999 latency (ms)", "Failed", "Refused");
  }

  @Test
  void trpcRefusesAStartRateAboveItsMaxRate() {
    // No step could run: it printed that p99 was over at the start rate, and an empty table.
    assertThatThrownBy(() -> TrpcSeed.run(new SeedArgs(at(server, "--start-rate", "5000", "--max-rate", "1000"))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--start-rate 5000 is above --max-rate 1000");
  }

  @Test
  void hetuCallsTheInventoryServiceOnARealRedis() throws Exception {
    List<SeedRun> runs = HetuSeed.run(new SeedArgs(List.of("--callers", "4", "--players", "20", "--warmup", "0.2",
        "--duration", "1")));
    assumeTrue(!runs.isEmpty(), "no Redis could run here (the workload printed how to get one)");
    assertThat(runs).hasSize(4).allSatisfy(r -> {
      assertThat(r.ok()).isPositive();
      assertThat(r.failed() + r.refused()).isZero();
    });
    String table = HetuSeed.table(runs);
    assertHeader(table, "CPS");
    assertHeader(table, "Mean", "k50", "k90", "k99", "Count", "Min", "Max", "Median", "Failed", "Refused");
    assertHeader(table, "benchmark", "return_value", "count", "percentage");
    assertThat(table).contains("| benchmark_hello_world | world received |", "| benchmark_get_then_update | 0 |");
  }

  @Test
  void runsFromTwoClientsMergeIntoOneRow() {
    Tally a = new Tally();
    Tally b = new Tally();
    a.begin();
    b.begin();
    a.success(1_000_000, null);
    a.failure(new IllegalStateException("reply field1 is not OK"));
    b.success(3_000_000, null);
    b.failure(new io.petrel.rpc.StatusException(io.petrel.rpc.Status.UNAVAILABLE.withDescription("gone")));
    a.end();
    b.end();
    var labels = java.util.Map.of("framework", "petrel", "payload", "BYTES_4", "threads", "1", "processes", "1");
    List<SeedRun> both = new ArrayList<>();
    both.addAll(SeedRun.parseAll(SeedRun.toJson(List.of(a.toRun("tars", labels, java.util.Map.of("machines", 1L,
        "net_tx_bytes", 100L, "net_millis", 10_000L, "server_cpu_ns", 5L))))));
    both.addAll(SeedRun.parseAll(SeedRun.toJson(List.of(b.toRun("tars", labels, java.util.Map.of("machines", 1L,
        "net_tx_bytes", 50L, "net_millis", 10_020L, "server_cpu_ns", 7L))))));
    List<SeedRun> merged = SeedRun.mergeAll(both);
    assertThat(merged).hasSize(1);
    SeedRun m = merged.get(0);
    assertThat(m.ok()).isEqualTo(2);
    assertThat(m.failed()).isEqualTo(1);
    assertThat(m.refused()).isEqualTo(1);
    assertThat(m.counter("machines")).isEqualTo(2);
    assertThat(m.counter("net_tx_bytes")).isEqualTo(150);
    assertThat(m.counter("server_cpu_ns")).isEqualTo(7); // the one server, read by both: the larger reading
    assertThat(m.counter("net_millis")).isEqualTo(10_020); // the same window, not twice as long
    assertThat(m.meanMs()).isBetween(1.9, 2.1);
  }
}
