package io.petrel.rpc.transport.netty;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.ScheduledFuture;
import io.petrel.rpc.Deadline;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.spi.ClientConfig;
import io.petrel.rpc.spi.ConnectivityState;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.jspecify.annotations.Nullable;

/**
 * One of the client's connections to the endpoint, kept across failures. A call that finds no usable connection
 * starts a connect attempt at once (one attempt at a time), unless the last attempt failed: then the slot backs
 * off (exponential, with jitter), and calls made meanwhile wait for the next attempt, which the slot makes by
 * itself when the backoff ends, if the call's deadline comes later (else, or with
 * {@link io.petrel.rpc.CallOptions#withFailFast}, they fail at once naming the cause). With nobody waiting the
 * slot makes no attempt of its own: it stays idle until the next call, so a client nobody calls holds no timer
 * and no connection. All connections of a slot live on one event loop, so its deadline timers and in-flight map
 * need no locks.
 */
final class ClientSlot {
  private static final Logger log = LoggerFactory.getLogger(ClientSlot.class);
  private static final AttributeKey<SslHandler> TLS_HANDLER = AttributeKey.valueOf("petrel-client-tls");

  private final NettyRpcClient client;
  /** Why the slot was closed, for calls that still reach it; null: the client was shut down. */
  private volatile @Nullable String closedWhy;
  private final NettySubchannel subchannel;
  /** True while a reconnect waits out its backoff after a failed attempt; read lock-free by the balancer. */
  private volatile boolean backingOff;
  private final EventLoop loop;
  private final Bootstrap bootstrap;
  private final ClientConfig config;
  private volatile @Nullable ClientConnection connection;
  // Guarded by this.
  private @Nullable Promise<ClientConnection> connecting;
  private long backoffNanos;
  private @Nullable ScheduledFuture<?> reconnectTimer;
  /** When {@link #reconnectTimer} fires (nanoTime). */
  private long nextAttemptAt;
  /**
   * Why the last attempt failed, while the slot backs off after it; null otherwise. Calls made meanwhile fail at
   * once with UNAVAILABLE naming it, instead of each starting an attempt of its own.
   */
  private @Nullable String lastFailure;
  /**
   * Calls waiting for the next attempt (made during the backoff, or while a connection had just closed); the
   * attempt completes it. Null while nobody waits.
   */
  private @Nullable Promise<ClientConnection> nextAttempt;
  /** The channel of the attempt under way (TCP connect or TLS handshake), closed if the slot closes meanwhile. */
  private @Nullable Channel connectingChannel;
  private boolean closed;

  ClientSlot(NettyRpcClient client, NettySubchannel subchannel, EventLoop loop, IoSupport io, ClientConfig config) {
    this.client = client;
    this.subchannel = subchannel;
    this.loop = loop;
    this.config = config;
    this.backoffNanos = config.reconnectInitialBackoffNanos();
    this.bootstrap = new Bootstrap()
        .group(loop)
        .channel(io.socketChannel)
        .option(ChannelOption.ALLOCATOR, IoSupport.ALLOCATOR)
        .option(ChannelOption.TCP_NODELAY, true)
        .option(ChannelOption.SO_KEEPALIVE, true)
        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) TimeUnit.NANOSECONDS.toMillis(
            config.connectTimeoutNanos()))
        .option(ChannelOption.WRITE_BUFFER_WATER_MARK,
            new WriteBufferWaterMark(config.option(NettyOptions.WRITE_BUFFER_WATER_MARK).low(),
                config.option(NettyOptions.WRITE_BUFFER_WATER_MARK).high()))
        .handler(new ChannelInitializer<Channel>() {
          @Override
          protected void initChannel(Channel ch) {
            TlsSource tls = client.tls();
            if (tls != null) {
              // The target host is the SNI name and the name the server's certificate must match.
              SslHandler ssl = tls.context().newHandler(ch.alloc(), subchannel.endpoint().host(),
                  subchannel.endpoint().port());
              ssl.setHandshakeTimeout(config.connectTimeoutNanos(), TimeUnit.NANOSECONDS);
              ch.pipeline().addLast("petrel-tls", ssl);
              ch.attr(TLS_HANDLER).set(ssl);
            }
            if (client.metrics() != null) {
              ch.pipeline().addLast("petrel-bytes-in", client.metrics().bytesIn());
            }
            if (config.keepAliveTimeNanos() > 0) {
              ch.pipeline().addLast("petrel-keepalive",
                  new IdleStateHandler(config.keepAliveTimeNanos(), 0, 0, TimeUnit.NANOSECONDS));
            }
            ch.pipeline().addLast("petrel-frame-decoder",
                new FrameDecoder(config.maxFrameSize(), config.maxMetadataSize()));
            ch.pipeline().addLast("petrel-client", new ClientConnection(client, ClientSlot.this, ch));
          }
        });
  }

  EventLoop loop() {
    return loop;
  }

  /** The endpoint's "host:port", for messages. */
  String authority() {
    return subchannel.authority();
  }

  NettySubchannel subchannel() {
    return subchannel;
  }

  /** The host the client connects to, as given to the builder. */
  String host() {
    return subchannel.endpoint().host();
  }

  /** Whether the client has a TLS certificate to show a server that asks for one. */
  boolean hasOwnCertificate() {
    return config.tls() != null && config.tls().hasOwnCertificate();
  }

  /** True while a reconnect waits out its backoff after a failed attempt (calls here would fail at once). */
  boolean isBackingOff() {
    return backingOff;
  }

  /** The usable connection, or null. Lock-free: the per-call fast path. */
  @Nullable ClientConnection current() {
    ClientConnection c = connection;
    return c != null && c.isUsable() ? c : null;
  }

  /**
   * A usable connection now, or the attempt to make one: the one under way, or one started now. While the slot
   * backs off after a failed attempt (see {@link #lastFailure}), the next attempt if {@code wait} and it comes
   * before {@code deadline} (null: none); otherwise a future failed with UNAVAILABLE saying why and when the next
   * attempt is due.
   */
  Future<ClientConnection> acquire(@Nullable Deadline deadline, boolean wait) {
    Future<ClientConnection> f;
    boolean started;
    synchronized (this) {
      Promise<ClientConnection> before = connecting;
      f = acquireLocked(deadline, wait);
      started = connecting != before;
    }
    if (started) {
      subchannel.slotChanged();
    }
    return f;
  }

  /** The state of this connection, for the endpoint's {@link io.petrel.rpc.spi.ConnectivityState}. */
  synchronized ConnectivityState state() {
    if (closed) {
      return ConnectivityState.SHUTDOWN;
    }
    if (current() != null) {
      return ConnectivityState.READY;
    }
    if (connecting != null) {
      return ConnectivityState.CONNECTING;
    }
    return backingOff ? ConnectivityState.BACKING_OFF : ConnectivityState.IDLE;
  }

  /** Why the last attempt failed, while backing off; else null. */
  synchronized @Nullable String failure() {
    return backingOff ? lastFailure : null;
  }

  // Holding the lock.
  private Future<ClientConnection> acquireLocked(@Nullable Deadline deadline, boolean wait) {
    ClientConnection c = current();
    if (c != null) {
      return loop.newSucceededFuture(c);
    }
    if (closed || loop.isShuttingDown()) {
      return loop.newFailedFuture(shutDown());
    }
    if (connecting != null) {
      return connecting;
    }
    if (connection != null) {
      // Closed a moment ago, and its event loop has not yet said why (onClosed): whether to reconnect at once or
      // back off depends on that, so no attempt is started from here; onClosed (or onGoaway) starts it.
      if (wait) {
        return nextAttempt();
      }
      return loop.newFailedFuture(Status.UNAVAILABLE.withDescription("the connection to " + subchannel.authority()
          + " has just closed; retry").asException());
    }
    if (reconnectTimer != null && lastFailure != null) {
      boolean inTime = deadline == null || nextAttemptAt - deadline.nanoTime() < 0;
      if (wait && inTime) {
        return nextAttempt();
      }
      long left = Math.max(0, TimeUnit.NANOSECONDS.toMillis(nextAttemptAt - System.nanoTime()));
      return loop.newFailedFuture(Status.UNAVAILABLE.withDescription("cannot connect to " + subchannel.authority() + ": "
          + lastFailure + "; next attempt in " + left + " ms" + (wait ? ", after the call's deadline" : "")
          + " (RpcClient.builder().reconnectBackoff)").asException());
    }
    startConnect();
    return Objects.requireNonNull(connecting, "startConnect() sets connecting");
  }

  /** "; next attempt in N ms (...)" while the slot backs off after a failed attempt, else null. */
  synchronized @Nullable String nextAttemptDescribed() {
    if (reconnectTimer == null || lastFailure == null) {
      return null;
    }
    long left = Math.max(0, TimeUnit.NANOSECONDS.toMillis(nextAttemptAt - System.nanoTime()));
    return "; next attempt in " + left + " ms (RpcClient.builder().reconnectBackoff)";
  }

  // Holding the lock.
  private Promise<ClientConnection> nextAttempt() {
    if (nextAttempt == null) {
      nextAttempt = loop.newPromise();
    }
    return nextAttempt;
  }

  private StatusException shutDown() {
    String why = closedWhy;
    return Status.UNAVAILABLE.withDescription(why != null ? why : client.whyStopped()).asException();
  }

  // Holding the lock.
  private void startConnect() {
    if (reconnectTimer != null) {
      reconnectTimer.cancel(false);
      reconnectTimer = null;
      backoffChanged();
    }
    // Calls waiting for this attempt hold its promise already.
    Promise<ClientConnection> promise = nextAttempt != null ? nextAttempt : loop.newPromise();
    nextAttempt = null;
    connecting = promise;
    ChannelFuture cf = bootstrap.connect(subchannel.address());
    connectingChannel = cf.channel();
    cf.addListener(f -> {
      if (!f.isSuccess()) {
        connected(promise, cf.channel(), f.cause(), String.valueOf(f.cause()));
        return;
      }
      if (client.metrics() != null) {
        client.metrics().connectionsOpened.increment(); // a TCP connection, closed once (onClosed) either way
      }
      // From the attribute, not the pipeline: a peer that closes at once (a plaintext server) may have emptied the
      // pipeline before this listener runs, and that is a failed handshake, not a connection that just closed.
      SslHandler ssl = cf.channel().attr(TLS_HANDLER).get();
      if (ssl == null) {
        connected(promise, cf.channel(), null, null);
        return;
      }
      // Usable once the TLS handshake is done; if it fails, say why (untrusted, expired, host name...).
      ssl.handshakeFuture().addListener(h -> {
        if (h.isSuccess()) {
          connected(promise, cf.channel(), null, null);
        } else {
          String why = "TLS handshake failed: " + TlsErrors.describe(h.cause(), true, host(), hasOwnCertificate(),
              TlsErrors.sentCertificate(ssl));
          connected(promise, cf.channel(), Status.UNAVAILABLE.withDescription("cannot connect to "
              + subchannel.authority() + ": " + why).withCause(h.cause()).asException(), why);
        }
      });
    });
  }

  /** Ends a connect attempt: with the new connection, or with {@code cause} ({@code why} in words). */
  private void connected(Promise<ClientConnection> promise, Channel channel, @Nullable Throwable cause,
      @Nullable String why) {
    ClientConnection conn = null;
    synchronized (this) {
      if (connecting == promise) {
        connecting = null;
      }
      if (connectingChannel == channel) {
        connectingChannel = null;
      }
      if (cause == null) {
        conn = channel.pipeline().get(ClientConnection.class);
        if (!closed && (conn == null || !channel.isActive())) {
          // Closed between connect (or handshake) and now, e.g. by a TLS alert: a failed attempt, not a shutdown.
          String reason = conn != null && conn.closeReason() != null ? conn.closeReason()
              : "the connection closed as soon as it opened";
          why = reason;
          cause = Status.UNAVAILABLE.withDescription("cannot connect to " + subchannel.authority() + ": " + reason)
              .asException();
          conn = null;
        }
      }
      if (cause == null) {
        if (closed || conn == null) {
          channel.close();
          conn = null;
        } else {
          connection = conn;
          lastFailure = null;
        }
      } else {
        lastFailure = why;
        scheduleReconnect();
      }
      backoffChanged();
    }
    subchannel.slotChanged();
    if (conn != null) {
      log.debug("connected to {} from {}", subchannel.authority(), channel.localAddress());
      promise.trySuccess(conn);
    } else {
      Throwable failure = cause != null ? cause : shutDown();
      log.debug("cannot connect to {}: {}", subchannel.authority(), failure.toString());
      promise.tryFailure(failure);
    }
  }

  // Holding the lock, after reconnectTimer or lastFailure changed.
  private void backoffChanged() {
    backingOff = reconnectTimer != null && lastFailure != null;
  }

  /** The connection has received its first frame: the server is really there, so backoff starts over. */
  synchronized void onAnswered() {
    backoffNanos = config.reconnectInitialBackoffNanos();
  }

  // Holding the lock.
  private void scheduleReconnect() {
    if (closed || reconnectTimer != null || connecting != null) {
      return;
    }
    long jittered = (long) (backoffNanos * (0.8 + 0.4 * ThreadLocalRandom.current().nextDouble()));
    backoffNanos = Math.min(backoffNanos * 2, config.reconnectMaxBackoffNanos());
    try {
      reconnectTimer = loop.schedule(() -> {
        synchronized (this) {
          reconnectTimer = null;
          backoffChanged();
          // Only for calls waiting: with none, the next call starts the attempt (no timer left behind).
          if (!closed && current() == null && connecting == null && nextAttempt != null) {
            startConnect();
          }
        }
        subchannel.slotChanged();
      }, jittered, TimeUnit.NANOSECONDS);
      nextAttemptAt = System.nanoTime() + jittered;
      backoffChanged();
    } catch (java.util.concurrent.RejectedExecutionException e) {
      closed = true; // the event loop is gone: the client is shutting down
    }
  }

  void onClosed(ClientConnection c) {
    if (client.metrics() != null) {
      client.metrics().connectionsClosed.increment();
    }
    synchronized (this) {
      if (connection == c) {
        connection = null;
        if (!closed) {
          if (!c.answered()) {
            // Accepted, then closed before the server said anything: as good as a failed attempt.
            lastFailure = c.closeReason() != null ? c.closeReason()
                : "the connection was closed before the server answered anything";
            log.debug("connection to {} closed before the server answered; next attempt after the backoff",
                subchannel.authority());
            scheduleReconnect();
            backoffChanged();
          } else {
            log.debug("connection to {} lost; the next call reconnects", subchannel.authority());
            connectForWaiters();
          }
        }
      }
    }
    subchannel.slotChanged();
  }

  void onGoaway(ClientConnection c) {
    synchronized (this) {
      if (connection == c) {
        connection = null; // new calls go to a new connection; in-flight calls finish on the old one
        if (!closed) {
          connectForWaiters();
        }
      }
    }
    subchannel.slotChanged();
  }

  // Holding the lock: calls wait for a connection and nothing plans one (no attempt, no backoff): start it now.
  private void connectForWaiters() {
    if (nextAttempt != null && connecting == null && reconnectTimer == null && current() == null) {
      startConnect();
    }
  }

  /**
   * The endpoint was removed by the resolver: stops reconnecting and sends nothing new here; the connection's
   * calls in flight finish and it closes after the last (see ClientConnection#drain). Calls waiting for a
   * connection attempt fail over to another endpoint.
   */
  Future<?> drain() {
    ClientConnection c;
    // (closedWhy is set before close() so that calls failing on this slot from now on say why)
    synchronized (this) {
      if (closed) {
        c = null;
      } else {
        c = connection;
        connection = null;
      }
    }
    if (c == null) {
      return close();
    }
    Future<?> closed = c.channel().closeFuture();
    closedWhy = subchannel.authority() + " was removed from " + client.target() + " by its resolver";
    close(); // no reconnect, no attempt left; the connection is no longer the slot's, so it is not closed here
    c.drain(closedWhy);
    return closed;
  }

  /** Stops reconnecting and closes the connection (pending calls on it fail with UNAVAILABLE). */
  Future<?> close() {
    ClientConnection c;
    Channel attempt;
    synchronized (this) {
      closed = true;
      if (reconnectTimer != null) {
        reconnectTimer.cancel(false);
        reconnectTimer = null;
      }
      c = connection;
      connection = null;
      if (connecting != null) {
        connecting.tryFailure(shutDown()); // its waiters must not wait for a loop that is about to stop
        connecting = null;
      }
      if (nextAttempt != null) {
        nextAttempt.tryFailure(shutDown());
        nextAttempt = null;
      }
      attempt = connectingChannel;
      connectingChannel = null;
      backoffChanged();
    }
    subchannel.slotChanged();
    // An attempt under way (a TLS handshake may hold buffers) is closed too, before the event loop stops.
    Future<?> attemptClosed = attempt == null ? null : attempt.close();
    if (c == null) {
      return attemptClosed != null ? attemptClosed : loop.newSucceededFuture(null);
    }
    return c.channel().close();
  }

  @Override
  public synchronized String toString() {
    return "ClientSlot{connection=" + connection + ", connecting=" + connecting + ", reconnectTimer="
        + reconnectTimer + ", nextAttempt=" + nextAttempt + ", lastFailure=" + lastFailure + ", closed=" + closed + "}";
  }
}
