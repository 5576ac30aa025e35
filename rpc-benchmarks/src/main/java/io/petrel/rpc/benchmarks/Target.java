package io.petrel.rpc.benchmarks;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.jspecify.annotations.Nullable;

/**
 * What a benchmark calls: one framework, one payload, one shared client over {@code connections} connections.
 * With {@code host} empty (the default) each trial starts its own {@link BenchmarkServer} in a separate JVM on
 * loopback; otherwise it uses the server at {@code host}, whose control port is {@code port}.
 */
@State(Scope.Benchmark)
public class Target {
  /**
   * The default leaves out PETREL_TLS and GRPC_TLS, so that the default run does not get longer: ask for them
   * with {@code -p framework=PETREL,PETREL_TLS,GRPC,GRPC_TLS} (docs/benchmarks.md, "TLS").
   */
  @Param({"PETREL", "PETREL_DIRECT", "GRPC", "GRPC_DIRECT", "NETTY"})
  public Framework framework;

  @Param({"MESSAGE", "EMPTY", "BYTES_4", "BYTES_1K"})
  public Payload payload;

  /** The benchmark server's host; empty: start one on loopback for each trial. */
  @Param({""})
  public String host;

  /** The server's control port (see {@link BenchmarkServer}); unused when {@code host} is empty. */
  @Param({"7000"})
  public int port;

  /** TCP connections from this client JVM to the server, shared by all benchmark threads. */
  @Param({"1"})
  public int connections;

  /**
   * The client's I/O: auto (epoll when present), epoll, nio or io_uring (gRPC-java: epoll); also the I/O of a
   * server this benchmark starts itself, unless {@code serverArgs} set {@code --io}.
   */
  @Param({"auto"})
  public String io;

  /** JVM options of a server this benchmark starts itself. */
  @Param({"-Xms1g -Xmx1g"})
  public String serverJvmArgs;

  /** {@link BenchmarkServer} options of a server this benchmark starts itself, e.g. "--io nio". */
  @Param({""})
  public String serverArgs;

  BenchClient client;
  private @Nullable ServerProcess process;
  private final List<Runnable> beforeClose = new ArrayList<>();

  @Setup(Level.Trial)
  public void connect() throws Exception {
    Endpoints endpoints;
    if (host.isBlank()) {
      ServerOptions options = forOwnServer(ownServerOptions(serverArgs, io), framework)
          .withAddress("127.0.0.1", 0);
      ServerProcess started = ServerProcess.start(options, Arrays.asList(split(serverJvmArgs)));
      process = started;
      endpoints = started.endpoints();
    } else {
      endpoints = Endpoints.discover(host, port);
    }
    client = BenchClient.connect(framework, payload, endpoints, connections, NettyIo.parse(io));
    client.verify(client.call());
    Measurements.beginTrial(endpoints);
  }

  /** Runs {@code r} before the client closes (e.g. to wait for calls still in flight). */
  void beforeClose(Runnable r) {
    beforeClose.add(r);
  }

  @TearDown(Level.Trial)
  public void close() {
    try {
      beforeClose.forEach(Runnable::run);
      beforeClose.clear();
      Measurements.endTrial();
      if (client != null) {
        client.close();
      }
    } finally {
      if (process != null) {
        process.close();
      }
    }
  }

  /**
   * A server this benchmark starts for a plaintext framework serves, unless {@code serverArgs} name the
   * frameworks, what it served before the TLS frameworks existed: no certificate is made and no TLS server
   * runs beside the one measured. For a TLS framework it serves everything.
   */
  static ServerOptions forOwnServer(ServerOptions options, Framework measured) {
    if (measured.tls() || !options.frameworks().equals(ServerOptions.defaults().frameworks())) {
      return options;
    }
    java.util.Set<Framework> plaintext = java.util.EnumSet.allOf(Framework.class);
    plaintext.removeIf(Framework::tls);
    return options.with(null, null, null, null, null, null, null, plaintext, null);
  }

  /**
   * The options of a server this benchmark starts: {@code serverArgs}, with the client's {@code io} unless they
   * set {@code --io} themselves (so that {@code -p io=nio} measures NIO on both sides).
   */
  static ServerOptions ownServerOptions(String serverArgs, String io) {
    String[] args = split(serverArgs);
    ServerOptions options = ServerOptions.parse(args);
    return Arrays.asList(args).contains("--io") ? options
        : options.withIo(NettyIo.parse(io));
  }

  static String[] split(String s) {
    return s.isBlank() ? new String[0] : s.trim().split("\\s+");
  }
}
