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
import io.petrel.rpc.transport.netty.IoMode;

/** The Netty I/O flavour of the raw echo, chosen the way Petrel chooses its own (epoll when present, else NIO). */
final class NettyIo {
  private static final boolean EPOLL = Epoll.isAvailable();

  private NettyIo() {}

  /** Whether {@code mode} means epoll here; AUTO and IO_URING fall back to epoll, then NIO. */
  static boolean epoll(IoMode mode) {
    if (mode == IoMode.NIO) {
      return false;
    }
    if (mode == IoMode.EPOLL && !EPOLL) {
      throw new IllegalStateException("epoll requested but not available: " + Epoll.unavailabilityCause());
    }
    return EPOLL;
  }

  static IoHandlerFactory handlerFactory(IoMode mode) {
    return epoll(mode) ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
  }

  static Class<? extends ServerSocketChannel> serverChannel(IoMode mode) {
    return epoll(mode) ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
  }

  static Class<? extends SocketChannel> channel(IoMode mode) {
    return epoll(mode) ? EpollSocketChannel.class : NioSocketChannel.class;
  }

  /** "auto", "nio", "epoll", "io_uring" (any case) to an {@link IoMode}. */
  static IoMode parse(String s) {
    return IoMode.valueOf(s.trim().toUpperCase(java.util.Locale.ROOT));
  }
}
