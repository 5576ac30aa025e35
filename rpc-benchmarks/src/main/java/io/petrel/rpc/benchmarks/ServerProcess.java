package io.petrel.rpc.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A {@link BenchmarkServer} in its own JVM on loopback, started by a benchmark that was given no host. It
 * listens on free ports of 127.0.0.1 and exits when this JVM closes its standard input (also when this JVM
 * dies), so a killed benchmark leaves no server behind.
 */
final class ServerProcess implements AutoCloseable {
  private static final long START_TIMEOUT_SECONDS = 60;

  private final Process process;
  private final Endpoints endpoints;

  private ServerProcess(Process process, Endpoints endpoints) {
    this.process = process;
    this.endpoints = endpoints;
  }

  /** Starts the server with {@code options} (its address is replaced by 127.0.0.1 and free ports). */
  static ServerProcess start(ServerOptions options, List<String> jvmArgs) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(jvmArgs);
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(BenchmarkServer.class.getName());
    cmd.addAll(options.withAddress("127.0.0.1", 0).exitingOnStdinEof().toArgs());
    Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    try {
      BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
      CompletableFuture<String> ready = CompletableFuture.supplyAsync(() -> awaitReady(out));
      String line = ready.get(START_TIMEOUT_SECONDS, TimeUnit.SECONDS);
      Thread pump = new Thread(() -> pump(out), "bench-server-output");
      pump.setDaemon(true);
      pump.start();
      int control = Integer.parseInt(line.replaceFirst(".*control=(\\d+).*", "$1"));
      return new ServerProcess(p, Endpoints.discover("127.0.0.1", control));
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while starting the benchmark server", e);
    } catch (ExecutionException | TimeoutException | RuntimeException e) {
      p.destroyForcibly();
      throw new IOException("the benchmark server did not start within " + START_TIMEOUT_SECONDS
          + " s: " + String.join(" ", cmd), e instanceof ExecutionException ? e.getCause() : e);
    }
  }

  private static String awaitReady(BufferedReader out) {
    try {
      String line;
      while ((line = out.readLine()) != null) {
        if (line.startsWith(BenchmarkServer.READY)) {
          return line;
        }
        System.err.println("[server] " + line);
      }
      throw new IllegalStateException("the benchmark server exited before it was ready");
    } catch (IOException e) {
      throw new IllegalStateException("cannot read the benchmark server's output", e);
    }
  }

  private static void pump(BufferedReader out) {
    try {
      String line;
      while ((line = out.readLine()) != null) {
        System.err.println("[server] " + line);
      }
    } catch (IOException e) {
      // The server exited.
    }
  }

  Endpoints endpoints() {
    return endpoints;
  }

  /** Closes the server's standard input (it exits), then waits, then kills it if it is still there. */
  @Override
  public void close() {
    try {
      process.getOutputStream().close();
      if (!process.waitFor(15, TimeUnit.SECONDS)) {
        process.destroy();
        if (!process.waitFor(5, TimeUnit.SECONDS)) {
          process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
      }
    } catch (IOException e) {
      process.destroyForcibly();
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }
}
