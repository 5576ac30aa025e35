package io.petrel.rpc.transport.netty;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;

/**
 * The I/O transport (epoll, io_uring, NIO): which ones this JVM can use is checked once, here, and the choice
 * for a server or client is made once at build time.
 */
final class IoSupport {
  /**
   * The allocator of every Petrel channel, and of the frames written on event loops and business threads:
   * Netty's pooled allocator (thread-local caches on those threads). Netty 4.2's default, the adaptive
   * allocator, cost about 1 us more CPU per call on the client in the BenchmarkMessage runs
   * (docs/benchmarks.md).
   */
  static final ByteBufAllocator ALLOCATOR = PooledByteBufAllocator.DEFAULT;

  /**
   * The allocator of requests, which are encoded on the callers' own threads: plain heap arrays. The pooled
   * allocator keeps no cache for threads that are not Netty's (Netty 4.2's default), so every request a caller
   * allocated there, and the event loop freed after the write, took a lock of one of the few arenas that all
   * callers share (3.6% of the callers' CPU in a profile at 128 blocking callers). A heap array comes from the
   * caller's TLAB, protobuf writes it in place with its array encoder, and the channel copies it once into the
   * event loop's pooled direct memory when it writes it.
   */
  static final ByteBufAllocator CALLER_ALLOCATOR = new UnpooledByteBufAllocator(false);

  private static final boolean EPOLL = Epoll.isAvailable();
  private static final boolean IO_URING = ioUringAvailable();

  final String name;
  final IoHandlerFactory factory;
  final Class<? extends ServerChannel> serverChannel;
  final Class<? extends SocketChannel> socketChannel;

  private IoSupport(String name, IoHandlerFactory factory, Class<? extends ServerChannel> serverChannel,
      Class<? extends SocketChannel> socketChannel) {
    this.name = name;
    this.factory = factory;
    this.serverChannel = serverChannel;
    this.socketChannel = socketChannel;
  }

  private static boolean ioUringAvailable() {
    try {
      return io.netty.channel.uring.IoUring.isAvailable();
    } catch (Throwable t) { // optional dependency absent, or no kernel support
      return false;
    }
  }

  static IoSupport select(IoMode mode) {
    switch (mode) {
      case NIO:
        return nio();
      case EPOLL:
        if (!EPOLL) {
          throw new IllegalStateException("netty.ioMode EPOLL requested but epoll is not available: "
              + Epoll.unavailabilityCause() + " (use NettyOptions.IO_MODE AUTO or NIO)");
        }
        return epoll();
      case IO_URING:
        if (!IO_URING) {
          throw new IllegalStateException("netty.ioMode IO_URING requested but io_uring is not available (add"
              + " io.netty:netty-transport-native-io_uring:linux-x86_64 and run on a kernel that allows it)");
        }
        return IoUringSupport.create();
      case AUTO:
      default:
        return EPOLL ? epoll() : nio();
    }
  }

  /**
   * The I/O type of a group the user supplies ({@link NettyOptions#EVENT_LOOP_GROUP}): channels must match the
   * group's I/O handler.
   *
   * @throws IllegalArgumentException if the group's I/O handler is none of NIO, epoll, io_uring
   */
  static IoSupport of(io.netty.channel.IoEventLoopGroup group) {
    if (group.isIoType(NioIoHandler.class)) {
      return nio();
    }
    if (EPOLL && group.isIoType(EpollIoHandler.class)) {
      return epoll();
    }
    if (IO_URING && IoUringSupport.isIoType(group)) {
      return IoUringSupport.create();
    }
    throw new IllegalArgumentException("netty.eventLoopGroup: a group of NioIoHandler, EpollIoHandler or"
        + " IoUringIoHandler event loops is needed (a MultiThreadIoEventLoopGroup made with one of their"
        + " factories); got " + group);
  }

  private static IoSupport nio() {
    return new IoSupport("nio", NioIoHandler.newFactory(), NioServerSocketChannel.class, NioSocketChannel.class);
  }

  private static IoSupport epoll() {
    return new IoSupport("epoll", EpollIoHandler.newFactory(), EpollServerSocketChannel.class,
        EpollSocketChannel.class);
  }

  MultiThreadIoEventLoopGroup newGroup(int threads, String threadPrefix) {
    return new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory(threadPrefix, true), factory);
  }

  /** Kept apart so that io_uring classes load only when asked for. */
  private static final class IoUringSupport {
    static boolean isIoType(io.netty.channel.IoEventLoopGroup group) {
      return group.isIoType(io.netty.channel.uring.IoUringIoHandler.class);
    }

    static IoSupport create() {
      return new IoSupport("io_uring", io.netty.channel.uring.IoUringIoHandler.newFactory(),
          io.netty.channel.uring.IoUringServerSocketChannel.class,
          io.netty.channel.uring.IoUringSocketChannel.class);
    }
  }
}
