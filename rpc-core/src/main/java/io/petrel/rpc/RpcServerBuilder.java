package io.petrel.rpc;

import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;

/**
 * Configures an {@link RpcServer}. Every resource is bounded by default; each limit below is documented in
 * docs/configuration.md with its default ({@link Defaults}). Arguments are checked here, with messages naming the
 * option; the server itself is the core's: {@link RpcServer#builder()} returns rpc-core's implementation
 * ({@link RpcProvider}), which builds it. Its protected members are for that implementation only.
 */
public abstract class RpcServerBuilder extends AbstractRpcBuilder<RpcServerBuilder> {
  /** Default {@link #maxFrameSize}: 8 MiB. */
  /** Default {@link #maxMetadataSize}: 8 KiB. */
  /** Default {@link #businessThreads}: max(16, 4 x available processors). */
  public static final int DEFAULT_BUSINESS_THREADS = Defaults.BUSINESS_THREADS;
  /** Default {@link #businessQueueSize}: 2048 waiting calls. */
  public static final int DEFAULT_BUSINESS_QUEUE_SIZE = Defaults.BUSINESS_QUEUE_SIZE;
  /** Default {@link #maxConcurrentCallsPerConnection}: 1000. */
  public static final int DEFAULT_MAX_CONCURRENT_CALLS_PER_CONNECTION = Defaults.MAX_CONCURRENT_CALLS_PER_CONNECTION;
  /** Default {@link #maxConnections}: 10000. */
  public static final int DEFAULT_MAX_CONNECTIONS = Defaults.MAX_CONNECTIONS;
  /** Default {@link #shutdownGracePeriod}: 10 s. */
  public static final Duration DEFAULT_SHUTDOWN_GRACE = Defaults.SHUTDOWN_GRACE;
  /** Default {@link #handshakeTimeout}: 10 s. */
  public static final Duration DEFAULT_HANDSHAKE_TIMEOUT = Defaults.HANDSHAKE_TIMEOUT;
  /** Default {@link #idleTimeout}: 5 minutes. */
  public static final Duration DEFAULT_IDLE_TIMEOUT = Defaults.IDLE_TIMEOUT;
  /** Default {@link #keepAlive}: a PING after 60 s of silence, closed after 20 s more. */
  public static final Duration DEFAULT_KEEP_ALIVE_TIME = Defaults.SERVER_KEEP_ALIVE_TIME;
  public static final Duration DEFAULT_KEEP_ALIVE_TIMEOUT = Defaults.SERVER_KEEP_ALIVE_TIMEOUT;
  /** Default {@link #frameReceiveTimeout}: 30 s. */
  public static final Duration DEFAULT_FRAME_RECEIVE_TIMEOUT = Defaults.FRAME_RECEIVE_TIMEOUT;
  /** Default {@link #unwritableTimeout}: 30 s. */
  public static final Duration DEFAULT_UNWRITABLE_TIMEOUT = Defaults.UNWRITABLE_TIMEOUT;
  /** Default {@link #maxConnectionsPerAddress}: 1000. */
  public static final int DEFAULT_MAX_CONNECTIONS_PER_ADDRESS = Defaults.MAX_CONNECTIONS_PER_ADDRESS;
  /**
   * Default {@link #maxBufferedBytes}: a quarter of the smaller of the JVM's heap maximum ({@code -Xmx}) and its
   * direct memory limit ({@code -XX:MaxDirectMemorySize}, by default the heap's maximum), at least 16 MiB. What
   * the server holds for peers may sit on either (responses for a peer that does not read wait on the heap).
   */
  public static final long DEFAULT_MAX_BUFFERED_BYTES = Defaults.MAX_BUFFERED_BYTES;

  /**
   * Default {@link #maxBufferedBytesPerConnection} for a server-wide {@code maxBufferedBytes}: a sixteenth of it,
   * within 256 KiB and 8 MiB (4 MiB for a 256 MiB heap), so a few connections that do not read cannot take the
   * whole server-wide budget from the others.
   */
  public static long defaultMaxBufferedBytesPerConnection(long maxBufferedBytes) {
    return Defaults.maxBufferedBytesPerConnection(maxBufferedBytes);
  }

  protected @Nullable String host;
  protected int port = -1;
  protected @Nullable String inProcessName;
  protected final List<ServiceDefinition> services = new ArrayList<>();
  protected int businessThreads = DEFAULT_BUSINESS_THREADS;
  protected int businessQueueSize = DEFAULT_BUSINESS_QUEUE_SIZE;
  protected @Nullable Executor executor;
  protected boolean direct;
  protected int virtualThreads;
  protected int maxConcurrentCallsPerConnection = DEFAULT_MAX_CONCURRENT_CALLS_PER_CONNECTION;
  protected int maxConnections = DEFAULT_MAX_CONNECTIONS;
  protected Duration shutdownGracePeriod = DEFAULT_SHUTDOWN_GRACE;
  protected final List<ServerLifecycleListener> lifecycleListeners = new ArrayList<>();
  protected Duration drainDelay = Duration.ZERO;
  protected Duration handshakeTimeout = DEFAULT_HANDSHAKE_TIMEOUT;
  protected Duration idleTimeout = DEFAULT_IDLE_TIMEOUT;
  protected Duration keepAliveTime = DEFAULT_KEEP_ALIVE_TIME;
  protected Duration keepAliveTimeout = DEFAULT_KEEP_ALIVE_TIMEOUT;
  protected Duration frameReceiveTimeout = DEFAULT_FRAME_RECEIVE_TIMEOUT;
  protected Duration maxConnectionAge = Duration.ZERO;
  protected Duration unwritableTimeout = DEFAULT_UNWRITABLE_TIMEOUT;
  protected int maxConnectionsPerAddress = DEFAULT_MAX_CONNECTIONS_PER_ADDRESS;
  protected long maxBufferedBytes = DEFAULT_MAX_BUFFERED_BYTES;
  protected long maxBufferedBytesPerConnection;
  protected final List<ServerInterceptor> interceptors = new ArrayList<>();
  protected @Nullable ExceptionMapper exceptionMapper;
  protected ExceptionDetails exceptionDetails = ExceptionDetails.DECLARED;

  /** For rpc-core's implementation only. */
  protected RpcServerBuilder() {
    super("petrel-server");
  }

  /** Listens on all interfaces at {@code port} (0 picks a free port; see {@link RpcServer#port()}). */
  public RpcServerBuilder port(int port) {
    checkPort(port);
    this.port = port;
    this.inProcessName = null;
    return this;
  }

  /** Listens on {@code host:port}, e.g. {@code ("127.0.0.1", 0)} for loopback only. */
  public RpcServerBuilder bindAddress(String host, int port) {
    checkPort(port);
    this.host = Objects.requireNonNull(host, "host");
    this.port = port;
    this.inProcessName = null;
    return this;
  }

  /**
   * Serves clients of this JVM only, by name, without a socket: the in-process transport, built into rpc-core
   * (no transport dependency needed). Clients call it with {@code RpcClient.builder().inProcess(name)}. Replaces
   * {@link #port}/{@link #bindAddress} (the last one set wins). Statuses, deadlines, limits
   * ({@link #maxFrameSize}, {@link #maxMetadataSize}, {@link #maxConcurrentCallsPerConnection} per client), the
   * executor, interceptors, metrics and shutdown behave as over a socket; requests and responses are marshalled,
   * never shared. Options about sockets and peers (connection limits and timeouts, the buffer budget,
   * transport options such as NettyOptions) do not apply; {@link #tls} and {@link #transport} cannot be combined
   * with it.
   * The name is taken at {@link RpcServer#start()} (which throws {@link java.io.IOException} if a running server
   * of this JVM has it) and freed when the server has stopped. {@link RpcServer#address()} is then an
   * {@link InProcessAddress}; {@link RpcServer#port()} throws.
   */
  public RpcServerBuilder inProcess(String name) {
    this.inProcessName = checkInProcessName(name);
    this.host = null;
    this.port = -1;
    return this;
  }

  static String checkInProcessName(String name) {
    Objects.requireNonNull(name, "inProcess name");
    if (name.isBlank()) {
      throw new IllegalArgumentException("inProcess name must not be blank: '" + name + "'");
    }
    return name;
  }

  public RpcServerBuilder addService(ServiceDefinition service) {
    Objects.requireNonNull(service, "service");
    for (ServiceDefinition s : services) {
      if (s.name().equals(service.name())) {
        throw new IllegalArgumentException("service " + service.name() + " is added twice");
      }
    }
    services.add(service);
    return this;
  }

  /** Threads of the built-in business pool (default max(16, 4 x processors)). */
  public RpcServerBuilder businessThreads(int n) {
    this.businessThreads = checkPositive("businessThreads", n);
    return this;
  }

  /**
   * Calls that may wait for a business thread (default 2048). A call that finds the pool and queue full gets
   * RESOURCE_EXHAUSTED at once. 0 means no queue: a call runs only if a thread is free.
   */
  public RpcServerBuilder businessQueueSize(int n) {
    this.businessQueueSize = checkNonNegative("businessQueueSize", n);
    return this;
  }

  /**
   * Runs handlers on the given executor instead of the built-in pool, e.g.
   * {@code Executors.newVirtualThreadPerTaskExecutor()} on Java 21+. The server does not take ownership: it
   * never shuts it down. A {@link java.util.concurrent.RejectedExecutionException} becomes RESOURCE_EXHAUSTED.
   */
  public RpcServerBuilder executor(Executor executor) {
    this.executor = Objects.requireNonNull(executor, "executor");
    this.direct = false;
    this.virtualThreads = 0;
    return this;
  }

  /**
   * Runs each call's handler on its own virtual thread (Java 21+), at most {@code maxConcurrentCalls} at once: a
   * call over that is refused at once with RESOURCE_EXHAUSTED naming this option, so the server stays bounded as
   * with the built-in pool (a plain {@code executor(Executors.newVirtualThreadPerTaskExecutor())} has no bound).
   * Replaces the built-in pool, {@link #executor} and {@link #directExecutor} (the last one set wins). Handlers
   * that block (JDBC, other calls) then hold a cheap virtual thread instead of a platform thread.
   *
   * @throws UnsupportedOperationException on Java 17-20, saying that virtual threads need Java 21
   */
  public RpcServerBuilder virtualThreads(int maxConcurrentCalls) {
    checkPositive("virtualThreads maxConcurrentCalls", maxConcurrentCalls);
    checkVirtualThreads();
    this.virtualThreads = maxConcurrentCalls;
    this.executor = null;
    this.direct = false;
    return this;
  }

  /**
   * Runs handlers directly on the event loop that read the request: the fastest mode, for handlers that never
   * block (CPU-light or asynchronous). A blocking handler here stalls every connection of that loop.
   */
  public RpcServerBuilder directExecutor() {
    this.direct = true;
    this.executor = null;
    this.virtualThreads = 0;
    return this;
  }

  /**
   * Calls one connection may have in flight (default 1000). Announced to clients when a connection opens: Petrel
   * clients hold further calls until earlier ones end; a peer that sends more gets RESOURCE_EXHAUSTED.
   */
  public RpcServerBuilder maxConcurrentCallsPerConnection(int n) {
    this.maxConcurrentCallsPerConnection = checkPositive("maxConcurrentCallsPerConnection", n);
    return this;
  }

  /** Connections open at once; a further one is closed right after accept, with a WARN log (default 10000). */
  public RpcServerBuilder maxConnections(int n) {
    this.maxConnections = checkPositive("maxConnections", n);
    return this;
  }

  /** How long {@link RpcServer#shutdown()} lets in-flight calls finish (default 10 s). */
  public RpcServerBuilder shutdownGracePeriod(Duration grace) {
    Objects.requireNonNull(grace, "shutdownGracePeriod");
    if (grace.isNegative()) {
      throw new IllegalArgumentException("shutdownGracePeriod must be >= 0: " + grace);
    }
    this.shutdownGracePeriod = grace;
    return this;
  }

  /**
   * Adds a listener told when the server serves (its port bound) and when it is about to drain, for example to
   * register it in a service registry and deregister it before its clients are told to go away. Listeners are
   * called in the order added.
   */
  public RpcServerBuilder addLifecycleListener(ServerLifecycleListener listener) {
    lifecycleListeners.add(Objects.requireNonNull(listener, "lifecycleListener"));
    return this;
  }

  /**
   * How long {@link RpcServer#shutdown()} keeps serving as before after telling the lifecycle listeners that it
   * is about to drain, and before it sends GOAWAY and starts its grace period (default 0). Gives clients time to
   * hear from a registry that this server is gone. {@link RpcServer#shutdownNow()} does not wait.
   */
  public RpcServerBuilder drainDelay(Duration delay) {
    Objects.requireNonNull(delay, "drainDelay");
    if (delay.isNegative()) {
      throw new IllegalArgumentException("drainDelay must be >= 0: " + delay);
    }
    this.drainDelay = delay;
    return this;
  }

  /**
   * How long a new connection may take to deliver its first complete frame before it is closed (default 10 s;
   * {@code Duration.ZERO} = no limit). Stops peers that connect and send nothing, or half a header.
   */
  public RpcServerBuilder handshakeTimeout(Duration timeout) {
    this.handshakeTimeout = checkTimeout("handshakeTimeout", timeout);
    return this;
  }

  /**
   * How long a connection may stay open with no call in flight and no new call; then the server sends GOAWAY
   * and closes it (default 5 minutes; {@code Duration.ZERO} = never). Keepalive PINGs do not count as calls.
   * A Petrel client opens a new connection on its next call.
   */
  public RpcServerBuilder idleTimeout(Duration timeout) {
    this.idleTimeout = checkTimeout("idleTimeout", timeout);
    return this;
  }

  /**
   * Server-side keepalive: after {@code time} without receiving anything from a peer the server sends a PING;
   * if nothing arrives within {@code timeout} after it the connection is closed and its calls are cancelled
   * (defaults 60 s and 20 s; {@code time} {@code Duration.ZERO} = off). Finds peers that vanished without
   * closing.
   */
  public RpcServerBuilder keepAlive(Duration time, Duration timeout) {
    this.keepAliveTime = checkTimeout("keepAlive time", time);
    Objects.requireNonNull(timeout, "keepAlive timeout");
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("keepAlive timeout must be > 0: " + timeout);
    }
    this.keepAliveTimeout = timeout;
    return this;
  }

  /**
   * How long one frame may take to arrive once its first bytes have (default 30 s; {@code Duration.ZERO} = no
   * limit). A peer that trickles a large frame, or sends a frame minus its last byte, is disconnected.
   */
  public RpcServerBuilder frameReceiveTimeout(Duration timeout) {
    this.frameReceiveTimeout = checkTimeout("frameReceiveTimeout", timeout);
    return this;
  }

  /**
   * Maximum age of a connection (default {@code Duration.ZERO}: none). An older connection is sent GOAWAY, so
   * the client moves its new calls to a new connection, and is closed once its calls have ended or the
   * {@link #shutdownGracePeriod} has passed. Each connection's age gets +-10% jitter.
   */
  public RpcServerBuilder maxConnectionAge(Duration age) {
    this.maxConnectionAge = checkTimeout("maxConnectionAge", age);
    return this;
  }

  /**
   * How long a peer may keep a connection's unsent responses above the write buffer's high water mark, i.e. not
   * read them, before it is disconnected (default 30 s; {@code Duration.ZERO} = never).
   */
  public RpcServerBuilder unwritableTimeout(Duration timeout) {
    this.unwritableTimeout = checkTimeout("unwritableTimeout", timeout);
    return this;
  }

  /**
   * Connections open at once from one remote IP address; a further one is closed right after accept
   * (default 1000).
   */
  public RpcServerBuilder maxConnectionsPerAddress(int n) {
    this.maxConnectionsPerAddress = checkPositive("maxConnectionsPerAddress", n);
    return this;
  }

  /**
   * Server-wide cap on the memory held for peers beyond their sockets, heap or direct: partially received
   * frames, requests of 8 KiB or more waiting for the business pool, responses encoded by business threads that
   * the event loops have not yet handed to the socket, and responses waiting for a peer that does not read
   * (default: a quarter of the smaller of the heap maximum and the direct memory limit, at least 16 MiB). A
   * frame that would go over it is skipped unread and answered with RESOURCE_EXHAUSTED; a response that would go
   * over it is replaced by RESOURCE_EXHAUSTED.
   */
  public RpcServerBuilder maxBufferedBytes(long bytes) {
    if (bytes < 64 * 1024) {
      throw new IllegalArgumentException("maxBufferedBytes must be >= 65536: " + bytes);
    }
    this.maxBufferedBytes = bytes;
    return this;
  }

  /**
   * One connection's share of {@link #maxBufferedBytes}: the responses waiting for its peer to read and its
   * requests of 8 KiB or more waiting for the business pool (default: a sixteenth of maxBufferedBytes, within
   * 256 KiB and 8 MiB). Once the peer has not drained its write buffer for two seconds (or
   * {@link #unwritableTimeout}, if shorter), a response that would take its connection over it is replaced by
   * RESOURCE_EXHAUSTED, new requests on that connection are refused without running, and if the peer has still
   * not drained its write buffer another grace period later the connection is closed. A peer that reads may go
   * over it (a client pipelining many calls), within maxBufferedBytes. Requests over
   * it pause reading from the connection until the pool has taken them. At least 64 KiB and at most
   * maxBufferedBytes.
   */
  public RpcServerBuilder maxBufferedBytesPerConnection(long bytes) {
    if (bytes < 64 * 1024) {
      throw new IllegalArgumentException("maxBufferedBytesPerConnection must be >= 65536: " + bytes);
    }
    this.maxBufferedBytesPerConnection = bytes;
    return this;
  }

  /**
   * Adds interceptors that see every call, in the order added (the first added runs first, outermost).
   */
  public RpcServerBuilder intercept(ServerInterceptor... interceptors) {
    for (ServerInterceptor i : interceptors) {
      this.interceptors.add(Objects.requireNonNull(i, "interceptor"));
    }
    return this;
  }

  /**
   * Chooses the status a caller gets for an exception a handler throws (default: none, every such exception is
   * {@code UNKNOWN}, described as {@link #exceptionDetails} says). See {@link ExceptionMapper}; e.g.
   * {@code exceptionMapper((method, e) -> e instanceof NotFoundException ? Status.NOT_FOUND.withDescription(
   * e.getMessage()) : null)}.
   */
  public RpcServerBuilder exceptionMapper(ExceptionMapper mapper) {
    this.exceptionMapper = Objects.requireNonNull(mapper, "exceptionMapper");
    return this;
  }

  /**
   * What a caller learns of an exception a handler throws (other than a {@link StatusException}): by default
   * ({@link ExceptionDetails#DECLARED}) its class names and message travel only if the method declares it (as
   * generated code says in {@link MethodDescriptor#declaredExceptions()}), so that the stub rethrows it; any other
   * exception answers UNKNOWN (or the {@link #exceptionMapper}'s status and description) with neither its class
   * nor its message, which only the server's log shows. {@link ExceptionDetails#ALL} sends every exception's
   * class names and message, for internal services whose callers may see them.
   */
  public RpcServerBuilder exceptionDetails(ExceptionDetails details) {
    this.exceptionDetails = Objects.requireNonNull(details, "exceptionDetails");
    return this;
  }

  /**
   * Serves over TLS (default: plaintext): every connection must complete a TLS 1.3 or 1.2 handshake before its
   * first frame, within {@link #handshakeTimeout}. The config needs the server's certificate and key
   * ({@code keyPair} or {@code keyStore}); with {@code clientAuth} the server asks clients for certificates
   * (mutual TLS). The files are read at {@link RpcServer#start()}, which throws {@link java.io.IOException} if
   * they cannot be loaded. See docs/security.md.
   */
  public RpcServerBuilder tls(TlsConfig tls) {
    Objects.requireNonNull(tls, "tls");
    if (!tls.hasOwnCertificate()) {
      throw new IllegalArgumentException("a server's TlsConfig needs the server's certificate and key: set"
          + " TlsConfig.builder().keyPair(certificateChainPem, privateKeyPem) or keyStore(...)");
    }
    if (!tls.hostnameVerification()) {
      throw new IllegalArgumentException("insecureSkipHostnameVerification() is a client option: a server does"
          + " not check the host names of its clients; remove it from the server's TlsConfig");
    }
    if (tls.serverName() != null) {
      throw new IllegalArgumentException("serverName(\"" + tls.serverName() + "\") is a client option: the name a"
          + " client expects in the server's certificate; remove it from the server's TlsConfig");
    }
    this.tls = tls;
    return this;
  }

  /**
   * Throws {@link UnsupportedOperationException} saying that virtual threads need Java 21 when this JVM has none.
   */
  protected abstract void checkVirtualThreads();

  /**
   * The per-connection buffer budget to apply: the one set, or the default for {@code maxBufferedBytes}; throws
   * {@link IllegalStateException} if the one set is above {@code maxBufferedBytes}.
   */
  protected long perConnectionBuffer() {
    if (maxBufferedBytesPerConnection == 0) {
      return Math.min(maxBufferedBytes, defaultMaxBufferedBytesPerConnection(maxBufferedBytes));
    }
    if (maxBufferedBytesPerConnection > maxBufferedBytes) {
      throw new IllegalStateException("maxBufferedBytesPerConnection (" + maxBufferedBytesPerConnection + ") must"
          + " not be more than maxBufferedBytes (" + maxBufferedBytes + ")");
    }
    return maxBufferedBytesPerConnection;
  }

  /**
   * The server, not yet started.
   *
   * @throws IllegalStateException if no port (or in-process name) is set, or options that exclude each other are
   * @throws IllegalArgumentException if two methods have the same id, or the TLS material cannot be loaded
   */
  public abstract RpcServer build();

  /** {@link #build()} then {@link RpcServer#start()}. */
  public RpcServer start() throws java.io.IOException {
    return build().start();
  }
}
