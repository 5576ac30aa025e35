package io.petrel.rpc.benchmarks;

import java.io.IOException;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * The benchmark server a seed workload calls: the one at {@code --host}/{@code --port} (its control port), or,
 * with no host, a {@link BenchmarkServer} it starts in its own JVM on loopback (with {@code --server-jvm} and
 * {@code --server-args}) and stops at the end.
 */
final class SeedServer implements AutoCloseable {
  private final @Nullable ServerProcess process;
  private final Endpoints endpoints;
  private final String description;
  /** The {@code --server-args} of a server this seed started, or null for the one at {@code --host}. */
  private final @Nullable String serverArgs;

  private SeedServer(@Nullable ServerProcess process, Endpoints endpoints, String description,
      @Nullable String serverArgs) {
    this.process = process;
    this.endpoints = endpoints;
    this.description = description;
    this.serverArgs = serverArgs;
  }

  /** Reads --host, --port, --server-jvm and --server-args from {@code args}. */
  static SeedServer open(SeedArgs args, String defaultServerArgs) throws IOException {
    String host = args.string("host", "");
    int port = args.integer("port", 7000, 1);
    if (!host.isBlank()) {
      // --server-jvm and --server-args shape only a server the seed starts itself: given with --host, refused;
      // not given, not printed among the options used.
      for (String own : new String[] {"server-jvm", "server-args"}) {
        if (args.has(own)) {
          throw new IllegalArgumentException("--" + own + " sets up a server the seed starts itself; with --host "
              + host + " it uses the server already there: start that one with the options you want");
        }
      }
      return new SeedServer(null, Endpoints.discover(host, port), "the benchmark server at " + host + ":" + port,
          null);
    }
    String jvm = args.string("server-jvm", "-Xms1g -Xmx1g");
    String serverArgs = args.string("server-args", defaultServerArgs);
    ServerOptions options = ServerOptions.parse(split(serverArgs));
    ServerProcess p = ServerProcess.start(options, Arrays.asList(split(jvm)));
    return new SeedServer(p, p.endpoints(), "a benchmark server started on 127.0.0.1 (JVM " + jvm + ", options '"
        + serverArgs + "')", serverArgs);
  }

  /**
   * Fails, before anything is measured, naming the first of {@code frameworks} the server does not serve and how
   * to have it served: with {@code --server-args} for a server this seed starts, with the server's own
   * {@code --frameworks} for the one at {@code --host}.
   */
  void requireServed(Iterable<Framework> frameworks) {
    for (Framework f : frameworks) {
      try {
        endpoints.port(f);
      } catch (IllegalStateException e) {
        throw new IllegalArgumentException(serverArgs == null
            ? e.getMessage() + ": start it with --frameworks including " + f.key()
            : f.key() + " is not served by the server this seed started (its --server-args '" + serverArgs
                + "'): give --server-args with a --frameworks list that includes " + f.key(), e);
      }
    }
  }

  Endpoints endpoints() {
    return endpoints;
  }

  String description() {
    return description;
  }

  /** The server's CPU time in nanoseconds now, or -1 where it cannot be read. */
  long cpuNanos() {
    try {
      return endpoints.sample().cpuNanos();
    } catch (IOException | RuntimeException e) {
      System.err.println("seed: cannot read the server's CPU time: " + e);
      return -1;
    }
  }

  @Override
  public void close() {
    if (process != null) {
      process.close();
    }
  }

  static String[] split(String s) {
    return s.isBlank() ? new String[0] : s.trim().split("\\s+");
  }
}
