package io.petrel.rpc.transport.netty;

import io.netty.channel.IoEventLoopGroup;
import io.petrel.rpc.TransportOption;
import org.jspecify.annotations.Nullable;

/**
 * The Netty transport's own options, set on either builder with {@code option(key, value)}:
 *
 * <pre>{@code
 * RpcServer server = RpcServer.builder().port(7000).addService(...)
 *     .option(NettyOptions.IO_MODE, IoMode.NIO)
 *     .option(NettyOptions.WORKER_THREADS, 4)
 *     .build();
 * }</pre>
 *
 * Each value is checked when it is set ({@link IllegalArgumentException} naming the option). The in-process
 * transport ignores them. Defaults and what happens at each limit: docs/configuration.md, "Netty options".
 */
public final class NettyOptions {
  private NettyOptions() {}

  /**
   * Which I/O transport sockets use, server and client (default {@link IoMode#AUTO}: epoll on Linux when its
   * native library loads, else NIO; io_uring only when asked for). EPOLL or IO_URING where it is not available fails at
   * {@code build()} (client) or {@code start()} (server), saying why.
   */
  public static final TransportOption<IoMode> IO_MODE =
      TransportOption.of("netty.ioMode", IoMode.class, IoMode.AUTO);

  /** Server event loops doing socket I/O and framing; 0 (default) means the number of available processors. */
  public static final TransportOption<Integer> WORKER_THREADS =
      TransportOption.of("netty.workerThreads", Integer.class, 0, n -> nonNegative("netty.workerThreads", n));

  /**
   * Client: event loops of this client's own; 0 (default) means the event loops shared by every client of the
   * JVM (as many as available processors, made on first use and stopped when the last client that uses them
   * has terminated).
   */
  public static final TransportOption<Integer> IO_THREADS =
      TransportOption.of("netty.ioThreads", Integer.class, 0, n -> nonNegative("netty.ioThreads", n));

  /**
   * Client: event loops of the caller's own for this client's connections, e.g. those of a Netty server in the
   * same service (default: none; see {@link #IO_THREADS}). The client never shuts them down. Its I/O type
   * (NIO, epoll, io_uring) decides the client's, whatever {@link #IO_MODE} says.
   */
  // The option's type is @Nullable IoEventLoopGroup (default null), a type argument that NullAway's standard mode
  // does not read: it sees null passed where an IoEventLoopGroup is expected.
  @SuppressWarnings("NullAway")
  public static final TransportOption<@Nullable IoEventLoopGroup> EVENT_LOOP_GROUP =
      TransportOption.of("netty.eventLoopGroup", IoEventLoopGroup.class, null);

  /**
   * Per-connection write buffer water marks, server and client (default 32 KiB / 64 KiB). Above {@code high}
   * bytes of unsent data a server stops reading from that peer (and disconnects it after its
   * unwritableTimeout), and a client holds new calls in memory, until the buffer drains below {@code low}.
   */
  public static final TransportOption<WaterMark> WRITE_BUFFER_WATER_MARK =
      TransportOption.of("netty.writeBufferWaterMark", WaterMark.class, WaterMark.DEFAULT);

  /** Write buffer water marks, in bytes: {@code 0 < low <= high}. */
  public record WaterMark(int low, int high) {
    /** 32 KiB / 64 KiB. */
    public static final WaterMark DEFAULT = new WaterMark(32 * 1024, 64 * 1024);

    public WaterMark {
      if (low <= 0 || high < low) {
        throw new IllegalArgumentException("netty.writeBufferWaterMark needs 0 < low <= high: low " + low
            + ", high " + high);
      }
    }
  }

  /**
   * Client: how long every place of a connection's calls-in-flight limit (the server's SETTINGS) may be held by
   * calls the client has given up on (deadline or cancel), with calls waiting for a place, before the client closes
   * the connection and sends the waiting calls on a new one (default 60 s). A server answers a cancelled call only
   * when its handler returns, so a handler that ignores cancellation holds its place that long; a server that never
   * answers would otherwise hold the connection forever. Must be positive.
   */
  public static final TransportOption<java.time.Duration> ABANDONED_PLACE_TIMEOUT =
      TransportOption.of("netty.abandonedPlaceTimeout", java.time.Duration.class, java.time.Duration.ofSeconds(60),
          d -> {
            if (d.isNegative() || d.isZero()) {
              throw new IllegalArgumentException("netty.abandonedPlaceTimeout must be > 0: " + d);
            }
          });

  private static void nonNegative(String name, int n) {
    if (n < 0) {
      throw new IllegalArgumentException(name + " must be >= 0: " + n);
    }
  }
}
