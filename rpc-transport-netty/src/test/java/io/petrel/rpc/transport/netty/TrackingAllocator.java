package io.petrel.rpc.transport.netty;

import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledDirectByteBuf;
import io.netty.buffer.UnpooledHeapByteBuf;
import java.util.ArrayList;
import java.util.List;

/**
 * An unpooled heap allocator that remembers every buffer it makes, for tests that must prove that everything
 * they and the code under test allocated was released (reference count 0) and that no buffer grew larger than
 * the bytes that actually arrived. Like Netty's own unpooled heap buffers, these are not wrapped by Netty's leak
 * detector: the exact reference-count check replaces it, and needs no garbage collection to see a leak. Not
 * thread-safe: one test thread and an {@code EmbeddedChannel}.
 */
final class TrackingAllocator extends AbstractByteBufAllocator {
  private final List<ByteBuf> buffers = new ArrayList<>();
  private long allocatedBytes;

  TrackingAllocator() {
    super(false);
  }

  @Override
  protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
    return track(new UnpooledHeapByteBuf(this, initialCapacity, maxCapacity));
  }

  @Override
  protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
    return track(new UnpooledDirectByteBuf(this, initialCapacity, maxCapacity));
  }

  private ByteBuf track(ByteBuf buf) {
    buffers.add(buf);
    allocatedBytes += buf.capacity();
    return buf;
  }

  @Override
  public boolean isDirectBufferPooled() {
    return false;
  }

  /** Bytes allocated so far: the sum of every buffer's capacity when it was made. */
  long allocatedBytes() {
    return allocatedBytes;
  }

  /** Number of buffers allocated so far. */
  int allocated() {
    return buffers.size();
  }

  /** The largest capacity of a buffer that is still referenced (capacity is 0 once released). */
  int largestLiveCapacity() {
    int max = 0;
    for (ByteBuf b : buffers) {
      if (b.refCnt() > 0) {
        max = Math.max(max, b.capacity());
      }
    }
    return max;
  }

  /** Buffers whose reference count is not 0, described for an assertion message. */
  List<String> unreleased() {
    List<String> out = new ArrayList<>();
    for (ByteBuf b : buffers) {
      if (b.refCnt() != 0) {
        out.add(b + " refCnt=" + b.refCnt());
      }
    }
    return out;
  }
}
