package io.petrel.rpc.transport.netty;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.ScheduledFuture;
import io.petrel.rpc.spi.ClientConfig;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One of the client's connections to the endpoint, kept alive across failures: a lost connection is
 * re-established in the background with exponential backoff and jitter, and a call that finds no usable
 * connection starts a connect attempt at once (one attempt at a time). All connections of a slot live on one
 * event loop, so its deadline timers and in-flight map need no locks.
 */
final class ClientSlot {
  private static final Logger log = LoggerFactory.getLogger(ClientSlot.class);

  private final NettyRpcClient client;
  private final EventLoop loop;
  private final Bootstrap bootstrap;
  private final ClientConfig config;
  private volatile ClientConnection connection;
  // Guarded by this.
  private Promise<ClientConnection> connecting;
  private long backoffNanos;
  private ScheduledFuture<?> reconnectTimer;
  private boolean closed;

  ClientSlot(NettyRpcClient client, EventLoop loop, IoSupport io, ClientConfig config) {
    this.client = client;
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
            new WriteBufferWaterMark(config.writeBufferLowWaterMark(), config.writeBufferHighWaterMark()))
        .handler(new ChannelInitializer<Channel>() {
          @Override
          protected void initChannel(Channel ch) {
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

  /** The usable connection, or null. Lock-free: the per-call fast path. */
  ClientConnection current() {
    ClientConnection c = connection;
    return c != null && c.isUsable() ? c : null;
  }

  /** A usable connection now, or the attempt to make one (started now if none is under way). */
  synchronized Future<ClientConnection> acquire() {
    ClientConnection c = current();
    if (c != null) {
      return loop.newSucceededFuture(c);
    }
    if (closed) {
      return loop.newFailedFuture(new IllegalStateException("client is shut down"));
    }
    if (connecting == null) {
      startConnect();
    }
    return connecting;
  }

  // Holding the lock.
  private void startConnect() {
    if (reconnectTimer != null) {
      reconnectTimer.cancel(false);
      reconnectTimer = null;
    }
    Promise<ClientConnection> promise = loop.newPromise();
    connecting = promise;
    ChannelFuture cf = bootstrap.connect(config.address());
    cf.addListener(f -> {
      ClientConnection conn = null;
      synchronized (this) {
        connecting = null;
        if (f.isSuccess()) {
          conn = cf.channel().pipeline().get(ClientConnection.class);
          if (closed) {
            cf.channel().close();
            conn = null;
          } else {
            connection = conn;
            backoffNanos = config.reconnectInitialBackoffNanos();
          }
        } else {
          scheduleReconnect();
        }
      }
      if (conn != null) {
        if (client.metrics() != null) {
          client.metrics().connectionsOpened.increment();
        }
        log.debug("connected to {} from {}", client.target(), cf.channel().localAddress());
        promise.setSuccess(conn);
      } else {
        Throwable cause = f.cause() != null ? f.cause() : new IllegalStateException("client is shut down");
        log.debug("cannot connect to {}: {}", client.target(), cause.toString());
        promise.setFailure(cause);
      }
    });
  }

  // Holding the lock.
  private void scheduleReconnect() {
    if (closed || reconnectTimer != null || connecting != null) {
      return;
    }
    long jittered = (long) (backoffNanos * (0.8 + 0.4 * ThreadLocalRandom.current().nextDouble()));
    backoffNanos = Math.min(backoffNanos * 2, config.reconnectMaxBackoffNanos());
    reconnectTimer = loop.schedule(() -> {
      synchronized (this) {
        reconnectTimer = null;
        if (!closed && current() == null && connecting == null) {
          startConnect();
        }
      }
    }, jittered, TimeUnit.NANOSECONDS);
  }

  void onClosed(ClientConnection c) {
    if (client.metrics() != null) {
      client.metrics().connectionsClosed.increment();
    }
    synchronized (this) {
      if (connection == c) {
        connection = null;
        if (!closed) {
          log.debug("connection to {} lost; reconnecting with backoff", client.target());
          scheduleReconnect();
        }
      }
    }
  }

  void onGoaway(ClientConnection c) {
    synchronized (this) {
      if (connection == c) {
        connection = null; // new calls go to a new connection; in-flight calls finish on the old one
      }
    }
  }

  /** Stops reconnecting and closes the connection (pending calls on it fail with UNAVAILABLE). */
  Future<?> close() {
    ClientConnection c;
    synchronized (this) {
      closed = true;
      if (reconnectTimer != null) {
        reconnectTimer.cancel(false);
        reconnectTimer = null;
      }
      c = connection;
      connection = null;
    }
    return c == null ? loop.newSucceededFuture(null) : c.channel().close();
  }
}
