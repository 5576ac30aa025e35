package io.petrel.rpc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;

/**
 * Configures an {@link RpcClient}. The options it shares with {@link RpcServerBuilder} (name, transport, frame
 * and metadata limits, metrics, transport options) are {@link AbstractRpcBuilder}'s. Defaults are documented in
 * docs/configuration.md ({@link Defaults}).
 *
 * <p>The options are checked here; what they make is the core's: {@link RpcClient#builder()} returns rpc-core's
 * implementation ({@link RpcProvider}), which parses targets, knows the load-balancing policies and builds the
 * client. Its protected members are for that implementation only.
 */
public abstract class RpcClientBuilder extends AbstractRpcBuilder<RpcClientBuilder> {
  /** Default {@link #defaultDeadline}: 30 s. A call never waits longer than this unless told to. */
  public static final Duration DEFAULT_DEADLINE = Defaults.DEADLINE;
  /** Default {@link #connectTimeout}: 5 s. */
  public static final Duration DEFAULT_CONNECT_TIMEOUT = Defaults.CONNECT_TIMEOUT;
  /** Default {@link #maxPendingCalls}: 16384 calls pending (awaiting a response or waiting to be sent), per client. */
  public static final int DEFAULT_MAX_PENDING_CALLS = Defaults.MAX_PENDING_CALLS;
  /** Default reconnect backoff: 100 ms doubling up to 10 s, with +-20% jitter. */
  public static final Duration DEFAULT_RECONNECT_INITIAL = Defaults.RECONNECT_INITIAL;
  public static final Duration DEFAULT_RECONNECT_MAX = Defaults.RECONNECT_MAX;
  /** Default {@link #keepAliveTime}: 30 s. */
  public static final Duration DEFAULT_KEEP_ALIVE = Defaults.CLIENT_KEEP_ALIVE;
  /** Default {@link #livenessTimeout}: 2 s. */
  public static final Duration DEFAULT_LIVENESS_TIMEOUT = Defaults.LIVENESS_TIMEOUT;

  protected @Nullable String target;
  protected @Nullable NameResolver resolver;
  protected @Nullable String inProcessName;
  /** The policy set, or null for the core's default (least pending). */
  protected LoadBalancer.@Nullable Factory loadBalancer;
  protected int connectionsPerEndpoint = 1;
  protected Duration defaultDeadline = DEFAULT_DEADLINE;
  protected Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
  protected Duration keepAliveTime = DEFAULT_KEEP_ALIVE;
  protected Duration livenessTimeout = DEFAULT_LIVENESS_TIMEOUT;
  protected int maxPendingCalls = DEFAULT_MAX_PENDING_CALLS;
  protected int maxRetries = Defaults.MAX_RETRIES;
  protected int retryBudgetTokens = Defaults.RETRY_BUDGET_TOKENS;
  protected double retryBudgetRatio = Defaults.RETRY_BUDGET_RATIO;
  protected HedgingPolicy hedging = Defaults.HEDGING;
  protected java.util.function.@Nullable Predicate<? super Endpoint> endpointFilter;
  protected Duration reconnectInitial = DEFAULT_RECONNECT_INITIAL;
  protected Duration reconnectMax = DEFAULT_RECONNECT_MAX;
  protected @Nullable Executor callbackExecutor;
  protected final List<ClientInterceptor> interceptors = new ArrayList<>();

  /** For rpc-core's implementation only. */
  protected RpcClientBuilder() {
    super("petrel-client");
  }

  /**
   * The resolver of a target ({@link #target}): {@code host:port}, {@code static://...}, or a
   * {@link NameResolverProvider}'s scheme. Throws {@link IllegalArgumentException} naming what is wrong.
   */
  protected abstract NameResolver resolverFor(String target);

  /** The resolver of a fixed list of endpoints ({@link #endpoints}). */
  protected abstract NameResolver resolverOf(List<Endpoint> endpoints);

  /** A built-in load-balancing policy by name; {@link IllegalArgumentException} naming the known ones. */
  protected abstract LoadBalancer.Factory loadBalancerNamed(String policy);

  /** One server to call: the same as {@code target("host:port")}. One of address, target or endpoints is required. */
  public RpcClientBuilder address(String host, int port) {
    checkPort(port);
    if (port == 0) {
      throw new IllegalArgumentException("port must be 1..65535: 0");
    }
    Endpoint e = Endpoint.of(Objects.requireNonNull(host, "host"), port);
    return endpoints(List.of(e));
  }

  /**
   * What to call: {@code "host:port"}; a fixed list {@code "static://h1:7000,h2:7000"} (a weight per endpoint:
   * {@code "static://h1:7000;weight=3,h2:7000"}); or {@code "scheme://..."} for a {@link NameResolverProvider}
   * of that scheme on the class path. With several endpoints the {@link #loadBalancer} spreads the calls.
   *
   * @throws IllegalArgumentException naming what is wrong with the target
   */
  public RpcClientBuilder target(String target) {
    Objects.requireNonNull(target, "target");
    this.resolver = resolverFor(target);
    this.target = target;
    this.inProcessName = null;
    return this;
  }

  /** A fixed list of servers to call (with their weights); the same as a {@code static://} target. */
  public RpcClientBuilder endpoints(List<Endpoint> endpoints) {
    this.resolver = resolverOf(endpoints);
    StringBuilder sb = new StringBuilder();
    for (Endpoint e : endpoints) {
      sb.append(sb.length() == 0 ? "" : ",").append(e);
    }
    this.target = endpoints.size() == 1 ? sb.toString() : "static://" + sb;
    this.inProcessName = null;
    return this;
  }

  /**
   * A resolver of the caller's own for the servers to call; {@code target} names it in messages and metrics.
   */
  public RpcClientBuilder nameResolver(String target, NameResolver resolver) {
    this.target = Objects.requireNonNull(target, "target");
    this.resolver = Objects.requireNonNull(resolver, "resolver");
    this.inProcessName = null;
    return this;
  }

  /**
   * Calls the in-process server of this name in the same JVM ({@code RpcServer.builder().inProcess(name)}),
   * without a socket: the in-process transport, built into rpc-core. Replaces {@link #address}, {@link #target},
   * {@link #endpoints} and {@link #nameResolver} (the last one set wins). The server is looked up at each call,
   * so it may start after the client, or restart; while none of that name runs, calls fail at once with
   * UNAVAILABLE "no in-process server named 'x' is running; start one with
   * RpcServer.builder().inProcess("x")" ({@link RpcClient#start()} throws it). Deadlines, {@link #maxPendingCalls},
   * {@link #maxFrameSize}, {@link #maxMetadataSize}, {@link #callbackExecutor}, interceptors and metrics behave
   * as over a socket; options about connections (load balancer, connections per endpoint, I/O, connect timeout,
   * keepalive, backoff, transport options) do not apply; {@link #tls} and {@link #transport} cannot be combined with
   * it. The client counts as secure ({@link RpcClient#isSecure()}): nothing leaves the process.
   */
  public RpcClientBuilder inProcess(String name) {
    this.inProcessName = RpcServerBuilder.checkInProcessName(name);
    this.target = "inprocess:" + name;
    this.resolver = null;
    return this;
  }

  /**
   * How calls are spread over several endpoints: {@code "least_pending"} (the default: of two endpoints drawn at
   * random by weight, the one with fewer calls pending per unit of weight) or {@code "round_robin"} (in turn,
   * each as often as its weight). With one endpoint it does not matter.
   */
  public RpcClientBuilder loadBalancer(String policy) {
    this.loadBalancer = loadBalancerNamed(Objects.requireNonNull(policy, "loadBalancer"));
    return this;
  }

  /** A load-balancing policy of the caller's own. */
  public RpcClientBuilder loadBalancer(LoadBalancer.Factory factory) {
    this.loadBalancer = Objects.requireNonNull(factory, "loadBalancer");
    return this;
  }

  /**
   * Which of the endpoints the resolver lists the client uses (default: all): by version, zone or any attribute,
   * as Dubbo's consumer-side version or group, e.g. {@code endpointFilter(e -> "2.1".equals(e.version()))}. The
   * filter runs on each list the resolver gives, before the load balancer sees it; endpoints it leaves out get no
   * calls. When it leaves none, calls fail with UNAVAILABLE saying how many endpoints the resolver lists and that
   * the filter left out all of them (not that the name has none). A filter that throws for an endpoint leaves that
   * endpoint out (a WARN says why, at most once per 10 s). Its {@code toString()} appears in those messages and in
   * the client's INFO line of endpoints: a lambda's is opaque, a named class or record reads better. Make it a
   * fast, pure function of the endpoint: it runs on the resolver's thread for each list, and is not asked again
   * until the resolver gives a new list (a filter that reads changing state takes effect only then; a static
   * target never gives another). Endpoints it leaves out later finish their calls in flight, as removed ones do.
   * An in-process client refuses it ({@code build()} throws IllegalStateException).
   */
  public RpcClientBuilder endpointFilter(java.util.function.Predicate<? super Endpoint> filter) {
    this.endpointFilter = Objects.requireNonNull(filter, "endpointFilter");
    return this;
  }

  /**
   * TCP connections to each endpoint; calls to an endpoint are spread over them round robin (default 1). Each
   * keeps within the server's per-connection call limit on its own.
   */
  public RpcClientBuilder connectionsPerEndpoint(int n) {
    this.connectionsPerEndpoint = checkPositive("connectionsPerEndpoint", n);
    return this;
  }

  /** Deadline of a call whose options and method set none (default 30 s). */
  public RpcClientBuilder defaultDeadline(Duration d) {
    Objects.requireNonNull(d, "defaultDeadline");
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException("defaultDeadline must be > 0: " + d);
    }
    this.defaultDeadline = d;
    return this;
  }

  public RpcClientBuilder connectTimeout(Duration d) {
    Objects.requireNonNull(d, "connectTimeout");
    if (d.isNegative() || d.isZero() || d.toMillis() > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("connectTimeout must be > 0 and < 24 days: " + d);
    }
    this.connectTimeout = d;
    return this;
  }

  /**
   * After this long without receiving anything on a connection the client sends a PING; if the connection
   * stays silent as long again, the peer is taken for dead: the connection is closed (its calls fail with
   * UNAVAILABLE) and re-established. Detects servers that vanished without closing (power loss, a dropped
   * network path). Default 30 s; {@code Duration.ZERO} disables it.
   */
  public RpcClientBuilder keepAliveTime(Duration d) {
    Objects.requireNonNull(d, "keepAliveTime");
    if (d.isNegative()) {
      throw new IllegalArgumentException("keepAliveTime must be >= 0: " + d);
    }
    this.keepAliveTime = d;
    return this;
  }

  /**
   * The liveness check: when a call's deadline passes while its request is on a connection, the client sends a
   * PING; if nothing at all is received on that connection within this time, the connection is taken for dead
   * (a network that stopped carrying packets, a server that stopped): it is reset, its calls in flight fail with
   * UNAVAILABLE (an idempotent one is sent again elsewhere), and the endpoint reconnects. A live server answers
   * the PING from its event loop within milliseconds, even while its handlers are slow; raise this above the
   * longest pause a server of yours may make as a whole (a stop-the-world GC pause of a large heap, a VM that is
   * paused or migrated), or its connections are reset during such a pause. Default 2 s; {@code Duration.ZERO}
   * turns the check off (a connection then stays until keepalive finds it dead, or TCP gives up); otherwise 100 ms
   * to 24 days. Not used by an in-process client.
   */
  public RpcClientBuilder livenessTimeout(Duration d) {
    Objects.requireNonNull(d, "livenessTimeout");
    if (!d.isZero() && (d.compareTo(Duration.ofMillis(100)) < 0 || d.compareTo(Duration.ofDays(24)) > 0)) {
      throw new IllegalArgumentException("livenessTimeout must be ZERO (off) or 100 ms to 24 days: " + d + " (a"
          + " connection whose PING does not come back within it is reset: shorter than a round trip, it would"
          + " reset live connections)");
    }
    this.livenessTimeout = d;
    return this;
  }

  /**
   * Calls pending at once: awaiting a response, or waiting in the client to be sent (a connection has as many calls
   * in flight as its server announced it takes, or the server is not reading). A further call fails at once with
   * RESOURCE_EXHAUSTED (default 16384).
   */
  public RpcClientBuilder maxPendingCalls(int n) {
    this.maxPendingCalls = checkPositive("maxPendingCalls", n);
    return this;
  }

  /**
   * How many more attempts a call of an idempotent method ({@code @RpcMethod(idempotent = true)},
   * {@link MethodDescriptor#isIdempotent()}) may make after an attempt that failed with UNAVAILABLE, each on an
   * endpoint the load balancer picks again, within the call's deadline and the {@link #retryBudget retry budget}
   * (default 2; 0 turns retries off). A call of any other method is never sent again once it may have run; a
   * request the server never saw (refused by GOAWAY, or not written) is sent again whatever its method, up to 3
   * times, without the caller seeing it. See docs/cluster.md, "Retry rules".
   */
  public RpcClientBuilder maxRetries(int n) {
    if (n < 0) {
      throw new IllegalArgumentException("maxRetries must be >= 0: " + n);
    }
    this.maxRetries = n;
    return this;
  }

  /**
   * The retry budget, gRPC's retry throttling: a bucket of {@code tokens} tokens, full at start; each attempt
   * that fails with UNAVAILABLE takes one, each call that succeeds gives back {@code ratio} of one; idempotent
   * calls are retried only while more than half the tokens are left. So when every server fails, retries stop
   * after about {@code tokens / 2} of them, and in steady state they stay below {@code ratio} per successful
   * call (default 100 tokens, ratio 0.1: a client whose server dies with up to about 50 calls in flight retries
   * them all; in an outage retries stop after about 50, and after that at most one per ten successful calls).
   */
  public RpcClientBuilder retryBudget(int tokens, double ratio) {
    if (tokens < 1) {
      throw new IllegalArgumentException("retryBudget tokens must be >= 1: " + tokens);
    }
    if (!(ratio > 0 && ratio <= 1)) {
      throw new IllegalArgumentException("retryBudget ratio must be > 0 and <= 1: " + ratio);
    }
    this.retryBudgetTokens = tokens;
    this.retryBudgetRatio = ratio;
    return this;
  }

  /**
   * Hedging of calls of idempotent methods ({@code @RpcMethod(idempotent = true)}), gRPC's hedging policy: a call
   * sends its first attempt at once and, while none has answered, another every {@code delay}, each to an endpoint
   * other than those already working on the call where the load balancer has one, up to {@code maxAttempts} in all
   * (1 to 5; 1 turns it off, the default). The first attempt to end the call wins: its response, or its status
   * unless that is UNAVAILABLE (then the others go on, and one more is sent at once if allowed); the others are
   * cancelled, and the servers running them are told. Each hedge sent on the timer takes a token of the
   * {@link #retryBudget retry budget} and is sent only while more than half of it is left; none is sent after
   * the call's deadline. Calls of other methods are never hedged; a call can opt out or set its own policy with
   * {@link CallOptions#withHedging}. An in-process client does not hedge. See docs/cluster.md, "Hedging".
   *
   * @param delay how long an attempt runs without an answer before the next is sent (>= 0; 0 sends all at once)
   */
  public RpcClientBuilder hedging(int maxAttempts, Duration delay) {
    this.hedging = HedgingPolicy.of(maxAttempts, delay);
    return this;
  }

  /** Reconnect backoff: first delay and cap; each failed attempt doubles the delay, with +-20% jitter. */
  public RpcClientBuilder reconnectBackoff(Duration initial, Duration max) {
    Objects.requireNonNull(initial, "initial");
    Objects.requireNonNull(max, "max");
    if (initial.isNegative() || initial.isZero() || max.compareTo(initial) < 0) {
      throw new IllegalArgumentException("reconnectBackoff needs 0 < initial <= max: " + initial + ", " + max);
    }
    this.reconnectInitial = initial;
    this.reconnectMax = max;
    return this;
  }

  /**
   * Where response futures complete. By default they complete on the connection's event loop, which is the
   * fastest; then callbacks attached with {@code thenApply} etc. must not block (use the {@code ...Async}
   * variants for blocking work). The client does not take ownership of the executor.
   */
  public RpcClientBuilder callbackExecutor(Executor executor) {
    this.callbackExecutor = Objects.requireNonNull(executor, "callbackExecutor");
    return this;
  }

  /** Adds interceptors that see every call of this client, in the order added (first added runs first). */
  public RpcClientBuilder intercept(ClientInterceptor... interceptors) {
    for (ClientInterceptor i : interceptors) {
      this.interceptors.add(Objects.requireNonNull(i, "interceptor"));
    }
    return this;
  }

  /**
   * Connects over TLS (default: plaintext). The server's certificate must be trusted (by default: by the
   * JDK's CAs) and, unless {@code insecureSkipHostnameVerification()}, name the host given to
   * {@link #address}, which is also sent as SNI. For mutual TLS give the client a certificate and key. A failed
   * handshake fails calls with UNAVAILABLE saying why (untrusted, expired, host name mismatch, no client
   * certificate). The files are read by {@link #build()}, which throws {@link IllegalArgumentException} if they
   * cannot be loaded. {@link RpcClient#isSecure()} is then true. See docs/security.md.
   */
  public RpcClientBuilder tls(TlsConfig tls) {
    Objects.requireNonNull(tls, "tls");
    if (tls.clientAuth() != TlsConfig.ClientAuth.NONE) {
      throw new IllegalArgumentException("clientAuth(" + tls.clientAuth() + ") is a server option; a client"
          + " sends its certificate when its TlsConfig has one (keyPair or keyStore)");
    }
    this.tls = tls;
    return this;
  }

  /**
   * The client, not yet connected (it connects at its first call, or at {@link RpcClient#start()}).
   *
   * @throws IllegalStateException if no server to call is set, or options that exclude each other are
   * @throws IllegalArgumentException if the TLS material cannot be loaded
   */
  public abstract RpcClient build();
}
