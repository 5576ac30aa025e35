package io.petrel.rpc.spi;

import io.petrel.rpc.Defaults;
import io.petrel.rpc.ExceptionDetails;
import io.petrel.rpc.ExceptionMapper;
import io.petrel.rpc.ServerInterceptor;
import io.petrel.rpc.ServerLifecycleListener;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.TransportOption;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;

/**
 * The validated settings of a server, handed by {@link io.petrel.rpc.RpcServerBuilder} to the transport:
 * immutable, read through named accessors, and built by name ({@link #newBuilder()}), so that an option added
 * later changes no caller. What it shares with {@link ClientConfig} is {@link TransportConfig}'s; options of one
 * transport only travel as {@link TransportOption}s ({@link #option(TransportOption)}).
 */
public final class ServerConfig extends TransportConfig {
  /** Default businessThreads: max(16, 4 x available processors). */
  public static final int DEFAULT_BUSINESS_THREADS = Defaults.BUSINESS_THREADS;
  /** Default businessQueueSize: 2048 waiting calls. */
  public static final int DEFAULT_BUSINESS_QUEUE_SIZE = Defaults.BUSINESS_QUEUE_SIZE;
  /** Default maxConcurrentCallsPerConnection: 1000. */
  public static final int DEFAULT_MAX_CONCURRENT_CALLS_PER_CONNECTION = Defaults.MAX_CONCURRENT_CALLS_PER_CONNECTION;
  /** Default maxConnections: 10000. */
  public static final int DEFAULT_MAX_CONNECTIONS = Defaults.MAX_CONNECTIONS;
  /** Default shutdownGracePeriod: 10 s. */
  public static final Duration DEFAULT_SHUTDOWN_GRACE = Defaults.SHUTDOWN_GRACE;

  /** The builder's defaults for {@link #limits()}, as docs/configuration.md gives them. */
  static final ServerLimits DEFAULT_LIMITS = ServerLimits.newBuilder().build();

  private final @Nullable InetSocketAddress bindAddress;
  private final List<ServiceDefinition> services;
  private final List<ServerInterceptor> interceptors;
  private final int businessThreads;
  private final int businessQueueSize;
  private final @Nullable Executor executor;
  private final boolean direct;
  private final int maxConcurrentCallsPerConnection;
  private final int maxConnections;
  private final long shutdownGracePeriodNanos;
  private final ServerLimits limits;
  private final List<ServerLifecycleListener> lifecycleListeners;
  private final long drainDelayNanos;
  private final @Nullable ExceptionMapper exceptionMapper;
  private final ExceptionDetails exceptionDetails;

  private ServerConfig(Builder b) {
    super(b);
    this.bindAddress = b.bindAddress;
    this.services = b.services;
    this.interceptors = b.interceptors;
    this.businessThreads = b.businessThreads;
    this.businessQueueSize = b.businessQueueSize;
    this.executor = b.executor;
    this.direct = b.direct;
    this.maxConcurrentCallsPerConnection = b.maxConcurrentCallsPerConnection;
    this.maxConnections = b.maxConnections;
    this.shutdownGracePeriodNanos = b.shutdownGracePeriodNanos;
    this.limits = b.limits;
    this.lifecycleListeners = b.lifecycleListeners;
    this.drainDelayNanos = b.drainDelayNanos;
    this.exceptionMapper = b.exceptionMapper;
    this.exceptionDetails = b.exceptionDetails;
  }

  /** A builder with every option at its default; the user-facing builder fills it. */
  public static Builder newBuilder() {
    return new Builder();
  }

  /** Where a network transport listens; null for an in-process server (the builder makes that transport itself). */
  public @Nullable InetSocketAddress bindAddress() {
    return bindAddress;
  }

  /** The services served. */
  public List<ServiceDefinition> services() {
    return services;
  }

  /** Maps handlers' exceptions to statuses; null: every one is UNKNOWN. */
  public @Nullable ExceptionMapper exceptionMapper() {
    return exceptionMapper;
  }

  /** What a caller learns of an exception its handler threw (default {@link ExceptionDetails#DECLARED}). */
  public ExceptionDetails exceptionDetails() {
    return exceptionDetails;
  }

  /** The server's interceptors, in order (first runs first, outermost). */
  public List<ServerInterceptor> interceptors() {
    return interceptors;
  }

  /** Threads of the built-in business pool. */
  public int businessThreads() {
    return businessThreads;
  }

  /** Calls that may wait for a business thread. */
  public int businessQueueSize() {
    return businessQueueSize;
  }

  /** The user's business executor, or null for the built-in bounded pool (unless {@link #direct()}). */
  public @Nullable Executor executor() {
    return executor;
  }

  /** Run handlers on the transport's thread (for non-blocking services). */
  public boolean direct() {
    return direct;
  }

  /** Calls one connection may have in flight (announced in SETTINGS). */
  public int maxConcurrentCallsPerConnection() {
    return maxConcurrentCallsPerConnection;
  }

  /** Connections open at once. */
  public int maxConnections() {
    return maxConnections;
  }

  /** How long a graceful shutdown (or a connection's drain) lets calls in flight finish. */
  public long shutdownGracePeriodNanos() {
    return shutdownGracePeriodNanos;
  }

  /** Timeouts and limits that protect the server from peers. */
  public ServerLimits limits() {
    return limits;
  }

  /** Told when the server serves and when it is about to drain, in order. */
  public List<ServerLifecycleListener> lifecycleListeners() {
    return lifecycleListeners;
  }

  /** How long a graceful shutdown keeps serving after telling the listeners, before GOAWAY (0: none). */
  public long drainDelayNanos() {
    return drainDelayNanos;
  }

  @Override
  public String toString() {
    return "ServerConfig{"
        + "bindAddress=" + bindAddress + ", "
        + "services=" + services + ", "
        + "interceptors=" + interceptors + ", "
        + "businessThreads=" + businessThreads + ", "
        + "businessQueueSize=" + businessQueueSize + ", "
        + "executor=" + executor + ", "
        + "direct=" + direct + ", "
        + "maxConcurrentCallsPerConnection=" + maxConcurrentCallsPerConnection + ", "
        + "maxConnections=" + maxConnections + ", "
        + "shutdownGracePeriodNanos=" + shutdownGracePeriodNanos + ", "
        + "limits=" + limits + ", "
        + "lifecycleListeners=" + lifecycleListeners.size() + ", "
        + "drainDelayNanos=" + drainDelayNanos + ", "
        + "exceptionMapper=" + exceptionMapper + ", "
        + "exceptionDetails=" + exceptionDetails + ", "
        + commonToString() + "}";
  }

  /** Sets the options of a {@link ServerConfig} by name; every one has a default. */
  public static final class Builder extends TransportConfig.Builder<Builder> {
    private @Nullable InetSocketAddress bindAddress;
    private List<ServiceDefinition> services = List.of();
    private List<ServerInterceptor> interceptors = List.of();
    private int businessThreads = DEFAULT_BUSINESS_THREADS;
    private int businessQueueSize = DEFAULT_BUSINESS_QUEUE_SIZE;
    private @Nullable Executor executor;
    private boolean direct;
    private int maxConcurrentCallsPerConnection = DEFAULT_MAX_CONCURRENT_CALLS_PER_CONNECTION;
    private int maxConnections = DEFAULT_MAX_CONNECTIONS;
    private long shutdownGracePeriodNanos = DEFAULT_SHUTDOWN_GRACE.toNanos();
    private ServerLimits limits = DEFAULT_LIMITS;
    private List<ServerLifecycleListener> lifecycleListeners = List.of();
    private long drainDelayNanos;
    private @Nullable ExceptionMapper exceptionMapper;
    private ExceptionDetails exceptionDetails = ExceptionDetails.DECLARED;

    private Builder() {
      super("petrel-server");
    }

    public Builder bindAddress(@Nullable InetSocketAddress bindAddress) {
      this.bindAddress = bindAddress;
      return this;
    }

    public Builder services(List<ServiceDefinition> services) {
      this.services = services;
      return this;
    }

    public Builder exceptionMapper(@Nullable ExceptionMapper exceptionMapper) {
      this.exceptionMapper = exceptionMapper;
      return this;
    }

    public Builder exceptionDetails(ExceptionDetails exceptionDetails) {
      this.exceptionDetails = exceptionDetails;
      return this;
    }

    public Builder interceptors(List<ServerInterceptor> interceptors) {
      this.interceptors = interceptors;
      return this;
    }

    public Builder businessThreads(int businessThreads) {
      this.businessThreads = businessThreads;
      return this;
    }

    public Builder businessQueueSize(int businessQueueSize) {
      this.businessQueueSize = businessQueueSize;
      return this;
    }

    public Builder executor(@Nullable Executor executor) {
      this.executor = executor;
      return this;
    }

    public Builder direct(boolean direct) {
      this.direct = direct;
      return this;
    }

    public Builder maxConcurrentCallsPerConnection(int maxConcurrentCallsPerConnection) {
      this.maxConcurrentCallsPerConnection = maxConcurrentCallsPerConnection;
      return this;
    }

    public Builder maxConnections(int maxConnections) {
      this.maxConnections = maxConnections;
      return this;
    }

    public Builder shutdownGracePeriodNanos(long shutdownGracePeriodNanos) {
      this.shutdownGracePeriodNanos = shutdownGracePeriodNanos;
      return this;
    }

    public Builder limits(ServerLimits limits) {
      this.limits = limits;
      return this;
    }

    public Builder lifecycleListeners(List<ServerLifecycleListener> lifecycleListeners) {
      this.lifecycleListeners = lifecycleListeners;
      return this;
    }

    public Builder drainDelayNanos(long drainDelayNanos) {
      this.drainDelayNanos = drainDelayNanos;
      return this;
    }

    public ServerConfig build() {
      return new ServerConfig(this);
    }
  }
}
