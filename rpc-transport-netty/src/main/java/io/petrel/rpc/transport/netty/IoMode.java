package io.petrel.rpc.transport.netty;

/**
 * Which Netty I/O transport the Netty transport uses ({@link NettyOptions#IO_MODE}). {@link #AUTO} picks the best
 * one available, once, and logs it.
 */
public enum IoMode {
  /** io_uring if explicitly available and enabled, else epoll on Linux, else NIO. */
  AUTO,
  /** Linux epoll (native); fails at start if it is not available. */
  EPOLL,
  /** Linux io_uring (native); fails at start if it is not available. */
  IO_URING,
  /** Java NIO: works everywhere. */
  NIO
}
