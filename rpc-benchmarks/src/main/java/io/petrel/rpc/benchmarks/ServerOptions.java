package io.petrel.rpc.benchmarks;

import io.petrel.rpc.transport.netty.IoMode;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/** Command-line options of {@link BenchmarkServer}; see {@link #USAGE}. */
public record ServerOptions(
    String bind,
    int port,
    int workerThreads,
    int businessThreads,
    int businessQueue,
    String executor,
    IoMode io,
    Set<Framework> frameworks,
    boolean exitOnStdinEof,
    int maxCallsPerConnection) {

  /**
   * The benchmark server's calls in flight per connection for Petrel: 65536, where Petrel's own default is 1000
   * (gRPC-java's server sets no such limit unless told to, and the rpcx benchmark keeps 5000 calls in flight on
   * one connection).
   */
  static final int DEFAULT_MAX_CALLS_PER_CONNECTION = 65_536;

  static final String USAGE = """
      usage: java -cp benchmarks.jar io.petrel.rpc.benchmarks.BenchmarkServer [options]
        --port P              control port P (0: any free ports); Petrel on P+1, Petrel direct P+2,
                              gRPC-java P+3, gRPC-java directExecutor P+4, raw Netty echo P+5,
                              Petrel over TLS P+6, gRPC-java over TLS P+7 (default 7000)
        --bind ADDR           address to listen on (default 0.0.0.0; 127.0.0.1 for loopback only)
        --worker-threads N    event loops of every server (default 0 = available processors)
        --business-threads N  threads of Petrel's business pool (default: Petrel's, max(16, 4 x processors))
        --business-queue N    queue of Petrel's business pool (default: Petrel's, 2048)
        --executor E          Petrel's non-direct executor: pool (its bounded pool, default) or cached
                              (a cached thread pool, as gRPC-java's default executor is)
        --io MODE             auto (default), epoll, nio or io_uring (gRPC-java: epoll), for every server
        --max-calls-per-connection N
                              Petrel's calls in flight per connection (default 65536; Petrel's own
                              default is 1000): a call over it is refused with RESOURCE_EXHAUSTED
        --frameworks LIST     subset (separated by , or +) of petrel,petrel_direct,grpc,grpc_direct,netty,
                              petrel_tls,grpc_tls (default all); with a TLS one the server makes a CA and a
                              certificate at start (clients fetch the CA from the control port)
        --exit-on-stdin-eof   stop when standard input closes (used when a benchmark starts the server)
      """;

  /** The defaults: all frameworks on 0.0.0.0:7000.., Petrel's default pool, epoll when present. */
  public static ServerOptions defaults() {
    return new ServerOptions("0.0.0.0", 7000, 0, 0, -1, "pool", IoMode.AUTO, EnumSet.allOf(Framework.class), false,
        DEFAULT_MAX_CALLS_PER_CONNECTION);
  }

  /** Parses {@code args}; throws {@link IllegalArgumentException} with the usage on a bad option. */
  public static ServerOptions parse(String... args) {
    ServerOptions o = defaults();
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (a.equals("--exit-on-stdin-eof")) {
        o = o.with(null, null, null, null, null, null, null, null, true);
        continue;
      }
      if (a.equals("-h") || a.equals("--help")) {
        throw new IllegalArgumentException(USAGE);
      }
      if (i + 1 >= args.length) {
        throw new IllegalArgumentException("option " + a + " needs a value\n" + USAGE);
      }
      String v = args[++i];
      o = switch (a) {
        case "--port" -> o.with(null, nonNegative(a, v), null, null, null, null, null, null, null);
        case "--bind" -> o.with(v, null, null, null, null, null, null, null, null);
        case "--worker-threads" -> o.with(null, null, nonNegative(a, v), null, null, null, null, null, null);
        case "--business-threads" -> o.with(null, null, null, nonNegative(a, v), null, null, null, null, null);
        case "--business-queue" -> o.with(null, null, null, null, nonNegative(a, v), null, null, null, null);
        case "--executor" -> {
          if (!v.equals("pool") && !v.equals("cached")) {
            throw new IllegalArgumentException("--executor must be pool or cached: " + v);
          }
          yield o.with(null, null, null, null, null, v, null, null, null);
        }
        case "--io" -> o.with(null, null, null, null, null, null, NettyIo.parse(v), null, null);
        case "--frameworks" -> o.with(null, null, null, null, null, null, null, frameworks(v), null);
        case "--max-calls-per-connection" -> {
          int n = nonNegative(a, v);
          if (n == 0) {
            throw new IllegalArgumentException(a + " must be > 0: 0");
          }
          yield o.withMaxCallsPerConnection(n);
        }
        default -> throw new IllegalArgumentException("unknown option " + a + "\n" + USAGE);
      };
    }
    return o;
  }

  /** The arguments that reproduce these options (for starting the server in another process). */
  public List<String> toArgs() {
    List<String> a = new ArrayList<>(List.of("--bind", bind, "--port", Integer.toString(port),
        "--worker-threads", Integer.toString(workerThreads), "--executor", executor,
        "--io", io.name().toLowerCase(Locale.ROOT)));
    if (businessThreads > 0) {
      a.addAll(List.of("--business-threads", Integer.toString(businessThreads)));
    }
    if (businessQueue >= 0) {
      a.addAll(List.of("--business-queue", Integer.toString(businessQueue)));
    }
    a.addAll(List.of("--max-calls-per-connection", Integer.toString(maxCallsPerConnection)));
    List<String> names = new ArrayList<>();
    frameworks.forEach(f -> names.add(f.key()));
    a.addAll(List.of("--frameworks", String.join(",", names)));
    if (exitOnStdinEof) {
      a.add("--exit-on-stdin-eof");
    }
    return a;
  }

  ServerOptions with(@Nullable String bind, @Nullable Integer port, @Nullable Integer workers,
      @Nullable Integer business, @Nullable Integer queue, @Nullable String executor, @Nullable IoMode io,
      @Nullable Set<Framework> frameworks, @Nullable Boolean exitOnEof) {
    return new ServerOptions(bind != null ? bind : this.bind, port != null ? port : this.port,
        workers != null ? workers : this.workerThreads, business != null ? business : this.businessThreads,
        queue != null ? queue : this.businessQueue, executor != null ? executor : this.executor,
        io != null ? io : this.io, frameworks != null ? frameworks : this.frameworks,
        exitOnEof != null ? exitOnEof : this.exitOnStdinEof, maxCallsPerConnection);
  }

  /** Options with {@code io} for every server. */
  public ServerOptions withIo(IoMode io) {
    return with(null, null, null, null, null, null, io, null, null);
  }

  /** Options with Petrel's calls in flight per connection at {@code n}. */
  public ServerOptions withMaxCallsPerConnection(int n) {
    return new ServerOptions(bind, port, workerThreads, businessThreads, businessQueue, executor, io, frameworks,
        exitOnStdinEof, n);
  }

  /** Options with the given bind address and port. */
  public ServerOptions withAddress(String bind, int port) {
    return with(bind, port, null, null, null, null, null, null, null);
  }

  /** Options that stop the server when its standard input closes. */
  public ServerOptions exitingOnStdinEof() {
    return with(null, null, null, null, null, null, null, null, true);
  }

  static Set<Framework> frameworks(String list) {
    Set<Framework> s = EnumSet.noneOf(Framework.class);
    for (String name : list.split("[,+:]")) {
      if (!name.isBlank()) {
        s.add(EnumArgs.parse(Framework.class, name, "--frameworks value"));
      }
    }
    if (s.isEmpty()) {
      throw new IllegalArgumentException("--frameworks is empty");
    }
    return s;
  }

  private static int nonNegative(String option, String v) {
    int n;
    try {
      n = Integer.parseInt(v);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(option + " must be a number: " + v, e);
    }
    if (n < 0) {
      throw new IllegalArgumentException(option + " must be >= 0: " + n);
    }
    return n;
  }
}
