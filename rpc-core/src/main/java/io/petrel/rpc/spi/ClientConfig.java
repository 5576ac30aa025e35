package io.petrel.rpc.spi;

import io.petrel.rpc.ClientInterceptor;
import io.petrel.rpc.Defaults;
import io.petrel.rpc.HedgingPolicy;
import io.petrel.rpc.LoadBalancer;
import io.petrel.rpc.NameResolver;
import io.petrel.rpc.TransportOption;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;

/**
 * The validated settings of a client, handed by {@link io.petrel.rpc.RpcClientBuilder} to the transport:
 * immutable, read through named accessors, and built by name ({@link #newBuilder()}), so that an option added
 * later changes no caller. What it shares with {@link ServerConfig} is {@link TransportConfig}'s; options of one
 * transport only travel as {@link TransportOption}s ({@link #option(TransportOption)}).
 */
public final class ClientConfig extends TransportConfig {

  private final String target;
  private final @Nullable NameResolver resolver;
  private final LoadBalancer.@Nullable Factory loadBalancer;
  private final List<ClientInterceptor> interceptors;
  private final int connectionsPerEndpoint;
  private final long defaultTimeoutNanos;
  private final long connectTimeoutNanos;
  private final long keepAliveTimeNanos;
  private final long livenessTimeoutNanos;
  private final int maxPendingCalls;
  private final long reconnectInitialBackoffNanos;
  private final long reconnectMaxBackoffNanos;
  private final @Nullable Executor callbackExecutor;
  private final int maxRetries;
  private final int retryBudgetTokens;
  private final double retryBudgetRatio;
  private final HedgingPolicy hedging;
  private final java.util.function.@Nullable Predicate<? super io.petrel.rpc.Endpoint> endpointFilter;

  /** Default deadline of a call: 30 s ({@code RpcClient.builder().defaultDeadline}). */
  public static final Duration DEFAULT_DEADLINE = Defaults.DEADLINE;
  /** Default connect timeout: 5 s. */
  public static final Duration DEFAULT_CONNECT_TIMEOUT = Defaults.CONNECT_TIMEOUT;
  /** Default {@link #maxPendingCalls()}: 16384 calls pending (awaiting a response or waiting to be sent). */
  public static final int DEFAULT_MAX_PENDING_CALLS = Defaults.MAX_PENDING_CALLS;
  /** Default reconnect backoff: 100 ms doubling up to 10 s, with +-20% jitter. */
  public static final Duration DEFAULT_RECONNECT_INITIAL = Defaults.RECONNECT_INITIAL;
  public static final Duration DEFAULT_RECONNECT_MAX = Defaults.RECONNECT_MAX;
  /** Default keepalive time: 30 s. */
  public static final Duration DEFAULT_KEEP_ALIVE = Defaults.CLIENT_KEEP_ALIVE;
  /** Default {@link #maxRetries()}: an idempotent call may be tried twice more after its first attempt. */
  public static final int DEFAULT_MAX_RETRIES = Defaults.MAX_RETRIES;
  /**
   * Default {@link #retryBudgetTokens()}: 100, so that the burst of one server dying with tens of calls in flight
   * is retried (retries stop after about 50 in an outage; gRPC's example of 10 tokens allowed only 5).
   */
  public static final int DEFAULT_RETRY_BUDGET_TOKENS = Defaults.RETRY_BUDGET_TOKENS;
  /** Default {@link #retryBudgetRatio()}: each successful call gives back a tenth of a token. */
  public static final double DEFAULT_RETRY_BUDGET_RATIO = Defaults.RETRY_BUDGET_RATIO;

  private ClientConfig(Builder b) {
    super(b);
    this.target = b.target;
    this.resolver = b.resolver;
    this.loadBalancer = b.loadBalancer;
    this.interceptors = b.interceptors;
    this.connectionsPerEndpoint = b.connectionsPerEndpoint;
    this.defaultTimeoutNanos = b.defaultTimeoutNanos;
    this.connectTimeoutNanos = b.connectTimeoutNanos;
    this.keepAliveTimeNanos = b.keepAliveTimeNanos;
    this.livenessTimeoutNanos = b.livenessTimeoutNanos;
    this.maxPendingCalls = b.maxPendingCalls;
    this.reconnectInitialBackoffNanos = b.reconnectInitialBackoffNanos;
    this.reconnectMaxBackoffNanos = b.reconnectMaxBackoffNanos;
    this.callbackExecutor = b.callbackExecutor;
    this.maxRetries = b.maxRetries;
    this.retryBudgetTokens = b.retryBudgetTokens;
    this.retryBudgetRatio = b.retryBudgetRatio;
    this.hedging = b.hedging;
    this.endpointFilter = b.endpointFilter;
  }

  /** A builder with every option at its default; the user-facing builder fills it. */
  public static Builder newBuilder() {
    return new Builder();
  }

  /** What the client calls, as given to the builder ("host:port", "static://h1:7000,h2:7000", "inprocess:name"). */
  public String target() {
    return target;
  }

  /** Yields the endpoints of {@link #target()}; null for an in-process client (the builder makes that one itself). */
  public @Nullable NameResolver resolver() {
    return resolver;
  }

  /**
   * Picks an endpoint per call when there are several; null for the core's default (least pending), which
   * {@code RpcClient.builder()} always sets.
   */
  public LoadBalancer.@Nullable Factory loadBalancer() {
    return loadBalancer;
  }

  /** The client's interceptors, in order (first runs first). */
  public List<ClientInterceptor> interceptors() {
    return interceptors;
  }

  /** TCP connections to each endpoint. */
  public int connectionsPerEndpoint() {
    return connectionsPerEndpoint;
  }

  /** Deadline of a call whose options and method set none. */
  public long defaultTimeoutNanos() {
    return defaultTimeoutNanos;
  }

  /** How long a connection attempt may take. */
  public long connectTimeoutNanos() {
    return connectTimeoutNanos;
  }

  /**
   * Silence after which a PING is sent, and the connection closed if the silence lasts as long again; 0 disables
   * keepalive.
   */
  public long keepAliveTimeNanos() {
    return keepAliveTimeNanos;
  }

  /**
   * How long a connection may receive nothing after a call's deadline passed on it (and a PING was sent) before it
   * is taken for dead; 0 turns the liveness check off.
   */
  public long livenessTimeoutNanos() {
    return livenessTimeoutNanos;
  }

  /** Calls started and not ended at once; beyond it a call fails with RESOURCE_EXHAUSTED. */
  public int maxPendingCalls() {
    return maxPendingCalls;
  }

  /** First reconnect delay after a failed attempt. */
  public long reconnectInitialBackoffNanos() {
    return reconnectInitialBackoffNanos;
  }

  /** Cap of the doubling reconnect delay. */
  public long reconnectMaxBackoffNanos() {
    return reconnectMaxBackoffNanos;
  }

  /** Where futures complete; null means on the thread that ends the call (an event loop). */
  public @Nullable Executor callbackExecutor() {
    return callbackExecutor;
  }

  /**
   * How many more attempts an idempotent call may make after its first one fails with UNAVAILABLE (within its
   * deadline and the retry budget); 0 turns retries off. Calls of other methods are never retried once they may
   * have run.
   */
  public int maxRetries() {
    return maxRetries;
  }

  /**
   * The retry budget's size in tokens: each attempt that fails with UNAVAILABLE takes one, each call that
   * succeeds gives back {@link #retryBudgetRatio()}; retries stop while at most half of them are left.
   */
  public int retryBudgetTokens() {
    return retryBudgetTokens;
  }

  /** What each successful call gives back to the retry budget, in tokens (0 < ratio <= 1). */
  public double retryBudgetRatio() {
    return retryBudgetRatio;
  }

  /**
   * How calls of idempotent methods are hedged when their options set no policy of their own
   * ({@link HedgingPolicy#OFF} by default).
   */
  public HedgingPolicy hedging() {
    return hedging;
  }

  /** Which of the resolver's endpoints the client uses ({@code RpcClientBuilder.endpointFilter}); null: all. */
  public java.util.function.@Nullable Predicate<? super io.petrel.rpc.Endpoint> endpointFilter() {
    return endpointFilter;
  }

  @Override
  public String toString() {
    return "ClientConfig{"
        + "target=" + target + ", "
        + "resolver=" + resolver + ", "
        + "loadBalancer=" + loadBalancer + ", "
        + "interceptors=" + interceptors + ", "
        + "connectionsPerEndpoint=" + connectionsPerEndpoint + ", "
        + "defaultTimeoutNanos=" + defaultTimeoutNanos + ", "
        + "connectTimeoutNanos=" + connectTimeoutNanos + ", "
        + "keepAliveTimeNanos=" + keepAliveTimeNanos + ", "
        + "livenessTimeoutNanos=" + livenessTimeoutNanos + ", "
        + "maxPendingCalls=" + maxPendingCalls + ", "
        + "reconnectInitialBackoffNanos=" + reconnectInitialBackoffNanos + ", "
        + "reconnectMaxBackoffNanos=" + reconnectMaxBackoffNanos + ", "
        + "callbackExecutor=" + callbackExecutor + ", "
        + "maxRetries=" + maxRetries + ", "
        + "retryBudget=" + retryBudgetTokens + "/" + retryBudgetRatio + ", "
        + "hedging=" + hedging + ", "
        + (endpointFilter == null ? "" : "endpointFilter=" + endpointFilter + ", ")
        + commonToString() + "}";
  }

  /** Sets the options of a {@link ClientConfig} by name; every one has a default. */
  public static final class Builder extends TransportConfig.Builder<Builder> {
    private String target = "unnamed";
    private @Nullable NameResolver resolver;
    private LoadBalancer.@Nullable Factory loadBalancer;
    private List<ClientInterceptor> interceptors = List.of();
    private int connectionsPerEndpoint = 1;
    private long defaultTimeoutNanos = DEFAULT_DEADLINE.toNanos();
    private long connectTimeoutNanos = DEFAULT_CONNECT_TIMEOUT.toNanos();
    private long keepAliveTimeNanos = DEFAULT_KEEP_ALIVE.toNanos();
    private long livenessTimeoutNanos = Defaults.LIVENESS_TIMEOUT.toNanos();
    private int maxPendingCalls = DEFAULT_MAX_PENDING_CALLS;
    private long reconnectInitialBackoffNanos = DEFAULT_RECONNECT_INITIAL.toNanos();
    private long reconnectMaxBackoffNanos = DEFAULT_RECONNECT_MAX.toNanos();
    private @Nullable Executor callbackExecutor;
    private int maxRetries = DEFAULT_MAX_RETRIES;
    private int retryBudgetTokens = DEFAULT_RETRY_BUDGET_TOKENS;
    private double retryBudgetRatio = DEFAULT_RETRY_BUDGET_RATIO;
    private HedgingPolicy hedging = Defaults.HEDGING;
    private java.util.function.@Nullable Predicate<? super io.petrel.rpc.Endpoint> endpointFilter;

    private Builder() {
      super("petrel-client");
    }

    public Builder target(String target) {
      this.target = target;
      return this;
    }

    public Builder resolver(@Nullable NameResolver resolver) {
      this.resolver = resolver;
      return this;
    }

    public Builder loadBalancer(LoadBalancer.@Nullable Factory loadBalancer) {
      this.loadBalancer = loadBalancer;
      return this;
    }

    public Builder interceptors(List<ClientInterceptor> interceptors) {
      this.interceptors = interceptors;
      return this;
    }

    public Builder connectionsPerEndpoint(int connectionsPerEndpoint) {
      this.connectionsPerEndpoint = connectionsPerEndpoint;
      return this;
    }

    public Builder defaultTimeoutNanos(long defaultTimeoutNanos) {
      this.defaultTimeoutNanos = defaultTimeoutNanos;
      return this;
    }

    public Builder connectTimeoutNanos(long connectTimeoutNanos) {
      this.connectTimeoutNanos = connectTimeoutNanos;
      return this;
    }

    public Builder keepAliveTimeNanos(long keepAliveTimeNanos) {
      this.keepAliveTimeNanos = keepAliveTimeNanos;
      return this;
    }

    public Builder livenessTimeoutNanos(long livenessTimeoutNanos) {
      this.livenessTimeoutNanos = livenessTimeoutNanos;
      return this;
    }

    public Builder maxPendingCalls(int maxPendingCalls) {
      this.maxPendingCalls = maxPendingCalls;
      return this;
    }

    public Builder reconnectInitialBackoffNanos(long reconnectInitialBackoffNanos) {
      this.reconnectInitialBackoffNanos = reconnectInitialBackoffNanos;
      return this;
    }

    public Builder reconnectMaxBackoffNanos(long reconnectMaxBackoffNanos) {
      this.reconnectMaxBackoffNanos = reconnectMaxBackoffNanos;
      return this;
    }

    public Builder callbackExecutor(@Nullable Executor callbackExecutor) {
      this.callbackExecutor = callbackExecutor;
      return this;
    }

    public Builder maxRetries(int maxRetries) {
      this.maxRetries = maxRetries;
      return this;
    }

    public Builder retryBudget(int tokens, double ratio) {
      this.retryBudgetTokens = tokens;
      this.retryBudgetRatio = ratio;
      return this;
    }

    public Builder hedging(HedgingPolicy hedging) {
      this.hedging = hedging;
      return this;
    }

    public Builder endpointFilter(java.util.function.@Nullable Predicate<? super io.petrel.rpc.Endpoint> filter) {
      this.endpointFilter = filter;
      return this;
    }

    public ClientConfig build() {
      return new ClientConfig(this);
    }
  }
}
