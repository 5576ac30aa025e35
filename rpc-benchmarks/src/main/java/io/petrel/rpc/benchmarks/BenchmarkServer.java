package io.petrel.rpc.benchmarks;

import io.grpc.Server;
import io.petrel.rpc.transport.netty.NettyOptions;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.RpcServerBuilder;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.TlsConfig;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * The server side of the benchmarks: Petrel (business pool and direct), gRPC-java (default executor and
 * directExecutor), the raw Netty echo, and Petrel and gRPC-java over TLS, each on its own port, plus a control
 * port that tells clients the ports, the server's CPU time and calls served, and the CA that TLS clients trust.
 *
 * <p>When it serves a TLS framework, the server makes a CA and a server certificate at start
 * ({@link BenchCertificates}); both TLS servers use that certificate, TLS 1.3 and OpenSSL (BoringSSL): Petrel's
 * through netty-tcnative, gRPC-java's the one grpc-netty-shaded bundles. What each connection negotiated is
 * printed once per connection: by Petrel's own DEBUG line ("TLS handshake with ... done: TLSv1.3 ..." of
 * io.petrel.rpc.transport.netty.ServerTlsHandler, on in the benchmarks' logback.xml) and by this server for
 * gRPC-java ("grpc_tls: TLS connection from ...: TLSv1.3 ...").
 *
 * <pre>java -cp benchmarks.jar io.petrel.rpc.benchmarks.BenchmarkServer --port 7000</pre>
 */
public final class BenchmarkServer implements AutoCloseable {
  /** The line printed once everything listens; a benchmark that starts the server waits for it. */
  static final String READY = "petrel-benchmark-server ready";

  private final ServerOptions options;
  private final List<AutoCloseable> closeables = new ArrayList<>();
  private final Map<Framework, Integer> ports = new EnumMap<>(Framework.class);
  private final Map<Framework, LongAdder> calls = new EnumMap<>(Framework.class);
  private @Nullable ControlServer control;
  /** The TLS material, when a TLS framework is served. */
  private @Nullable BenchCertificates certificates;
  /** What the latest TLS connection of each TLS framework negotiated, where this server can see it (gRPC-java). */
  private final Map<Framework, String> tlsSessions = new ConcurrentHashMap<>();
  private @Nullable String tlsDescription;
  /** gRPC-java's (shaded) Netty groups, shared by its servers (default executor, directExecutor, TLS). */
  private io.grpc.netty.shaded.io.netty.channel.@Nullable EventLoopGroup grpcBoss;
  private io.grpc.netty.shaded.io.netty.channel.@Nullable EventLoopGroup grpcWorkers;

  private BenchmarkServer(ServerOptions options) {
    this.options = options;
    for (Framework f : Framework.values()) {
      calls.put(f, new LongAdder());
    }
  }

  /** Starts every framework the options name, then the control port. */
  public static BenchmarkServer start(ServerOptions options) throws Exception {
    BenchmarkServer s = new BenchmarkServer(options);
    try {
      s.startAll();
    } catch (Exception | Error e) {
      s.close();
      throw e;
    }
    return s;
  }

  public static void main(String[] args) throws Exception {
    ServerOptions options;
    try {
      options = ServerOptions.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println(e.getMessage());
      System.exit(2);
      return;
    }
    BenchmarkServer server = start(options);
    CountDownLatch stop = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      server.close();
      stop.countDown();
    }, "bench-server-shutdown"));
    if (server.tlsDescription() != null) {
      System.out.println("TLS: " + server.tlsDescription());
    }
    System.out.println(READY + " " + server.describe());
    System.out.flush();
    if (options.exitOnStdinEof()) {
      // The parent benchmark holds our stdin; when it exits (or dies), stdin closes and so do we.
      InputStream in = System.in;
      byte[] buf = new byte[64];
      while (in.read(buf) >= 0) {
        // Nothing is ever sent; just wait for end of stream.
      }
      System.exit(0);
    }
    stop.await();
  }

  /**
   * What the TLS frameworks use (certificate, names, providers, protocols), or null when none is served.
   */
  public @Nullable String tlsDescription() {
    return tlsDescription;
  }

  /**
   * "TLSv1.3 TLS_AES_128_GCM_SHA256" as the latest TLS connection of {@code f} negotiated it, where the server
   * sees it (gRPC-java; Petrel says it in its DEBUG line), or null.
   */
  @Nullable String tlsSession(Framework f) {
    return tlsSessions.get(f);
  }

  /** The TLS material (CA, certificate, key), or null when no TLS framework is served. */
  @Nullable BenchCertificates certificates() {
    return certificates;
  }

  private ControlServer controlServer() {
    return Objects.requireNonNull(control, "the benchmark server's control port is not started yet");
  }

  private LongAdder counter(Framework f) {
    return Objects.requireNonNull(calls.get(f), "a counter for every framework");
  }

  private BenchCertificates tlsMaterial() {
    return Objects.requireNonNull(certificates, "the TLS material is made before a TLS framework starts");
  }

  /** "control=7000 petrel=7001 ..." */
  public String describe() {
    return "control=" + controlServer().port() + " " + portsLine();
  }

  /** The control port (the one clients are given as {@code -p port=...}). */
  public int controlPort() {
    return controlServer().port();
  }

  /** Where each framework listens, for clients in this JVM. */
  public Endpoints endpoints(String host) {
    return new Endpoints(host, controlServer().port(), Map.copyOf(ports));
  }

  private String portsLine() {
    StringBuilder sb = new StringBuilder();
    ports.forEach((f, p) -> sb.append(sb.length() == 0 ? "" : " ").append(f.key()).append('=').append(p));
    return sb.toString();
  }

  private long totalCalls() {
    long n = 0;
    for (LongAdder a : calls.values()) {
      n += a.sum();
    }
    return n;
  }

  private InetSocketAddress address(Framework f) {
    int port = options.port() == 0 ? 0 : options.port() + 1 + f.ordinal();
    return new InetSocketAddress(options.bind(), port);
  }

  private void startAll() throws Exception {
    int workers = options.workerThreads() > 0 ? options.workerThreads() : Runtime.getRuntime().availableProcessors();
    if (options.frameworks().stream().anyMatch(Framework::tls)) {
      BenchCertificates c = BenchCertificates.create(options.bind());
      certificates = c;
      closeables.add(c); // closed last, after the servers
    }
    List<String> tls = new ArrayList<>();
    for (Framework f : options.frameworks()) {
      switch (f) {
        case PETREL, PETREL_DIRECT, PETREL_TLS -> startPetrel(f);
        case GRPC, GRPC_DIRECT, GRPC_TLS -> tls.add(startGrpc(f, workers));
        case NETTY -> startNetty(workers);
        default -> throw new AssertionError(f);
      }
      if (f == Framework.PETREL_TLS) {
        tls.add(f.key() + " " + petrelTlsProvider() + ", offers TLSv1.3 and TLSv1.2 (negotiates TLSv1.3 with a"
            + " Petrel client)");
      }
    }
    tls.removeIf(java.util.Objects::isNull);
    if (certificates != null) {
      tlsDescription = "server certificate EC P-256/ECDSA from a CA made at start, names " + certificates.names()
          + "; " + String.join("; ", tls) + "; cipher suites: each provider's defaults (BoringSSL's TLS 1.3 suites"
          + " cannot be chosen); negotiated: printed once per connection";
    }
    BenchCertificates c = certificates;
    control = new ControlServer(new InetSocketAddress(options.bind(), options.port()), this::portsLine,
        this::totalCalls, c == null ? () -> null : c::caLine);
  }

  /** The provider Petrel's TLS uses here, as Petrel chooses it (io.petrel.tls.provider, else OpenSSL if it loads). */
  private static String petrelTlsProvider() {
    String wanted = System.getProperty("io.petrel.tls.provider", "auto").trim();
    if (!wanted.equalsIgnoreCase("jdk") && io.netty.handler.ssl.OpenSsl.isAvailable()) {
      return "OpenSSL (" + io.netty.handler.ssl.OpenSsl.versionString() + ") through netty-tcnative";
    }
    return "JDK" + (wanted.equalsIgnoreCase("jdk") ? " (-Dio.petrel.tls.provider=jdk)"
        : " (netty-tcnative not available: " + io.netty.handler.ssl.OpenSsl.unavailabilityCause() + ")");
  }

  /** The store the Tarantool client seed fills (Petrel only): key to object, shared by Petrel's servers. */
  private final Map<Long, byte[]> store = new ConcurrentHashMap<>();

  private void startPetrel(Framework f) throws IOException {
    LongAdder counter = counter(f);
    byte[] empty = new byte[0];
    ServiceDefinition service = ServiceDefinition.builder(Messages.SERVICE)
        .unary(Messages.ECHO, request -> {
          counter.increment();
          return Messages.reply(request);
        })
        .unary(Messages.ECHO_BYTES, request -> {
          counter.increment();
          return request;
        })
        .unary(Messages.STORE_PUT, request -> {
          counter.increment();
          if (request.length < Long.BYTES) {
            throw io.petrel.rpc.Status.INVALID_ARGUMENT
                .withDescription("StorePut needs an 8-byte key before the object: got " + request.length + " bytes")
                .asException();
          }
          long key = java.nio.ByteBuffer.wrap(request).getLong();
          store.put(key, java.util.Arrays.copyOfRange(request, Long.BYTES, request.length));
          return empty;
        })
        .unary(Messages.STORE_SIZE, request -> {
          counter.increment();
          return java.nio.ByteBuffer.allocate(Long.BYTES).putLong(store.size()).array();
        })
        .unary(Messages.STORE_CLEAR, request -> {
          counter.increment();
          store.clear();
          return empty;
        })
        .unary(Messages.HELLO, request -> {
          counter.increment();
          return Messages.HELLO_REPLY;
        })
        .build();
    InetSocketAddress a = address(f);
    RpcServerBuilder b = RpcServer.builder()
        .bindAddress(a.getHostString(), a.getPort())
        .addService(service)
        .option(NettyOptions.IO_MODE, options.io())
        .option(NettyOptions.WORKER_THREADS, options.workerThreads())
        // gRPC-java's server does not limit concurrent calls per connection unless told to; Petrel's default
        // (1000) would refuse the rpcx benchmark's window of 5000 calls in flight on one connection. The
        // benchmark server allows 65536 unless --max-calls-per-connection says otherwise.
        .maxConcurrentCallsPerConnection(options.maxCallsPerConnection())
        // Nor does it limit connections per address; a benchmark's clients all come from one address (10,000
        // idle connections in IdleConnections), over Petrel's default of 1000.
        .maxConnectionsPerAddress(Integer.MAX_VALUE)
        .maxConnections(100_000) // lowered at start to what the open-file limit allows, with a WARN
        .name("bench-" + f.key());
    if (f.tls()) {
      BenchCertificates certs = tlsMaterial();
      b.tls(TlsConfig.builder().keyPair(certs.certificateFile(), certs.keyFile()).build());
    }
    if (f == Framework.PETREL_DIRECT) {
      b.directExecutor();
    } else {
      if (options.businessThreads() > 0) {
        b.businessThreads(options.businessThreads());
      }
      if (options.businessQueue() >= 0) {
        b.businessQueueSize(options.businessQueue());
      }
      if (options.executor().equals("cached")) {
        ExecutorService pool = Executors.newCachedThreadPool(new DefaultThreadFactory("bench-petrel-cached", true));
        closeables.add(pool::shutdownNow);
        b.executor(pool);
      }
    }
    RpcServer server = b.build().start();
    closeables.add(() -> {
      server.shutdownNow();
      server.awaitTermination(10, TimeUnit.SECONDS);
    });
    ports.put(f, server.port());
  }

  /** Starts a gRPC-java server; returns what its TLS uses ("grpc_tls OpenSSL ..."), or null for plaintext. */
  private @Nullable String startGrpc(Framework f, int workers) throws IOException {
    var bossGroup = grpcBoss;
    var workerGroup = grpcWorkers;
    if (bossGroup == null || workerGroup == null) {
      var boss = GrpcPeer.group(1, options.io(), "bench-grpc-boss");
      var work = GrpcPeer.group(workers, options.io(), "bench-grpc-worker");
      grpcBoss = bossGroup = boss;
      grpcWorkers = workerGroup = work;
      closeables.add(() -> {
        boss.shutdownGracefully(0, 5, TimeUnit.SECONDS).syncUninterruptibly();
        work.shutdownGracefully(0, 5, TimeUnit.SECONDS).syncUninterruptibly();
      });
    }
    io.grpc.netty.shaded.io.netty.handler.ssl.SslContext tls = f.tls()
        ? GrpcPeer.serverTls(tlsMaterial().certificateFile(), tlsMaterial().keyFile()) : null;
    Server server = GrpcPeer.start(address(f), bossGroup, workerGroup, options.io(), f == Framework.GRPC_DIRECT,
        counter(f), tls, session -> {
          tlsSessions.put(f, session.substring(session.lastIndexOf(": ") + 2));
          System.out.println(f.key() + ": " + session);
        });
    closeables.add(() -> {
      server.shutdownNow();
      server.awaitTermination(10, TimeUnit.SECONDS);
    });
    ports.put(f, server.getPort());
    return tls == null ? null : f.key() + " " + GrpcPeer.provider(tls) + " bundled with grpc-netty-shaded, "
        + GrpcPeer.TLS_PROTOCOL + " only";
  }

  private void startNetty(int workers) throws InterruptedException {
    EventLoopGroup boss = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("bench-netty-boss", true),
        NettyIo.handlerFactory(options.io()));
    EventLoopGroup work = new MultiThreadIoEventLoopGroup(workers,
        new DefaultThreadFactory("bench-netty-worker", true), NettyIo.handlerFactory(options.io()));
    closeables.add(() -> {
      boss.shutdownGracefully(0, 5, TimeUnit.SECONDS).syncUninterruptibly();
      work.shutdownGracefully(0, 5, TimeUnit.SECONDS).syncUninterruptibly();
    });
    RawNettyServer server = RawNettyServer.start(address(Framework.NETTY), boss, work, options.io(),
        counter(Framework.NETTY));
    closeables.add(server);
    ports.put(Framework.NETTY, server.port());
  }

  /** Stops everything, the control port first; servers before their event loop groups. */
  @Override
  public void close() {
    if (control != null) {
      try {
        control.close();
      } catch (IOException e) {
        System.err.println("control: close failed: " + e);
      }
    }
    for (int i = closeables.size() - 1; i >= 0; i--) {
      try {
        closeables.get(i).close();
      } catch (Exception e) {
        System.err.println("benchmark server: close failed: " + e);
      }
    }
    closeables.clear();
  }
}
