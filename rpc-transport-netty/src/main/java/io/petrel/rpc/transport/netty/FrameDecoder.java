package io.petrel.rpc.transport.netty;

import static io.petrel.rpc.transport.netty.Protocol.*;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.petrel.rpc.Metadata;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Splits the byte stream into {@link Frame}s, on the event loop. Checks magic and version as soon as their
 * bytes arrive, and the declared sizes against the limits before buffering a frame's payload: an over-size
 * frame is announced as an {@link OversizeFrame} and its bytes are skipped as they arrive, never allocated.
 * A protocol violation throws {@link ProtocolException}; the decoder then discards everything that follows.
 */
final class FrameDecoder extends ByteToMessageDecoder {
  /**
   * Frames at least this large reserve their size from the {@link BufferBudget} while their bytes arrive;
   * smaller ones are not counted (a connection holds at most one partial frame).
   */
  static final int RESERVE_THRESHOLD = 8 * 1024;

  private final int maxFrameSize;
  private final int maxMetadataSize;
  private final @Nullable BufferBudget budget;
  private long discardRemaining;
  private boolean failed;
  /** Bytes of the frame being received taken from {@link #budget}; 0 if none. */
  private long reserved;
  /** nanoTime when the bytes of the frame now arriving started to arrive; 0 between frames. */
  private long partialSince;

  FrameDecoder(int maxFrameSize, int maxMetadataSize) {
    this(maxFrameSize, maxMetadataSize, null);
  }

  /**
   * @param budget the server's cap on buffered bytes, or null for none (the client)
   */
  FrameDecoder(int maxFrameSize, int maxMetadataSize, @Nullable BufferBudget budget) {
    this.maxFrameSize = maxFrameSize;
    this.maxMetadataSize = maxMetadataSize;
    this.budget = budget;
  }

  /**
   * The {@link System#nanoTime()} at which the frame now arriving started to arrive, or 0 if no frame is
   * partly received (event loop only).
   */
  long partialSince() {
    return partialSince;
  }

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
    int before = out.size();
    decodeFrame(in, out);
    if (out.size() != before) {
      partialSince = 0; // a frame (or an over-size announcement) came out; the next one has its own time
    } else if (partialSince == 0 && (in.isReadable() || discardRemaining > 0)) {
      partialSince = System.nanoTime(); // waiting for the rest: once per frame, not per read
    }
  }

  private void decodeFrame(ByteBuf in, List<Object> out) {
    if (failed) {
      in.skipBytes(in.readableBytes());
      return;
    }
    if (discardRemaining > 0) {
      int n = (int) Math.min(discardRemaining, in.readableBytes());
      in.skipBytes(n);
      discardRemaining -= n;
      if (discardRemaining > 0) {
        return;
      }
      partialSince = 0; // the skipped frame is over; the next one has its own time
    }
    int r = in.readerIndex();
    int readable = in.readableBytes();
    if (readable >= OFF_MAGIC + 2) {
      int magic = in.getUnsignedShort(r + OFF_MAGIC);
      if (magic != MAGIC) {
        throw fail(in, "bad magic", String.format("bad magic 0x%04x (expected 0x%04x): the peer does not speak the Petrel"
            + " protocol", magic, MAGIC) + (looksLikeTls(in, r) ? " (its bytes look like TLS: one side uses TLS and"
            + " the other does not; configure tls on both or neither)" : ""));
      }
    }
    if (readable >= OFF_VERSION + 1) {
      int version = in.getUnsignedByte(r + OFF_VERSION);
      if (version != VERSION) {
        throw fail(in, "unsupported version", "unsupported protocol version " + version + " (this side speaks " + VERSION + ")");
      }
    }
    if (readable < HEADER_SIZE) {
      return;
    }
    long length = in.getUnsignedInt(r + OFF_LENGTH);
    byte type = in.getByte(r + OFF_TYPE);
    long metaLen = in.getUnsignedInt(r + OFF_METADATA_LENGTH);
    long bodyLen = in.getUnsignedInt(r + OFF_BODY_LENGTH);
    if (type < TYPE_REQUEST || type > MAX_TYPE) {
      throw fail(in, "unknown frame type", "unknown frame type " + type);
    }
    if (length != MIN_LENGTH + metaLen + bodyLen) {
      throw fail(in, "frame length", "frame length " + length + " does not match header (28) + metadata (" + metaLen
          + ") + body (" + bodyLen + ")");
    }
    int requestId = in.getInt(r + OFF_REQUEST_ID);
    int methodId = in.getInt(r + OFF_METHOD_ID);
    long frameSize = LENGTH_FIELD_SIZE + length;
    if (frameSize > maxFrameSize || metaLen > maxMetadataSize) {
      boolean meta = frameSize <= maxFrameSize;
      in.skipBytes(HEADER_SIZE);
      discardRemaining = length - MIN_LENGTH;
      out.add(new OversizeFrame(type, requestId, methodId, meta ? metaLen : frameSize,
          meta ? maxMetadataSize : maxFrameSize, meta ? "metadata" : "frame"));
      // The skipped bytes may already be here; the next decode() call discards them.
      return;
    }
    if (readable < frameSize) {
      if (budget != null && reserved == 0 && frameSize >= RESERVE_THRESHOLD) {
        if (!budget.tryReserve(frameSize)) {
          in.skipBytes(HEADER_SIZE);
          discardRemaining = length - MIN_LENGTH;
          out.add(new OversizeFrame(type, requestId, methodId, frameSize, budget.max(), "buffer"));
          return;
        }
        reserved = frameSize;
      }
      return;
    }
    releaseReserved();
    Metadata metadata = metaLen == 0 ? Metadata.EMPTY : decodeMetadata(in, r + HEADER_SIZE, (int) metaLen);
    int metadataHeap = metaLen == 0 ? 0
        : (int) Math.min(Integer.MAX_VALUE / 2, metaLen + (long) metadata.size() * METADATA_ENTRY_HEAP);
    int bodyStart = r + HEADER_SIZE + (int) metaLen;
    ByteBuf body = in.retainedSlice(bodyStart, (int) bodyLen);
    in.skipBytes((int) frameSize);
    out.add(new Frame(type, in.getByte(r + OFF_FLAGS), in.getUnsignedByte(r + OFF_STATUS), requestId, methodId,
        in.getUnsignedInt(r + OFF_TIMEOUT), metadata, metadataHeap, body));
  }

  /** The first bytes look like a TLS record header: content type 20-23, protocol version 3.x (SSL 3.0 to TLS 1.3). */
  private static boolean looksLikeTls(ByteBuf in, int r) {
    int type = in.getUnsignedByte(r);
    return type >= 20 && type <= 23 && in.getUnsignedByte(r + 1) == 3 && in.getUnsignedByte(r + 2) <= 4;
  }

  private void releaseReserved() {
    if (reserved != 0) {
      Objects.requireNonNull(budget, "bytes are reserved from a budget").release(reserved);
      reserved = 0;
    }
  }

  @Override
  protected void handlerRemoved0(ChannelHandlerContext ctx) {
    releaseReserved();
  }

  private ProtocolException fail(ByteBuf in, String kind, String message) {
    releaseReserved();
    failed = true;
    in.skipBytes(in.readableBytes());
    return new ProtocolException(kind, message);
  }

  /**
   * Heap bytes a decoded metadata entry holds beyond its key and value bytes (the entry, its key String and array,
   * its value's String or array: object headers and fields, compressed references). 8 KiB of one-byte entries is
   * about 900 entries: about 100 KB decoded, which is what a server counts for it.
   */
  static final int METADATA_ENTRY_HEAP = 104;

  private Metadata decodeMetadata(ByteBuf in, int start, int len) {
    int end = start + len;
    int i = start;
    List<Metadata.Entry> entries = new ArrayList<>(4);
    while (i < end) {
      if (end - i < 2) {
        throw fail(in, "bad metadata", "truncated metadata key length");
      }
      int keyLen = in.getUnsignedShort(i);
      i += 2;
      if (keyLen == 0 || end - i < keyLen + 5) {
        throw fail(in, "bad metadata", "bad metadata entry: key length " + keyLen + " with " + (end - i) + " bytes left");
      }
      String key = in.toString(i, keyLen, StandardCharsets.US_ASCII);
      i += keyLen;
      byte kind = in.getByte(i++);
      long valueLen = in.getUnsignedInt(i);
      i += 4;
      if (valueLen > end - i) {
        throw fail(in, "bad metadata", "metadata value of '" + key + "' is " + valueLen + " bytes, only " + (end - i) + " left");
      }
      try {
        Metadata.checkKey(key);
      } catch (IllegalArgumentException e) {
        throw fail(in, "bad metadata", "bad metadata key: " + e.getMessage());
      }
      if (kind == META_STRING) {
        entries.add(new Metadata.Entry(key, in.toString(i, (int) valueLen, StandardCharsets.UTF_8), null));
      } else if (kind == META_BINARY) {
        byte[] v = new byte[(int) valueLen];
        in.getBytes(i, v);
        entries.add(new Metadata.Entry(key, null, v));
      } else {
        throw fail(in, "bad metadata", "unknown metadata value kind " + kind + " for key '" + key + "'");
      }
      i += (int) valueLen;
    }
    return Metadata.fromEntries(entries);
  }
}
