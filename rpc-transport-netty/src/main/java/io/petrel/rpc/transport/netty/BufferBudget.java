package io.petrel.rpc.transport.netty;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A server's cap on the memory it holds for peers: partially received frames (reserved by {@link FrameDecoder}
 * when a frame's header says how large it is and its bytes are still arriving) and responses encoded by business
 * threads that the event loop has not yet handed to the socket. Only frames of at least
 * {@link FrameDecoder#RESERVE_THRESHOLD} bytes are counted: smaller ones are bounded per connection (one partial
 * frame; queued responses up to the high water mark), and counting them would put a shared atomic on every call.
 * Each connection's socket buffer is bounded separately, by its write buffer's high water mark. Thread-safe.
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
