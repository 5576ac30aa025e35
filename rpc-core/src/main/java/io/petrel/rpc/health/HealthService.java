package io.petrel.rpc.health;

import io.netty.buffer.ByteBuf;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.Marshaller;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.MethodType;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcClientBuilder;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServerLifecycleListener;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.StatusException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A server's health, served to probes and to whoever asks (what gRPC's health checking service does, on Petrel's
 * protocol): the service {@value #SERVICE} with one method, {@code check}, which answers a service's
 * {@link ServingStatus} ("" for the server as a whole). Add it to a server as a service and as a lifecycle
 * listener:
 *
 * <pre>{@code
 * HealthService health = HealthService.create();
 * RpcServer server = RpcServer.builder().port(7000)
 *     .addService(orders)
 *     .addService(health.definition())
 *     .addLifecycleListener(health)
 *     .drainDelay(Duration.ofSeconds(5))
 *     .build().start();
 * }</pre>
 *
 * <p>It answers SERVING for the server and each service it serves once it serves, NOT_SERVING for all of them from
 * the moment it starts to shut down (during its {@code drainDelay} it still answers, so a readiness probe sees
 * NOT_SERVING and the load balancer in front stops sending before the server says GOAWAY; without a drain delay
 * the probe finds the port closed instead), SERVICE_UNKNOWN for a service it does not serve (NOT_SERVING for
 * any name before it serves). The application sets a service's status itself with {@link #setStatus}
 * (NOT_SERVING while a database it needs is down).
 *
 * <p>One HealthService per server: it follows the first server whose start it hears, and ignores another's
 * (an ERROR says so). Its checks run as any call does, through the server's interceptors and its business pool
 * (a full pool answers RESOURCE_EXHAUSTED): use it for readiness, not for liveness. {@link #serveHttp} answers
 * the same statuses over HTTP on a thread of its own, with {@code /livez} for liveness (Kubernetes' httpGet
 * probes: the recommended way).
 *
 * <p>{@link #check(RpcClient, String, Duration)} asks from Java; {@link #main} is a probe for a container's exec
 * check: {@code java -cp app.jar io.petrel.rpc.health.HealthService 127.0.0.1:7000} exits 0 when SERVING.
 */
public final class HealthService implements ServerLifecycleListener {
  private static final Logger log = LoggerFactory.getLogger(HealthService.class);
  /** The service's name. */
  public static final String SERVICE = "petrel.health.Health";

  /** A service's health, as {@code check} answers it. */
  public enum ServingStatus {
    /** Serving calls. */
    SERVING,
    /** Not serving calls: not started yet, shutting down, or set so by the application. */
    NOT_SERVING,
    /** The server does not serve that service. */
    SERVICE_UNKNOWN
  }

  private static final Marshaller<String> UTF8 = new Marshaller<>() {
    @Override
    public int serializedSize(String value) {
      return value.getBytes(StandardCharsets.UTF_8).length;
    }

    @Override
    public void write(String value, ByteBuf out) {
      out.writeCharSequence(value, StandardCharsets.UTF_8);
    }

    @Override
    public String read(ByteBuf in) {
      return in.toString(StandardCharsets.UTF_8);
    }
  };

  /**
   * {@code check}: the request is a service's name in UTF-8 ("" for the server as a whole), the response the name
   * of its {@link ServingStatus} in UTF-8. Idempotent.
   */
  public static final MethodDescriptor<String, String> CHECK = MethodDescriptor.<String, String>newBuilder()
      .serviceName(SERVICE).methodName("check").type(MethodType.UNARY).requestMarshaller(UTF8)
      .responseMarshaller(UTF8).idempotent(true).build();

  /** Statuses the application set; the rest follow the server's lifecycle. */
  private final Map<String, ServingStatus> set = new ConcurrentHashMap<>();

  /** Where the server is, read and replaced whole (so a check never sees half of a change). */
  private record State(@Nullable RpcServer server, java.util.Set<String> served, boolean draining) {}

  private volatile State state = new State(null, java.util.Set.of(), false);
  /** A server that started while the one followed was draining: followed once that one has terminated. */
  private volatile @Nullable RpcServer next;

  private HealthService() {}

  public static HealthService create() {
    return new HealthService();
  }

  /** The service to add to the server. */
  public ServiceDefinition definition() {
    return ServiceDefinition.builder(SERVICE).unary(CHECK, service -> status(service).name()).build();
  }

  /**
   * Sets {@code service}'s status ("" for the server as a whole; a service's status does not follow the server's
   * and the reverse: a probe of one sees only that one): NOT_SERVING while something it needs is down; SERVING
   * gives it back to the lifecycle (a server shutting down answers NOT_SERVING whatever was set). A service the
   * server does not serve stays SERVICE_UNKNOWN.
   *
   * @throws IllegalArgumentException for SERVICE_UNKNOWN, which only the server's services decide
   */
  public void setStatus(String service, ServingStatus status) {
    Objects.requireNonNull(service, "service");
    Objects.requireNonNull(status, "status");
    switch (status) {
      case SERVING -> set.remove(service);
      case NOT_SERVING -> set.put(service, status);
      case SERVICE_UNKNOWN -> throw new IllegalArgumentException("SERVICE_UNKNOWN is what check answers for a"
          + " service the server does not serve; set NOT_SERVING to take a service out");
    }
  }

  /**
   * Serves this service's answers over plain HTTP on {@code address} (port 0: any free port, which
   * {@link HealthHttpEndpoint#address()} gives), for Kubernetes' {@code httpGet} probes: {@code /livez} (200 while
   * the JVM answers, even with the business pool full), {@code /readyz} and {@code /readyz?service=NAME} (200 for
   * SERVING, 503 for NOT_SERVING, 404 for SERVICE_UNKNOWN). It runs on daemon threads of its own (four, a watchdog
   * that closes an exchange still running 5 s after its first bytes, and the JDK server's dispatcher), never the
   * server's; close it to stop it (after the server's shutdown, or leave it to the JVM's exit: none of its threads
   * keeps the JVM alive). Needs the JDK module {@code jdk.httpserver} (in every full JDK; a jlink'ed runtime must
   * include it).
   *
   * @throws java.io.IOException if it cannot listen there (the port is taken, say)
   * @throws IllegalStateException if the runtime lacks {@code jdk.httpserver}
   */
  public HealthHttpEndpoint serveHttp(java.net.InetSocketAddress address) throws java.io.IOException {
    Objects.requireNonNull(address, "address");
    try {
      return new HealthHttpEndpoint(this, address);
    } catch (NoClassDefFoundError e) {
      throw new IllegalStateException("health over HTTP needs the JDK module jdk.httpserver, which this runtime"
          + " lacks (a jlink'ed image: add --add-modules jdk.httpserver); or use the exec probe", e);
    }
  }

  /** What {@code check} answers for {@code service} now. */
  public ServingStatus status(String service) {
    State s = state;
    RpcServer waiting = next;
    if (waiting != null && s.server() != null && s.server().isTerminated()) {
      follow(waiting); // the old one has ended: the one that started while it drained is the server now
      s = state;
    }
    if (s.server() == null) {
      return ServingStatus.NOT_SERVING; // not serving yet
    }
    if (!service.isEmpty() && !s.served().contains(service)) {
      return ServingStatus.SERVICE_UNKNOWN;
    }
    if (s.draining()) {
      return ServingStatus.NOT_SERVING;
    }
    ServingStatus mine = set.get(service);
    return mine != null ? mine : ServingStatus.SERVING;
  }

  @Override
  public void onServing(RpcServer server) {
    synchronized (this) {
      State was = state;
      RpcServer bound = was.server();
      if (bound != null && bound != server && !bound.isTerminated()) {
        if (was.draining()) {
          // A restart that did not wait for the old server to end: follow this one once it has (status()), so
          // that the old one's checks keep answering NOT_SERVING while it drains.
          next = server;
          return;
        }
        log.error("a HealthService follows one server at a time: it follows {}, which still serves, and ignores {}"
            + " (make one per server)", bound, server);
        return;
      }
      follow(server);
    }
  }

  /**
   * Follows {@code server} from now on (not following one yet, or the one followed has terminated: a restart in
   * the same JVM, such as a Spring context stopped and started). What the application set stays set.
   */
  private synchronized void follow(RpcServer server) {
    if (next == server) {
      next = null;
    }
    java.util.Set<String> names = new java.util.HashSet<>();
    server.services().forEach(d -> names.add(d.name()));
    state = new State(server, java.util.Set.copyOf(names), server.isShutdown());
  }

  @Override
  public void onDraining(RpcServer server) {
    synchronized (this) {
      State s = state;
      if (s.server() == server) {
        state = new State(server, s.served(), true);
      }
    }
  }

  /**
   * Asks the server {@code client} calls for {@code service}'s status ("" for the server), within {@code timeout}.
   *
   * @throws StatusException when it cannot be asked (UNAVAILABLE: nothing listens there, or it is shutting down;
   *     UNIMPLEMENTED: that server has no HealthService; DEADLINE_EXCEEDED)
   */
  public static ServingStatus check(RpcClient client, String service, Duration timeout) throws StatusException {
    return parse(client.unaryCall(CHECK, service, CallOptions.DEFAULT.withTimeout(timeout)));
  }

  private static ServingStatus parse(String answer) {
    try {
      return ServingStatus.valueOf(answer);
    } catch (IllegalArgumentException e) {
      return ServingStatus.NOT_SERVING; // a later version's status this one does not know: not a yes
    }
  }

  /** Exit code of the probe: the server could not be asked (see {@link #probe}). */
  static final int CANNOT_ASK = 3;
  private static final long MAX_TIMEOUT_MILLIS = java.util.concurrent.TimeUnit.HOURS.toMillis(1);

  /**
   * A probe: {@code HealthService [OPTIONS] TARGET [SERVICE] [TIMEOUT_MS]} asks the server at TARGET
   * ({@code host:port}, or any target {@link RpcClientBuilder#target} takes) for SERVICE's status ("" by default:
   * the server), within TIMEOUT_MS (default 2000, at most an hour), prints it, and exits 0 for SERVING, 1 for
   * NOT_SERVING or SERVICE_UNKNOWN, 2 for bad arguments, 3 when the server could not be asked (the status printed,
   * e.g. "UNAVAILABLE: cannot connect ..." or "UNIMPLEMENTED: ..." for a server without this service). Options
   * (named after grpc_health_probe's, but not its syntax: {@code -tls -addr=...} is not taken, and its exit codes
   * differ), each {@code --name=value} or {@code --name value}:
   * <ul>
   *   <li>{@code --tls}: connect over TLS, trusting the JVM's default trust store;
   *   <li>{@code --tls-ca-cert FILE}: TLS, trusting the CA certificates in that PEM file;
   *   <li>{@code --tls-client-cert FILE} and {@code --tls-client-key FILE} (together): TLS with this client
   *       certificate chain and PKCS#8 key, for a server that requires one;
   *   <li>{@code --tls-no-verify-hostname}: TLS without checking that the certificate names the host (the
   *       certificate must still be trusted);
   *   <li>{@code --tls-server-name NAME}: TLS, expecting NAME in the server's certificate and sending it as SNI in
   *       place of the host dialled ({@code TlsConfig.Builder.serverName}): a pod probed at 127.0.0.1 with a
   *       certificate for its service's name;
   *   <li>{@code --header "NAME: VALUE"} (repeatable): metadata sent with the check (an authorization token for a
   *       server whose interceptor asks for one); the name is lower-cased, as HTTP header names are
   *       case-insensitive and Petrel's metadata keys are lower-case.
   * </ul>
   * Needs a transport on the class path (rpc-transport-netty). The client it makes logs as any client does (an
   * INFO line naming the endpoint): point the JVM at a logging configuration that keeps {@code io.petrel} at WARN
   * for a quiet probe.
   */
  public static void main(String[] args) {
    System.exit(probe(args, System.out));
  }

  /** {@link #main}'s work, for a caller that does not want the JVM to exit: prints one line, returns the code. */
  public static int probe(String[] args, java.io.PrintStream out) {
    ProbeArgs a;
    try {
      a = ProbeArgs.parse(args);
    } catch (IllegalArgumentException e) {
      out.println(e.getMessage());
      out.println(USAGE);
      return 2;
    }
    RpcClient client;
    try {
      RpcClientBuilder b = RpcClient.builder();
      // "inprocess:NAME": a server in this JVM (for tests and embedded use).
      b = a.target.startsWith("inprocess:") ? b.inProcess(a.target.substring("inprocess:".length()))
          : b.target(a.target);
      io.petrel.rpc.TlsConfig tls = a.tls();
      if (tls != null) {
        b.tls(tls);
      }
      client = b.name("health-probe").build();
    } catch (RuntimeException e) {
      out.println("cannot make a client for " + a.target + ": " + e.getMessage());
      return 2;
    }
    try {
      String answer = client.unaryCall(CHECK, a.service,
          CallOptions.DEFAULT.withTimeout(a.timeout).withMetadata(a.headers));
      ServingStatus s = parse(answer);
      out.println(s);
      return s == ServingStatus.SERVING ? 0 : 1;
    } catch (StatusException e) {
      out.println(e.getMessage());
      return CANNOT_ASK;
    } catch (RuntimeException e) {
      out.println("could not ask: " + e);
      return CANNOT_ASK;
    } finally {
      client.shutdownNow();
    }
  }

  private static final String USAGE = "usage: HealthService [--tls] [--tls-ca-cert FILE] [--tls-client-cert FILE"
      + " --tls-client-key FILE] [--tls-no-verify-hostname] [--tls-server-name NAME] [--header 'NAME: VALUE']..."
      + " TARGET [SERVICE] [TIMEOUT_MS]   (exit 0: SERVING, 1: not, 2: usage, 3: could not ask)";

  /** The probe's command line, parsed; {@link #parse} throws IllegalArgumentException saying what is wrong. */
  private static final class ProbeArgs {
    String target = "";
    String service = "";
    Duration timeout = Duration.ofSeconds(2);
    boolean tls;
    boolean noVerifyHostname;
    @Nullable String serverName;
    java.nio.file.@Nullable Path caCert;
    java.nio.file.@Nullable Path clientCert;
    java.nio.file.@Nullable Path clientKey;
    io.petrel.rpc.Metadata headers = io.petrel.rpc.Metadata.EMPTY;

    static ProbeArgs parse(String[] args) {
      ProbeArgs a = new ProbeArgs();
      java.util.List<String> positional = new java.util.ArrayList<>();
      for (int i = 0; i < args.length; i++) {
        String arg = args[i];
        if (!arg.startsWith("--")) {
          positional.add(arg);
          continue;
        }
        int eq = arg.indexOf('=');
        String name = eq < 0 ? arg : arg.substring(0, eq);
        switch (name) {
          case "--tls" -> a.tls = flag(arg, eq);
          case "--tls-no-verify-hostname" -> a.noVerifyHostname = a.tls = flag(arg, eq);
          case "--tls-server-name" -> {
            a.serverName = eq >= 0 ? arg.substring(eq + 1) : value(args, ++i, name);
            io.petrel.rpc.TlsConfig.builder().serverName(a.serverName); // checks it: exit 2 with its message
            a.tls = true;
          }
          case "--tls-ca-cert" -> {
            a.caCert = file(name, eq >= 0 ? arg.substring(eq + 1) : value(args, ++i, name));
            a.tls = true;
          }
          case "--tls-client-cert" -> {
            a.clientCert = file(name, eq >= 0 ? arg.substring(eq + 1) : value(args, ++i, name));
            a.tls = true;
          }
          case "--tls-client-key" -> {
            a.clientKey = file(name, eq >= 0 ? arg.substring(eq + 1) : value(args, ++i, name));
            a.tls = true;
          }
          case "--header" -> a.headers = header(a.headers, eq >= 0 ? arg.substring(eq + 1) : value(args, ++i, name));
          default -> throw new IllegalArgumentException("unknown option " + name);
        }
      }
      if (positional.isEmpty() || positional.size() > 3) {
        throw new IllegalArgumentException(positional.isEmpty() ? "no TARGET given"
            : "too many arguments: " + positional);
      }
      if ((a.clientCert == null) != (a.clientKey == null)) {
        throw new IllegalArgumentException("--tls-client-cert and --tls-client-key go together: give both");
      }
      a.target = positional.get(0);
      if (positional.size() > 1) {
        a.service = positional.get(1);
      }
      if (positional.size() > 2) {
        String t = positional.get(2);
        long ms;
        try {
          ms = Long.parseLong(t);
        } catch (NumberFormatException e) {
          ms = -1;
        }
        if (ms <= 0 || ms > MAX_TIMEOUT_MILLIS) {
          throw new IllegalArgumentException("TIMEOUT_MS must be a number of milliseconds, 1.."
              + MAX_TIMEOUT_MILLIS + ": " + t);
        }
        a.timeout = Duration.ofMillis(ms);
      }
      return a;
    }

    private static boolean flag(String arg, int eq) {
      if (eq >= 0) {
        throw new IllegalArgumentException(arg.substring(0, eq) + " takes no value: " + arg);
      }
      return true;
    }

    private static String value(String[] args, int i, String name) {
      if (i >= args.length) {
        throw new IllegalArgumentException(name + " needs a value");
      }
      return args[i];
    }

    private static java.nio.file.Path file(String name, String path) {
      java.nio.file.Path p = java.nio.file.Path.of(path);
      if (!java.nio.file.Files.isReadable(p)) {
        throw new IllegalArgumentException(name + ": cannot read " + p.toAbsolutePath());
      }
      return p;
    }

    private static io.petrel.rpc.Metadata header(io.petrel.rpc.Metadata headers, String nameValue) {
      int colon = nameValue.indexOf(':');
      if (colon <= 0) {
        throw new IllegalArgumentException("--header takes 'NAME: VALUE': " + nameValue);
      }
      // HTTP header names are case-insensitive; Petrel's metadata keys are lower-case ("Authorization" works).
      String key = nameValue.substring(0, colon).trim().toLowerCase(java.util.Locale.ROOT);
      try {
        io.petrel.rpc.Metadata.checkKey(key);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("--header " + nameValue + ": " + e.getMessage(), e);
      }
      return headers.with(key, nameValue.substring(colon + 1).trim());
    }

    io.petrel.rpc.@Nullable TlsConfig tls() {
      if (!tls) {
        return null;
      }
      io.petrel.rpc.TlsConfig.Builder b = io.petrel.rpc.TlsConfig.builder();
      java.nio.file.Path ca = caCert;
      if (ca != null) {
        b.trustCertificates(ca);
      }
      java.nio.file.Path cert = clientCert;
      java.nio.file.Path key = clientKey;
      if (cert != null && key != null) {
        b.keyPair(cert, key);
      }
      if (noVerifyHostname) {
        b.insecureSkipHostnameVerification();
      }
      String name = serverName;
      if (name != null) {
        b.serverName(name);
      }
      return b.build();
    }
  }
}
