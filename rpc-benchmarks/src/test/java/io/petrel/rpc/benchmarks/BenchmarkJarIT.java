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
}
