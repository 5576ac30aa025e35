package io.petrel.rpc.transport.netty;

import io.micrometer.core.instrument.Tags;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.util.concurrent.Future;
import io.petrel.rpc.spi.RateLimitedLog;
import io.petrel.rpc.spi.ServerConfig;
import io.petrel.rpc.spi.ServerDispatcher;
import io.petrel.rpc.spi.ServerTransport;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.jspecify.annotations.Nullable;

/**
 * The Netty side of a server: one boss loop accepts, worker loops frame requests into calls for the core's
 * {@link ServerDispatcher} and write their answers; per connection it enforces the call limit, the timeouts,
 * back-pressure and the buffer budget.
 */
final class NettyServerTransport implements ServerTransport {
  private static final Logger log = LoggerFactory.getLogger(NettyServerTransport.class);

  private final ServerConfig config;
  /**
   * Made in {@link #start}, so that a server built and never started registers no meter; written before the bind,
   * so every connection's event loop sees it (the bind and each accept are handed to the loops after it).
   */
  private @Nullable TransportMetrics metrics;
  private final Set<ServerConnection> connections = ConcurrentHashMap.newKeySet();
  private final AtomicInteger connectionCount = new AtomicInteger();
  /**
   * Connections accepted and not yet closed, counted by the boss loop as it accepts them (before they reach a
   * worker), for maxConnections: each holds a file descriptor from accept on.
   */
  private final AtomicInteger acceptedCount = new AtomicInteger();
  /** Open connections per remote IP address, for maxConnectionsPerAddress. */
  private final ConcurrentHashMap<InetAddress, AtomicInteger> perAddress = new ConcurrentHashMap<>();
  private final BufferBudget budget;
  private final long housekeepingPeriodNanos;
  /** maxConnections, lowered at start if the process may not open that many files. */
  private int maxConnections;
  private volatile boolean draining;
  /** The server is releasing its event loops: their end is expected. */
  private volatile boolean releasing;

  private ServerDispatcher dispatcher;
  private RateLimitedLog limitLog;
  private IoSupport io;
  private int workerThreads;
  private EventLoopGroup boss;
  private EventLoopGroup workers;
  private Channel serverChannel;
  private InetSocketAddress localAddress;
  /** The TLS contexts of new connections, or null for plaintext; set by start(). */
  private volatile @Nullable TlsSource tls;

  NettyServerTransport(ServerConfig config) {
    this.config = config;
    this.budget = new BufferBudget(config.limits().maxBufferedBytes());
    this.housekeepingPeriodNanos = housekeepingPeriod(config.limits());
    this.maxConnections = config.maxConnections();
  }

  /**
   * How often each connection checks its timeouts: a quarter of the shortest one, within 10 ms and 1 s, so a
   * timeout fires at most a quarter (at most 1 s) late. 0 when every timeout is off.
   */
  static long housekeepingPeriod(io.petrel.rpc.spi.ServerLimits l) {
    long min = Long.MAX_VALUE;
    for (long t : new long[] {l.handshakeTimeoutNanos(), l.idleTimeoutNanos(), l.keepAliveTimeNanos(),
        l.frameReceiveTimeoutNanos(), l.maxConnectionAgeNanos(), l.unwritableTimeoutNanos()}) {
      if (t > 0) {
        min = Math.min(min, t);
      }
    }
    if (l.keepAliveTimeNanos() > 0) {
      min = Math.min(min, l.keepAliveTimeoutNanos());
    }
    if (min == Long.MAX_VALUE) {
      return 0;
    }
    return Math.max(TimeUnit.MILLISECONDS.toNanos(10), Math.min(TimeUnit.SECONDS.toNanos(1), min / 4));
  }

  BufferBudget budget() {
    return budget;
  }

  /** The server's rate-limited WARN log: one line per cause per 10 s, with counts. */
  RateLimitedLog limitLog() {
    return limitLog;
  }

  long housekeepingPeriodNanos() {
    return housekeepingPeriodNanos;
  }

  /** The server's meters, or null when no registry was given. */
  @Nullable TransportMetrics metrics() {
    return metrics;
  }

  ServerDispatcher dispatcher() {
    return dispatcher;
  }

  ServerConfig config() {
    return config;
  }

  String name() {
    return config.name();
  }

  @Override
  public void start(ServerDispatcher dispatcher) throws IOException {
    this.metrics = config.meterRegistry() == null ? null
        : new TransportMetrics(config.meterRegistry(), "server", Tags.of("server", config.name()));
    this.dispatcher = dispatcher;
    this.limitLog = dispatcher.limitLog();
    if (config.tls() != null) {
      try {
        tls = new TlsSource(config.tls(), true, "server '" + config.name() + "'", limitLog);
      } catch (IOException e) {
        throw new IOException("server '" + config.name() + "' cannot start: " + e.getMessage(), e);
      }
    }
    io = IoSupport.select(config.option(NettyOptions.IO_MODE));
    maxConnections = fitToFileLimit(config.maxConnections());
    int wanted = config.option(NettyOptions.WORKER_THREADS);
    workerThreads = wanted == 0 ? Runtime.getRuntime().availableProcessors() : wanted;
    NettyOptions.WaterMark waterMark = config.option(NettyOptions.WRITE_BUFFER_WATER_MARK);
    boss = io.newGroup(1, config.name() + "-boss");
    workers = io.newGroup(workerThreads, config.name() + "-worker");
    ServerBootstrap b = new ServerBootstrap()
        .group(boss, workers)
        .channel(io.serverChannel)
        .handler(new AcceptGate())
        .option(ChannelOption.SO_BACKLOG, 1024)
        .option(ChannelOption.SO_REUSEADDR, true)
        .childOption(ChannelOption.ALLOCATOR, IoSupport.ALLOCATOR)
        .childOption(ChannelOption.TCP_NODELAY, true)
        .childOption(ChannelOption.SO_KEEPALIVE, true)
        .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK,
            new WriteBufferWaterMark(waterMark.low(), waterMark.high()))
        .childHandler(new ChannelInitializer<Channel>() {
          @Override
          protected void initChannel(Channel ch) {
            TlsSource t = tls;
            if (t != null) {
              ServerTlsHandler.install(ch, t.context(), config.limits().handshakeTimeoutNanos(), limitLog);
            }
            if (metrics != null) {
              ch.pipeline().addLast("petrel-bytes-in", metrics.bytesIn());
            }
            FrameDecoder decoder = new FrameDecoder(config.maxFrameSize(), config.maxMetadataSize(), budget);
            ch.pipeline().addLast("petrel-frame-decoder", decoder);
            ch.pipeline().addLast("petrel-server", new ServerConnection(NettyServerTransport.this, ch, decoder));
          }
        });
    try {
      serverChannel = b.bind(config.bindAddress()).syncUninterruptibly().channel();
    } catch (Exception e) {
      throw new IOException("cannot bind " + config.bindAddress() + ": " + e, e);
    }
    localAddress = (InetSocketAddress) serverChannel.localAddress();
    if (metrics != null) {
      metrics.gauge("rpc.server.connections", "Open connections", connectionCount, AtomicInteger::get);
      metrics.eventLoops(workers);
    }
    watchEventLoops(boss);
    watchEventLoops(workers);
  }

  /**
   * An event loop that ends while the server runs (an Error escaped it) would leave its connections unserved
   * and every new connection given to it dead: the server stops instead, saying so (ServerDispatcher.fatal).
   */
  private void watchEventLoops(EventLoopGroup group) {
    for (io.netty.util.concurrent.EventExecutor loop : group) {
      loop.terminationFuture().addListener(f -> {
        if (!releasing) {
          Throwable cause = f.cause() != null ? f.cause()
              : new IllegalStateException("event loop " + loop + " terminated while the server was running");
          dispatcher.fatal("event loop " + loop + " of server '" + config.name() + "', which ended", cause);
        }
      });
    }
  }

  @Override
  public String describe() {
    return "io " + io.name + ", " + workerThreads + " worker threads, " + (tls == null ? "plaintext"
        : tls.describe());
  }

  @Override
  public void reloadTls() throws IOException {
    TlsSource t = tls;
    if (t == null) {
      throw new IllegalStateException("server '" + config.name() + "' has no TLS to reload; configure it with"
          + " RpcServer.builder().tls(...)");
    }
    t.reload();
  }

  /**
   * The connection limit in force: the configured maxConnections, or less if {@link #fitToFileLimit} lowered it
   * at start.
   */
  int maxConnections() {
    return maxConnections;
  }

  /** True when connections are TLS (the server was built with a TlsConfig). */
  boolean isTls() {
    return config.tls() != null;
  }

  @Override
  public InetSocketAddress localAddress() {
    if (localAddress == null) {
      throw new IllegalStateException("server not started");
    }
    return localAddress;
  }

  /**
   * Lowers maxConnections below the process's open-file limit (ulimit -n) if needed: past that limit accept
   * fails with EMFILE and new clients wait in the backlog instead of being refused, and the JVM cannot open the
   * files it still needs (classes not loaded yet, log files). What stays free: the files open now (the JVM's own,
   * its jars, the event loops'), plus a reserve of max(64, 10% of the limit) for files opened later, outgoing
   * clients and the one connection being refused.
   */
  private int fitToFileLimit(int configured) {
    long maxFiles = -1;
    long openFiles = 0;
    java.lang.management.OperatingSystemMXBean os = java.lang.management.ManagementFactory.getOperatingSystemMXBean();
    if (os instanceof com.sun.management.UnixOperatingSystemMXBean unix) {
      maxFiles = unix.getMaxFileDescriptorCount();
      openFiles = Math.max(0, unix.getOpenFileDescriptorCount());
    }
    long reserve = Math.max(64, maxFiles / 10);
    long room = maxFiles - openFiles - reserve;
    if (maxFiles <= 0 || configured <= room) {
      return configured;
    }
    int fitted = (int) Math.max(1, room);
    log.warn("maxConnections {} is more than this process may open (open-file limit, ulimit -n, is {}, {} files"
        + " are open, {} kept in reserve); the server '{}' accepts at most {} (raise the limit to allow more)",
        configured, maxFiles, openFiles, reserve, config.name(), fitted);
    return fitted;
  }

  /**
   * Enforces maxConnections on the boss loop, as each connection is accepted and before it is handed to a worker:
   * over the limit, the new connection is closed at once. Counting here rather than when a worker activates the
   * connection bounds the file descriptors held to maxConnections + 1 even when the boss accepts a burst faster
   * than the workers get to it (a flood would otherwise run the process out of files between accept and the
   * worker's check).
   */
  private final class AcceptGate extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      Channel child = (Channel) msg;
      if (acceptedCount.incrementAndGet() > maxConnections) {
        acceptedCount.decrementAndGet();
        limitLog.warn("maxConnections", "refusing connection from " + child.remoteAddress() + ": "
            + maxConnections + " connections open, the limit maxConnections (raise RpcServer.builder()"
            + ".maxConnections)");
        child.unsafe().closeForcibly(); // not registered with any event loop yet: just close its socket
        return;
      }
      child.closeFuture().addListener(f -> acceptedCount.decrementAndGet());
      ctx.fireChannelRead(child);
    }
  }

  /** When the last pass of {@link #buffersFull} ran (nanoTime), so that it runs at most every 100 ms. */
  private final java.util.concurrent.atomic.AtomicLong lastEviction =
      new java.util.concurrent.atomic.AtomicLong(System.nanoTime() - 1_000_000_000L);

  /**
   * Any thread: a response for a peer that does not read found maxBufferedBytes full. Each connection whose client
   * has left responses unread for longer than the grace period is closed on its event loop, so a few peers that
   * do not read cannot keep the budget from the others (at most one pass every 100 ms).
   */
  void buffersFull() {
    long now = System.nanoTime();
    long last = lastEviction.get();
    if (now - last < 100_000_000L || !lastEviction.compareAndSet(last, now)) {
      return;
    }
    for (ServerConnection c : connections) {
      try {
        c.channel().eventLoop().execute(() -> c.evictIfStale(now));
      } catch (java.util.concurrent.RejectedExecutionException e) {
        return; // stopping
      }
    }
  }

  /** Connections counted against maxConnectionsPerAddress for {@code ip} now. */
  int addressCount(InetAddress ip) {
    AtomicInteger n = perAddress.get(ip);
    return n == null ? 0 : n.get();
  }

  /** The worker event loops (for tests). */
  EventLoopGroup workerLoops() {
    return workers;
  }

  /** Connections open now (accepted, activated and not yet closed). */
  int openConnections() {
    return connectionCount.get();
  }

  boolean connectionOpened(ServerConnection c) {
    connectionCount.incrementAndGet(); // maxConnections was enforced when the connection was accepted (AcceptGate)
    InetAddress ip = c.remoteIp();
    if (ip != null) {
      AtomicInteger n = perAddress.computeIfAbsent(ip, k -> new AtomicInteger());
      if (n.incrementAndGet() > config.limits().maxConnectionsPerAddress()) {
        releaseAddress(ip);
        connectionCount.decrementAndGet();
        limitLog.warn("maxConnectionsPerAddress", "refusing connection from " + c.remoteAddress() + ": "
            + config.limits().maxConnectionsPerAddress() + " connections open from " + ip.getHostAddress()
            + ", the limit maxConnectionsPerAddress (raise RpcServer.builder().maxConnectionsPerAddress)");
        return false;
      }
    }
    connections.add(c);
    if (metrics != null) {
      metrics.connectionsOpened.increment();
    }
    if (draining) {
      // Accepted while shutting down (the listener closes asynchronously): no call can have started here, so
      // say GOAWAY and close at once rather than leave it to the event loops' end.
      c.sendGoaway(true);
      c.closeAfterWrites("the server is shutting down");
    }
    return true;
  }

  private void releaseAddress(InetAddress ip) {
    perAddress.computeIfPresent(ip, (k, n) -> n.decrementAndGet() <= 0 ? null : n);
  }

  void connectionClosed(ServerConnection c) {
    if (connections.remove(c)) {
      connectionCount.decrementAndGet();
      InetAddress ip = c.remoteIp();
      if (ip != null) {
        releaseAddress(ip);
      }
      if (metrics != null) {
        metrics.connectionsClosed.increment();
      }
    }
  }

  @Override
  public long inFlightCalls() {
    long n = 0;
    for (ServerConnection c : connections) {
      n += c.inFlight();
    }
    return n;
  }

  @Override
  public void stopAccepting(boolean goAway) {
    draining = true;
    if (serverChannel != null) {
      serverChannel.close();
    }
    if (goAway) {
      for (ServerConnection c : connections) {
        c.sendGoaway(true);
      }
    }
  }

  @Override
  public CompletionStage<Void> closeConnections(boolean now) {
    return closeConnections(now, now ? "the server shut down at once" : "the server shut down");
  }

  @Override
  public CompletionStage<Void> closeConnections(boolean now, String why) {
    List<Future<?>> closes = new ArrayList<>();
    for (ServerConnection c : connections) {
      if (c.channel().eventLoop().isShuttingDown()) {
        // Its event loop ended (see watchEventLoops): nothing runs there any more, not even a close or the
        // listener of one; close the socket from here and count it closed.
        closeOnEndedLoop(c.channel());
        connectionClosed(c);
        continue;
      }
      if (now) {
        c.closeFor(why);
        closes.add(c.channel().closeFuture());
      } else {
        c.closeAfterWrites(why);
        closes.add(c.channel().closeFuture());
      }
    }
    CompletableFuture<Void> all = new CompletableFuture<>();
    AtomicInteger remaining = new AtomicInteger(closes.size() + 1);
    Runnable next = () -> {
      if (remaining.decrementAndGet() == 0) {
        all.complete(null);
      }
    };
    for (Future<?> f : closes) {
      f.addListener(x -> next.run());
    }
    next.run();
    return all;
  }

  /**
   * Closes the socket of a channel whose event loop has ended, from another thread. Netty's own
   * {@code unsafe().closeForcibly()} must run on the channel's loop (with assertions on it throws an
   * AssertionError anywhere else, and the stop that called it went no further), so an epoll or io_uring socket
   * is closed through its file descriptor. The loop may have closed the socket as it ended, without the
   * channel's inactive event, which it could no longer run: then there is nothing to close.
   */
  private static void closeOnEndedLoop(Channel ch) {
    if (!ch.isOpen()) {
      return;
    }
    if (ch instanceof io.netty.channel.unix.UnixChannel unix) {
      try {
        unix.fd().close();
      } catch (IOException | RuntimeException e) {
        log.debug("closing {} after its event loop ended: {}", ch, e.toString());
      }
      return;
    }
    try {
      ch.unsafe().closeForcibly(); // NIO: correct without assertions; with them Netty refuses the foreign thread
    } catch (AssertionError e) {
      log.debug("{} left open: its event loop ended, and Netty refuses to close an NIO channel from another"
          + " thread with assertions on; it closes when the process ends", ch);
    }
  }

  @Override
  public CompletionStage<Void> release() {
    releasing = true;
    if (metrics != null) {
      metrics.close();
    }
    CompletableFuture<Void> all = new CompletableFuture<>();
    if (workers == null) {
      all.complete(null);
      return all;
    }
    Future<?> w = workers.shutdownGracefully(0, 2, TimeUnit.SECONDS);
    Future<?> b = boss.shutdownGracefully(0, 2, TimeUnit.SECONDS);
    AtomicInteger n = new AtomicInteger(2);
    io.netty.util.concurrent.FutureListener<Object> l = f -> {
      if (n.decrementAndGet() == 0) {
        all.complete(null);
      }
    };
    w.addListener(l);
    b.addListener(l);
    return all;
  }

  @Override
  public String toString() {
    return "NettyServerTransport{" + config.name() + " " + localAddress + "}";
  }
}
