package io.petrel.rpc.benchmarks;

import io.netty.channel.IoHandlerFactory;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.ServerSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.netty.channel.uring.IoUringSocketChannel;
import io.petrel.rpc.transport.netty.IoMode;
import java.util.function.Supplier;

/**
 * The Netty I/O flavour of the raw echo, chosen the way Petrel chooses its own: AUTO is epoll when present, else
 * NIO; IO_URING and EPOLL fail when not available, as Petrel's do.
 */
final class NettyIo {
  private static final boolean EPOLL = Epoll.isAvailable();

  /** A Netty transport: its I/O handler and its channel classes. */
  private enum Kind {
    NIO(NioIoHandler::newFactory, NioServerSocketChannel.class, NioSocketChannel.class),
    EPOLL(EpollIoHandler::newFactory, EpollServerSocketChannel.class, EpollSocketChannel.class),
    IO_URING(IoUringIoHandler::newFactory, IoUringServerSocketChannel.class, IoUringSocketChannel.class);

    final Supplier<IoHandlerFactory> handlers;
    final Class<? extends ServerSocketChannel> serverChannel;
    final Class<? extends SocketChannel> channel;

    Kind(Supplier<IoHandlerFactory> handlers, Class<? extends ServerSocketChannel> serverChannel,
        Class<? extends SocketChannel> channel) {
      this.handlers = handlers;
      this.serverChannel = serverChannel;
      this.channel = channel;
    }
  }

  private NettyIo() {}

  private static Kind kind(IoMode mode) {
    switch (mode) {
      case NIO:
        return Kind.NIO;
      case IO_URING:
        if (!IoUring.isAvailable()) {
          throw new IllegalStateException("io_uring requested but not available: " + IoUring.unavailabilityCause());
        }
        return Kind.IO_URING;
      case EPOLL:
        if (!EPOLL) {
          throw new IllegalStateException("epoll requested but not available: " + Epoll.unavailabilityCause());
        }
        return Kind.EPOLL;
      default:
        return EPOLL ? Kind.EPOLL : Kind.NIO;
    }
  }

  static IoHandlerFactory handlerFactory(IoMode mode) {
    return kind(mode).handlers.get();
  }

  static Class<? extends ServerSocketChannel> serverChannel(IoMode mode) {
    return kind(mode).serverChannel;
  }

  static Class<? extends SocketChannel> channel(IoMode mode) {
    return kind(mode).channel;
  }

  /** "auto", "nio", "epoll", "io_uring" (any case) to an {@link IoMode}. */
  static IoMode parse(String s) {
    return EnumArgs.parse(IoMode.class, s, "I/O mode");
  }
}
