package io.petrel.rpc.internal.inprocess;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.UnpooledHeapByteBuf;
import io.petrel.rpc.Marshaller;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.Status;
import io.petrel.rpc.spi.FrameSizes;
import io.petrel.rpc.spi.FrameSizes.TooLarge;

/**
 * How the in-process transport marshals a message: into a heap buffer of its own, as a socket transport would
 * before writing it, and sized as a frame of the wire protocol would be (a 32-byte header, the metadata, the
 * body), so that {@code maxFrameSize} and {@code maxMetadataSize} mean the same thing, and fail with the same
 * status, whichever transport carries the call.
 */
final class Frames {
  private Frames() {}

  /** The wire protocol's frame header (docs/protocol.md), counted in every frame size. */
  static final int HEADER_SIZE = 32;

  /**
   * Plain heap buffers, as the Netty client uses for requests encoded on callers' threads (the pooled
   * allocator keeps no cache for threads that are not Netty's), but tracked by Netty's leak detector, which
   * leaves unpooled heap buffers out: a request or response this transport forgot to release is reported like
   * a leaked frame of the Netty transport (at the paranoid level the tests run with, every one).
   */
  static final ByteBufAllocator ALLOC = new TrackedHeapAllocator();

  private static final class TrackedHeapAllocator extends AbstractByteBufAllocator {
    TrackedHeapAllocator() {
      super(false);
    }

    @Override
    protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
      return toLeakAwareBuffer(new UnpooledHeapByteBuf(this, initialCapacity, maxCapacity));
    }

    @Override
    protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
      return newHeapBuffer(initialCapacity, maxCapacity); // never asked for: this transport writes no socket
    }

    @Override
    public boolean isDirectBufferPooled() {
      return false;
    }
  }

  /** Encoded size of metadata on the wire (see FrameSizes). */
  static int metadataSize(Metadata metadata) {
    return FrameSizes.metadataSize(metadata);
  }

  /** Checks metadata against the sender's own limit; returns its size. */
  static int checkMetadata(Metadata metadata, int maxMetadataSize, String limitHint) throws TooLarge {
    int metaLen = metadataSize(metadata);
    if (metaLen > maxMetadataSize) {
      throw new TooLarge(Status.RESOURCE_EXHAUSTED.withDescription("metadata of " + metaLen
          + " bytes exceeds maxMetadataSize " + maxMetadataSize + " (raise " + limitHint + ".maxMetadataSize)"));
    }
    return metaLen;
  }

  /**
   * Marshals {@code value} into a new heap buffer, owned by the caller; checks the frame it would make against
   * the sender's own {@code maxFrameSize}.
   *
   * @param what "request" or "response", for the message
   */
  static <T> ByteBuf encode(String what, Marshaller<T> marshaller, T value, int metaLen, int maxFrameSize,
      String limitHint) throws Exception {
    int size = marshaller.serializedSize(value);
    if (size >= 0 && (long) HEADER_SIZE + metaLen + size > maxFrameSize) {
      throw tooLarge(what, (long) HEADER_SIZE + metaLen + size, maxFrameSize, limitHint);
    }
    ByteBuf buf = ALLOC.heapBuffer(size >= 0 ? size : 256);
    boolean ok = false;
    try {
      marshaller.write(value, buf);
      int actual = buf.readableBytes();
      if (size >= 0 && actual != size) {
        throw new IllegalStateException("marshaller announced " + size + " bytes but wrote " + actual + " for "
            + value.getClass());
      }
      if (size < 0 && (long) HEADER_SIZE + metaLen + actual > maxFrameSize) {
        throw tooLarge(what, (long) HEADER_SIZE + metaLen + actual, maxFrameSize, limitHint);
      }
      ok = true;
      return buf;
    } finally {
      if (!ok) {
        buf.release();
      }
    }
  }

  private static TooLarge tooLarge(String what, long size, int max, String limitHint) {
    return new TooLarge(Status.RESOURCE_EXHAUSTED.withDescription(what + " of " + size + " bytes exceeds"
        + " maxFrameSize " + max + " (raise " + limitHint + ".maxFrameSize on both sides)"));
  }

  /** The status as it would arrive over a wire: code and description (never null), no local cause. */
  static Status asReceived(Status status) {
    return status.code().toStatus().withDescription(status.description() == null ? "" : status.description());
  }
}
