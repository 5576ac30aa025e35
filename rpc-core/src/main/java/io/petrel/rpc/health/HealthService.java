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
 * the probe finds the port closed instead), SERVICE_UNKNOWN for a service it does not serve. The application sets
 * a service's status itself with {@link #setStatus} (NOT_SERVING while a database it needs is down).
 *
 * <p>{@link #check(RpcClient, String, Duration)} asks from Java; {@link #main} is a probe for a container's exec
 * check: {@code java -cp app.jar io.petrel.rpc.health.HealthService 127.0.0.1:7000} exits 0 when SERVING.
 */
public final class HealthService implements ServerLifecycleListener {
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
  private volatile Map<String, Boolean> served = Map.of();
  private volatile boolean serving;
  private volatile boolean draining;

  private HealthService() {}

  public static HealthService create() {
    return new HealthService();
  }

  /** The service to add to the server. */
  public ServiceDefinition definition() {
    return ServiceDefinition.builder(SERVICE).unary(CHECK, service -> status(service).name()).build();
  }

  /**
   * Sets {@code service}'s status ("" for the server as a whole), e.g. NOT_SERVING while something it needs is
   * down; SERVING gives it back to the lifecycle (a server shutting down answers NOT_SERVING whatever was set).
   */
  public void setStatus(String service, ServingStatus status) {
    Objects.requireNonNull(service, "service");
    if (status == ServingStatus.SERVING) {
      set.remove(service);
    } else {
      set.put(service, status);
    }
  }

  /** What {@code check} answers for {@code service} now. */
  public ServingStatus status(String service) {
    boolean known = service.isEmpty() || served.containsKey(service);
    if (!known && serving) {
      return ServingStatus.SERVICE_UNKNOWN;
    }
    if (!serving || draining) {
      return ServingStatus.NOT_SERVING;
    }
    ServingStatus s = set.get(service);
    return s != null ? s : ServingStatus.SERVING;
  }

  @Override
  public void onServing(RpcServer server) {
    Map<String, Boolean> names = new ConcurrentHashMap<>();
    server.services().forEach(d -> names.put(d.name(), Boolean.TRUE));
    served = names;
    serving = true;
  }

  @Override
  public void onDraining(RpcServer server) {
    draining = true;
  }

  /**
   * Asks the server {@code client} calls for {@code service}'s status ("" for the server), within {@code timeout}.
   *
   * @throws StatusException when it cannot be asked (UNAVAILABLE: nothing listens there, or it is shutting down;
   *     UNIMPLEMENTED: that server has no HealthService; DEADLINE_EXCEEDED)
   */
  public static ServingStatus check(RpcClient client, String service, Duration timeout) throws StatusException {
    String answer = client.unaryCall(CHECK, service, CallOptions.DEFAULT.withTimeout(timeout));
    try {
      return ServingStatus.valueOf(answer);
    } catch (IllegalArgumentException e) {
      return ServingStatus.NOT_SERVING; // a later version's status this one does not know: not a yes
    }
  }

  /**
   * A probe: {@code HealthService TARGET [SERVICE] [TIMEOUT_MS]} asks the server at TARGET ({@code host:port}, or
   * any target {@link RpcClientBuilder#target} takes) for SERVICE's status ("" by default: the server), within
   * TIMEOUT_MS (default 2000), prints it, and exits 0 for SERVING, 1 for anything else (the reason printed), 2 for
   * bad arguments. Needs a transport on the class path (rpc-transport-netty).
   */
  public static void main(String[] args) {
    System.exit(probe(args, System.out));
  }

  /** {@link #main}'s work, for a caller that does not want the JVM to exit: prints one line, returns the code. */
  public static int probe(String[] args, java.io.PrintStream out) {
    if (args.length < 1 || args.length > 3) {
      out.println("usage: HealthService TARGET [SERVICE] [TIMEOUT_MS]   (exit 0: SERVING, 1: not, 2: usage)");
      return 2;
    }
    String service = args.length > 1 ? args[1] : "";
    Duration timeout;
    try {
      timeout = Duration.ofMillis(args.length > 2 ? Long.parseLong(args[2]) : 2000);
      if (timeout.isNegative() || timeout.isZero()) {
        throw new NumberFormatException("not > 0");
      }
    } catch (NumberFormatException e) {
      out.println("TIMEOUT_MS must be a number of milliseconds > 0: " + args[2]);
      return 2;
    }
    RpcClient client;
    try {
      RpcClientBuilder b = RpcClient.builder();
      client = (args[0].startsWith("inprocess:") ? b.inProcess(args[0].substring("inprocess:".length()))
          : b.target(args[0])).name("health-probe").build();
    } catch (RuntimeException e) {
      out.println("cannot make a client for " + args[0] + ": " + e.getMessage());
      return 2;
    }
    try {
      ServingStatus s = check(client, service, timeout);
      out.println(s);
      return s == ServingStatus.SERVING ? 0 : 1;
    } catch (StatusException e) {
      out.println("NOT_SERVING (" + e.getMessage() + ")");
      return 1;
    } finally {
      client.shutdownNow();
    }
  }
}
