package io.petrel.rpc.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shaded jar as a user runs it: {@code java -jar benchmarks.jar ...} with no host, so the benchmark starts
 * its own server in a separate JVM on loopback; then the report from the JSON it wrote.
 */
class BenchmarkJarIT {
  private static final Path JAR = Path.of(System.getProperty("benchmarks.jar", "target/benchmarks.jar"));

  @TempDir
  Path dir;

  private ProcessResult run(List<String> args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    // JMH allows one run per machine (/tmp/jmh.lock); another build's benchmark test must not fail this one.
    cmd.add("-Djmh.ignoreLock=true");
    cmd.addAll(args);
    Path log = dir.resolve("out-" + System.nanoTime() + ".log");
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    if (!p.waitFor(150, TimeUnit.SECONDS)) {
      p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      throw new AssertionError("timed out: " + cmd + "\n" + Files.readString(log, StandardCharsets.UTF_8));
    }
    return new ProcessResult(p.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
  }

  record ProcessResult(int exit, String output) {}

  @Test
  @Timeout(value = 5, unit = TimeUnit.MINUTES)
  void jarRunsABenchmarkAgainstAServerItStartsItselfAndTheReportReadsTheResult() throws Exception {
    assertThat(JAR).isRegularFile();
    ProcessResult list = run(List.of("-jar", JAR.toString(), "-l"));
    assertThat(list.exit()).as(list.output()).isZero();
    assertThat(list.output()).contains("io.petrel.rpc.benchmarks.SyncCallBenchmark.call",
        "io.petrel.rpc.benchmarks.AsyncCallBenchmark.call");

    Path json = dir.resolve("results.json");
    ProcessResult bench = run(List.of("-jar", JAR.toString(), "SyncCallBenchmark",
        "-p", "framework=PETREL,GRPC,NETTY,PETREL_TLS,GRPC_TLS", "-p", "payload=MESSAGE", "-f", "1", "-wi", "0", "-i", "1", "-r", "1",
        "--threads", "1,2", "-bm", "thrpt", "-rf", "json", "-rff", json.toString()));
    assertThat(bench.exit()).as(bench.output()).isZero();
    assertThat(bench.output()).contains("server.cpu").doesNotContain("<failure>");
    // TLS from the shaded jar: the server made its certificate, both TLS servers use BoringSSL, and each
    // connection says what it negotiated (Petrel's server log line; the benchmark server for gRPC-java).
    assertThat(bench.output()).contains("petrel_tls OpenSSL (BoringSSL)", "grpc_tls OpenSSL (BoringSSL)")
        .containsPattern("TLS handshake with /127\\.0\\.0\\.1:\\d+ done: TLSv1\\.3 TLS_")
        .containsPattern("grpc_tls: TLS connection from /127\\.0\\.0\\.1:\\d+: TLSv1\\.3 TLS_");

    Path out = dir.resolve("report");
    ProcessResult report = run(List.of("-cp", JAR.toString(), Report.class.getName(), json.toString(),
        "--out", out.toString()));
    assertThat(report.exit()).as(report.output()).isZero();
    assertThat(out.resolve("results.md")).content(StandardCharsets.UTF_8)
        .contains("| Petrel (business pool) | 2 callers |", "| raw Netty echo | 1 caller |",
            "| Petrel (business pool, TLS) | 2 callers |", "| gRPC-java (default executor, TLS) | 1 caller |",
            "### Ratios with TLS (blocking callers)");
    assertThat(out.resolve("tps-message.png")).isNotEmptyFile();
  }

  @Test
  @Timeout(value = 5, unit = TimeUnit.MINUTES)
  void thePayloadScaleScriptRunsTheJarAndWritesItsTable() throws Exception {
    assertThat(JAR).isRegularFile();
    Path out = dir.resolve("scale");
    ProcessBuilder pb = new ProcessBuilder("bash", "scripts/scale-payloads.sh", "-q", "-j", JAR.toString(),
        "-o", out.toString(), "-f", "PETREL,NETTY", "-v", "BYTES_4,BYTES_1M", "-c", "2", "-l", "240");
    pb.environment().put("JAVA", Path.of(System.getProperty("java.home"), "bin", "java").toString());
    pb.environment().put("JAVA_OPTS", "-Djmh.ignoreLock=true");
    Path log = dir.resolve("scale.log");
    Process p = pb.redirectErrorStream(true).redirectOutput(log.toFile()).start();
    if (!p.waitFor(270, TimeUnit.SECONDS)) {
      p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      throw new AssertionError("timed out:\n" + Files.readString(log, StandardCharsets.UTF_8));
    }
    String output = Files.readString(log, StandardCharsets.UTF_8);
    assertThat(p.exitValue()).as(output).isZero();
    // The plan comes before anything runs: 2 frameworks x 2 payloads, each 1 + 1 s and 8 s to start and stop.
    assertThat(output).startsWith("scale-payloads.sh: 4 runs x 10 s");
    assertThat(out.resolve("table.md")).content(StandardCharsets.UTF_8)
        .contains("**Smoke run (-q), not a measurement**", "- Machine: ", "- Commands:", "-jar " + JAR.toAbsolutePath().normalize())
        .contains("#### By payload: blocking callers, 2 callers, 1 connection")
        .contains("| payload | Petrel (business pool) | raw Netty echo |")
        .containsPattern("\\| 1 MiB opaque \\| [\\d,]+ \\| [\\d,]+ \\|\\n")
        .contains("MB/s (payload bytes both ways per second):");
    assertThat(out.resolve("payloads.json")).isNotEmptyFile();
    assertThat(out.resolve("report").resolve("mbps-payload-sync-2.png")).isNotEmptyFile();
  }
}
