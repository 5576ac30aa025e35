package io.petrel.rpc.transport.netty;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A server's cap on the memory it holds for peers: partially received frames (reserved by {@link FrameDecoder}
 * when a frame's header says how large it is and its bytes are still arriving) and responses encoded by business
 * threads that the event loop has not yet handed to the socket. Each connection's socket buffer is bounded
 * separately, by its write buffer's high water mark. Thread-safe.
 */
final class BufferBudget {
  private final long max;
  private final AtomicLong used = new AtomicLong();

  BufferBudget(long max) {
    this.max = max;
  }

  /** Takes {@code bytes} from the budget if they fit. */
  boolean tryReserve(long bytes) {
    for (;;) {
      long u = used.get();
      long next = u + bytes;
      if (next > max) {
        return false;
      }
      if (used.compareAndSet(u, next)) {
        return true;
      }
    }
  }

  /** Takes {@code bytes} whether or not they fit (memory that already exists). */
  void forceReserve(long bytes) {
    used.addAndGet(bytes);
  }

  void release(long bytes) {
    used.addAndGet(-bytes);
  }

  long used() {
    return used.get();
  }

  long max() {
    return max;
  }
}
