package io.petrel.rpc.transport.netty;

/**
 * Which Netty I/O transport the Netty transport uses ({@link NettyOptions#IO_MODE}). {@link #AUTO} picks the best
 * one available, once, and logs it.
 */
public enum IoMode {
  /** Epoll on Linux when its native library loads, else NIO (io_uring only when asked for). */
  AUTO,
  /** Linux epoll (native); fails at start if it is not available. */
  EPOLL,
  /** Linux io_uring (native); fails at start if it is not available. */
  IO_URING,
  /** Java NIO: works everywhere. */
  NIO
}
