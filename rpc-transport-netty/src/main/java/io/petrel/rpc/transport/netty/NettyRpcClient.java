package io.petrel.rpc.transport.netty;

import io.micrometer.core.instrument.Tags;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.Deadline;
import io.petrel.rpc.Endpoint;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.Status;
import io.petrel.rpc.spi.ClientConfig;
import io.petrel.rpc.spi.ClientStream;
import io.petrel.rpc.spi.ClientStreamListener;
import io.petrel.rpc.spi.ClientTransport;
import io.petrel.rpc.spi.ClientTransportContext;
import io.petrel.rpc.spi.RateLimitedLog;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Netty client transport: it opens a connection ({@link ClientConnection}: TCP, TLS handshake, on one event
 * loop) when the core asks for one, and carries each attempt as a {@link PendingCall} (a {@link ClientStream}) on
 * the connection the core chose; requests are encoded on the caller's thread and sent through per-connection write
 * queues. Reconnecting, backoff, the calls waiting for a connection, the endpoints' state and the connections'
 * health (first-frame timeout, keepalive, liveness check: the transport only sends the PINGs, reports reads and
 * resets a connection found dead) are the core's. Event loops are the JVM's shared ones
 * unless {@code ioThreads} is set.
 */
final class NettyRpcClient implements ClientTransport {
  private static final Logger log = LoggerFactory.getLogger(NettyRpcClient.class);
  private static final AttributeKey<SslHandler> TLS_HANDLER = AttributeKey.valueOf("petrel-client-tls");

  private final ClientConfig config;
  private final String target;
  private final IoSupport io;
  private final EventLoopGroup group;
  /** The shared event loops in use, or null when the client has its own group or the caller's. */
  private final @Nullable SharedEventLoops shared;
  /** The client made {@link #group} and shuts it down when it terminates. */
  private final boolean ownGroup;
  private final String loopsDescribed;
  /** Every channel opened and not yet closed, connect attempts included: closed when the client terminates. */
  private final java.util.Set<Channel> channels = java.util.concurrent.ConcurrentHashMap.newKeySet();
  /** The connections made and not yet closed, in the order made (meters, tests). */
  private final List<ClientConnection> connections = new java.util.concurrent.CopyOnWriteArrayList<>();
  /** The options of every connection; cloned per connect with its event loop and handler. */
  private final Bootstrap bootstrap;
  private final @Nullable TransportMetrics metrics;
  private final RateLimitedLog limitLog = new RateLimitedLog(log);
  /** The event loops this client's connections run on, to refuse blocking calls made on them. */
  private final EventExecutor[] loops;
  /** The TLS contexts of new connections, or null for plaintext. */
  private final @Nullable TlsSource tls;
  private final LoopRelease loopRelease;
  /** What the core says of the client this transport serves. */
  private final ClientTransportContext runtime;

  NettyRpcClient(ClientConfig config, ClientTransportContext runtime) {
    this.runtime = runtime;
    this.config = config;
    this.target = config.target();
    if (config.tls() != null) {
      try {
        this.tls = new TlsSource(config.tls(), false, "client '" + config.name() + "'", limitLog);
      } catch (java.io.IOException e) {
        throw new IllegalArgumentException("client '" + config.name() + "' for " + target + ": " + e.getMessage(),
            e);
      }
    } else {
      this.tls = null;
    }
    io.netty.channel.IoEventLoopGroup supplied = config.option(NettyOptions.EVENT_LOOP_GROUP);
    int ioThreads = config.option(NettyOptions.IO_THREADS);
    if (supplied != null) {
      this.io = IoSupport.of(supplied); // channels of the group's own I/O type
      this.shared = null;
      this.ownGroup = false;
      this.group = supplied;
      this.loopsDescribed = "the caller's event loops";
    } else {
      this.io = IoSupport.select(config.option(NettyOptions.IO_MODE));
      if (ioThreads > 0) {
        this.shared = null;
        this.ownGroup = true;
        this.group = io.newGroup(ioThreads, config.name() + "-io");
        this.loopsDescribed = ioThreads + " io threads of its own";
      } else {
        this.shared = SharedEventLoops.acquire(io);
        this.ownGroup = false;
        this.group = shared.group();
        this.loopsDescribed = "shared event loops";
      }
    }
    this.loopRelease = new LoopRelease(shared, ownGroup ? group : null);
    CLEANER.register(this, loopRelease);
    this.metrics = config.meterRegistry() == null ? null
        : new TransportMetrics(config.meterRegistry(), "client",
            Tags.of("client", config.name(), "target", target));
    List<EventExecutor> executors = new ArrayList<>();
    group.forEach(executors::add);
    this.loops = executors.toArray(new EventExecutor[0]);
    if (metrics != null) {
      metrics.gauge("rpc.client.connections", "Usable connections", this, c -> {
        int n = 0;
        for (ClientConnection cc : c.connections) {
          n += cc.isUsable() ? 1 : 0;
        }
        return n;
      });
      metrics.eventLoops(group);
    }
    this.bootstrap = new Bootstrap()
        .channel(io.socketChannel)
        .option(ChannelOption.ALLOCATOR, IoSupport.ALLOCATOR)
        .option(ChannelOption.TCP_NODELAY, true)
        .option(ChannelOption.SO_KEEPALIVE, true)
        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) TimeUnit.NANOSECONDS.toMillis(
            config.connectTimeoutNanos()))
        .option(ChannelOption.WRITE_BUFFER_WATER_MARK,
            new WriteBufferWaterMark(config.option(NettyOptions.WRITE_BUFFER_WATER_MARK).low(),
                config.option(NettyOptions.WRITE_BUFFER_WATER_MARK).high()));
    log.debug("Petrel client '{}' for {} (io {}, {} connections per endpoint, {}, load balancer {}, {})",
        config.name(), target, io.name, config.connectionsPerEndpoint(), loopsDescribed,
        config.loadBalancer() == null ? "least_pending" : config.loadBalancer().name(),
        tls == null ? "plaintext" : tls.describe());
  }

  /**
   * Opens one connection to {@code endpoint} on the next event loop: usable once TCP is connected and, with TLS,
   * the handshake is done. All of the connection's calls and timers then run on that loop.
   */
  @Override
  public CompletableFuture<io.petrel.rpc.spi.Connection> connect(Endpoint endpoint,
      io.petrel.rpc.spi.Connection.Listener listener) {
    CompletableFuture<io.petrel.rpc.spi.Connection> result = new CompletableFuture<>();
    EventLoop loop = group.next();
    if (loop.isShuttingDown()) {
      result.completeExceptionally(Status.UNAVAILABLE.withDescription(whyStopped()).asException());
      return result;
    }
    String authority = endpoint.authority();
    TlsSource tlsNow = tls;
    // The name the server's certificate must match, sent as SNI: the endpoint's host unless serverName is set.
    String tlsHost = tlsNow != null ? tlsNow.serverName(endpoint.host()) : endpoint.host();
    boolean namedServer = tlsNow != null && tlsNow.namesServer();
    ChannelFuture cf;
    try {
      cf = bootstrap.clone(loop).handler(new ChannelInitializer<Channel>() {
        @Override
        protected void initChannel(Channel ch) {
          TlsSource t = tls;
          if (t != null) {
            SslHandler ssl = t.context().newHandler(ch.alloc(), tlsHost, endpoint.port());
            ssl.setHandshakeTimeout(config.connectTimeoutNanos(), TimeUnit.NANOSECONDS);
            ch.pipeline().addLast("petrel-tls", ssl);
            ch.attr(TLS_HANDLER).set(ssl);
          }
          TransportMetrics m = metrics;
          if (m != null) {
            ch.pipeline().addLast("petrel-bytes-in", m.bytesIn());
          }
          ch.pipeline().addLast("petrel-frame-decoder",
              new FrameDecoder(config.maxFrameSize(), config.maxMetadataSize()));
          ch.pipeline().addLast("petrel-client", new ClientConnection(NettyRpcClient.this, listener, authority,
              tlsHost, namedServer, ch));
        }
      }).connect(InetSocketAddress.createUnresolved(endpoint.host(), endpoint.port())); // resolved at each connect
    } catch (RuntimeException e) {
      result.completeExceptionally(Status.UNAVAILABLE.withDescription(whyStopped()).withCause(e).asException());
      return result;
    }
    Channel ch = cf.channel();
    channels.add(ch);
    ch.closeFuture().addListener(f -> channels.remove(ch));
    result.whenComplete((c, t) -> {
      if (result.isCancelled()) {
        ch.close(); // the core gave the attempt up (its slot closed)
      }
    });
    cf.addListener(f -> {
      if (!f.isSuccess()) {
        result.completeExceptionally(f.cause());
        return;
      }
      TransportMetrics m = metrics;
      if (m != null) {
        m.connectionsOpened.increment(); // a TCP connection, closed once (channelInactive) either way
      }
      // From the attribute, not the pipeline: a peer that closes at once (a plaintext server) may have emptied the
      // pipeline before this listener runs, and that is a failed handshake, not a connection that just closed.
      SslHandler ssl = ch.attr(TLS_HANDLER).get();
      if (ssl == null) {
        connected(result, ch);
        return;
      }
      // Usable once the TLS handshake is done; if it fails, say why (untrusted, expired, host name...).
      ssl.handshakeFuture().addListener(h -> {
        if (h.isSuccess()) {
          connected(result, ch);
        } else {
          String why = "TLS handshake failed: " + TlsErrors.describe(h.cause(), true, tlsHost,
              namedServer, hasOwnCertificate(), TlsErrors.sentCertificate(ssl));
          result.completeExceptionally(Status.UNAVAILABLE.withDescription(why).withCause(h.cause()).asException());
          ch.close();
        }
      });
    });
    return result;
  }

  /** The connect (and handshake) of {@code ch} succeeded: its connection is the attempt's result. */
  private void connected(CompletableFuture<io.petrel.rpc.spi.Connection> result, Channel ch) {
    ClientConnection conn = ch.pipeline().get(ClientConnection.class);
    if (conn == null || !ch.isActive()) {
      // Closed between connect (or handshake) and now, e.g. by a TLS alert: a failed attempt.
      String reason = conn != null ? conn.closeReason() : null;
      result.completeExceptionally(Status.UNAVAILABLE.withDescription(reason != null ? reason
          : "the connection closed as soon as it opened").asException());
      ch.close();
      return;
    }
    connections.add(conn);
    ch.closeFuture().addListener(f -> connections.remove(conn));
    log.debug("connected to {} from {}", ch.remoteAddress(), ch.localAddress());
    if (!result.complete(conn)) {
      ch.close(); // given up meanwhile
    }
  }

  /** The core's timers for this client's endpoints run on its event loops. */
  @Override
  public ScheduledExecutorService scheduler() {
    return group;
  }

  /** Whether the client has a TLS certificate to show a server that asks for one. */
  boolean hasOwnCertificate() {
    return config.tls() != null && config.tls().hasOwnCertificate();
  }

  /** The TLS contexts of new connections, or null for plaintext. */
  @Nullable TlsSource tls() {
    return tls;
  }

  @Override
  public void reloadTls() throws java.io.IOException {
    if (tls == null) {
      ClientTransport.super.reloadTls(); // throws: no TLS
      return;
    }
    tls.reload();
  }

  String target() {
    return target;
  }

  /** The client's own metadata limit; requests never exceed it. */
  int maxMetadataSize() {
    return config.maxMetadataSize();
  }

  RateLimitedLog limitLog() {
    return limitLog;
  }

  /** The client's configuration (its transport options included). */
  ClientConfig clientConfig() {
    return config;
  }

  /**
   * Why nothing can be sent when an event loop of this client refuses work: the client is shut down, or, on the
   * caller's own event loops ({@link NettyOptions#EVENT_LOOP_GROUP}), the caller shut them down while the client
   * was still in use.
   */
  String whyStopped() {
    if (runtime.isShutdown() || shared != null || ownGroup) {
      return "client '" + config.name() + "' is shut down";
    }
    return "the event loops of client '" + config.name() + "' are shut down: the EventLoopGroup given with"
        + " NettyOptions.EVENT_LOOP_GROUP was shut down while the client was in use (shut the client down first)";
  }

  @Override
  public boolean isTransportThread() {
    for (io.netty.util.concurrent.EventExecutor e : loops) {
      if (e.inEventLoop()) {
        return true;
      }
    }
    return false;
  }

  /** The client's meters, or null when no registry was given. */
  @Nullable TransportMetrics metrics() {
    return metrics;
  }

  /** What the core says of the client this transport serves. */
  ClientTransportContext context() {
    return runtime;
  }

  /** The client's own frame limit; requests never exceed it. */
  int maxFrameSize() {
    return config.maxFrameSize();
  }

  /** A new attempt on the connection the core chose; its request is encoded by {@link PendingCall#sendMessage}. */
  @Override
  public ClientStream newStream(io.petrel.rpc.spi.@Nullable Connection connection, MethodDescriptor<?, ?> method,
      CallOptions options, @Nullable Deadline deadline, ClientStreamListener listener) {
    ClientConnection c = (ClientConnection) Objects.requireNonNull(connection,
        "the Netty transport carries attempts on the connections the core chose");
    return new PendingCall(c, method, options, deadline, listener);
  }

  /** The first connection made and still usable, or null (tests). */
  @Nullable ClientConnection connection() {
    for (ClientConnection c : connections) {
      if (c.isUsable()) {
        return c;
      }
    }
    return null;
  }

  /**
   * The core has closed every connection it kept: closes what is left (connect attempts under way, whose TLS
   * handshake may hold buffers), then releases the event loops (or this client's share of them).
   */
  @Override
  public void terminate(Runnable done) {
    List<Channel> open = new ArrayList<>(channels);
    if (open.isEmpty()) {
      release(done);
      return;
    }
    java.util.concurrent.atomic.AtomicInteger left = new java.util.concurrent.atomic.AtomicInteger(open.size());
    for (Channel ch : open) {
      ch.close().addListener(f -> {
        if (left.decrementAndGet() == 0) {
          release(done);
        }
      });
    }
  }

  private void release(Runnable done) {
    if (metrics != null) {
      metrics.close(); // its gauges read this client's objects; one made again under its name binds its own
    }
    Future<?> stopped = loopRelease.release();
    if (stopped == null) {
      done.run(); // the caller's event loops: never shut down here
      return;
    }
    stopped.addListener(g -> done.run());
  }

  /**
   * Releases the client's event loops once: at termination, or when the client is garbage collected without
   * having been shut down (a {@code build().start()} that threw leaves nobody to shut it down). It holds no
   * reference to the client, so that the client can become unreachable.
   */
  private static final class LoopRelease implements Runnable {
    private final @Nullable SharedEventLoops shared;
    private final @Nullable EventLoopGroup own;
    private final java.util.concurrent.atomic.AtomicBoolean released = new java.util.concurrent.atomic.AtomicBoolean();

    LoopRelease(@Nullable SharedEventLoops shared, @Nullable EventLoopGroup own) {
      this.shared = shared;
      this.own = own;
    }

    /** Stops or releases the loops, the first time; null when there is nothing to wait for. */
    @Nullable Future<?> release() {
      if ((shared == null && own == null) || !released.compareAndSet(false, true)) {
        return null;
      }
      return shared != null ? shared.release()
          : Objects.requireNonNull(own, "the client's own loops when not shared").shutdownGracefully(0, 2, TimeUnit.SECONDS);
    }

    @Override
    public void run() {
      release();
    }
  }

  private static final java.lang.ref.Cleaner CLEANER = java.lang.ref.Cleaner.create();

  @Override
  public String toString() {
    return "NettyRpcClient{" + target + ", pending=" + runtime.pendingCalls() + ", connections=" + connections
        + "}";
  }
}
