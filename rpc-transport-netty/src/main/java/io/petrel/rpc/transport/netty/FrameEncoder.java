package io.petrel.rpc.transport.netty;

import static io.petrel.rpc.transport.netty.Protocol.*;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.petrel.rpc.Marshaller;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.Status;
import io.petrel.rpc.spi.FrameSizes;
import java.nio.charset.StandardCharsets;

/**
 * Writes whole frames into one buffer each, sized exactly when the marshaller knows the body size. Used on
 * caller threads (requests), business threads (responses) and event loops (control frames).
 */
final class FrameEncoder {
  private FrameEncoder() {}

  /** Encoded size of metadata (see FrameSizes). */
  static int metadataSize(Metadata metadata) {
    return FrameSizes.metadataSize(metadata);
  }

  private static void writeMetadata(ByteBuf out, Metadata metadata) {
    for (Metadata.Entry e : metadata.entries()) {
      out.writeShort(e.key().length());
      out.writeCharSequence(e.key(), StandardCharsets.US_ASCII);
      byte[] binary = e.binaryValue();
      if (binary != null) {
        out.writeByte(META_BINARY);
        out.writeInt(binary.length);
        out.writeBytes(binary);
      } else {
        out.writeByte(META_STRING);
        int lenIndex = out.writerIndex();
        out.writeInt(0);
        int n = ByteBufUtil.writeUtf8(out, e.stringValue());
        out.setInt(lenIndex, n);
      }
    }
  }

  /**
   * Encodes a request, oneway or response frame into a buffer of its own. A request's id and timeout are
   * written as 0 and patched on the event loop with {@link #patchRequest} when the call is assigned to a
   * connection.
   *
   * @param limitHint "RpcClient.builder()" or similar, for the error message
   */
  static <T> ByteBuf encodeMessage(ByteBufAllocator alloc, byte type, int requestId, int methodId, int status,
      Metadata metadata, Marshaller<T> marshaller, T value, int maxFrameSize, int maxMetadataSize,
      String limitHint) throws Exception {
    int metaLen = checkMetadata(metadata, maxMetadataSize, limitHint);
    int bodySize = bodySize(type, marshaller, value, metaLen, maxFrameSize, limitHint);
    int initial = HEADER_SIZE + metaLen + Math.max(bodySize, 0);
    ByteBuf buf = alloc.buffer(bodySize >= 0 ? initial : Math.max(initial, 256));
    boolean ok = false;
    try {
      write(buf, type, requestId, methodId, status, metadata, metaLen, marshaller, value, bodySize, maxFrameSize,
          limitHint);
      ok = true;
      return buf;
    } finally {
      if (!ok) {
        buf.release();
      }
    }
  }

  /** Where {@link #appendMessage} writes. */
  interface Output {
    /**
     * Returns the buffer to append a frame of {@code frameSize} bytes to (-1 when the marshaller cannot tell
     * in advance; the buffer then grows as the frame is written).
     */
    ByteBuf reserve(int frameSize);
  }

  /**
   * Appends a frame after the readable bytes of the buffer {@code output} gives; returns the frame's body
   * size. If encoding fails, that buffer is left as it was and the exception is thrown.
   */
  static <T> int appendMessage(Output output, byte type, int requestId, int methodId, int status,
      Metadata metadata, Marshaller<T> marshaller, T value, int maxFrameSize, int maxMetadataSize,
      String limitHint) throws Exception {
    int metaLen = checkMetadata(metadata, maxMetadataSize, limitHint);
    int bodySize = bodySize(type, marshaller, value, metaLen, maxFrameSize, limitHint);
    ByteBuf out = output.reserve(bodySize >= 0 ? HEADER_SIZE + metaLen + bodySize : -1);
    int start = out.writerIndex();
    boolean ok = false;
    try {
      int body = write(out, type, requestId, methodId, status, metadata, metaLen, marshaller, value, bodySize,
          maxFrameSize, limitHint);
      ok = true;
      return body;
    } finally {
      if (!ok) {
        out.writerIndex(start);
      }
    }
  }

  private static int checkMetadata(Metadata metadata, int maxMetadataSize, String limitHint)
      throws FrameSizes.TooLarge {
    int metaLen = metadataSize(metadata);
    if (metaLen > maxMetadataSize) {
      throw new FrameSizes.TooLarge(Status.RESOURCE_EXHAUSTED.withDescription("metadata of " + metaLen
          + " bytes exceeds maxMetadataSize " + maxMetadataSize + " (raise " + limitHint + ".maxMetadataSize)"));
    }
    return metaLen;
  }

  /** The marshaller's announced body size (-1 if it cannot tell), checked against the frame size limit. */
  private static <T> int bodySize(byte type, Marshaller<T> marshaller, T value, int metaLen, int maxFrameSize,
      String limitHint) throws FrameSizes.TooLarge {
    int bodySize = value == null && marshaller == null ? 0 : marshaller.serializedSize(value);
    if (bodySize >= 0) {
      long frameSize = (long) HEADER_SIZE + metaLen + bodySize;
      if (frameSize > maxFrameSize) {
        throw tooLarge(type, frameSize, maxFrameSize, limitHint);
      }
    }
    return bodySize;
  }

  /** Writes one whole frame at {@code buf}'s writer index; returns the body size. */
  private static <T> int write(ByteBuf buf, byte type, int requestId, int methodId, int status, Metadata metadata,
      int metaLen, Marshaller<T> marshaller, T value, int bodySize, int maxFrameSize, String limitHint)
      throws Exception {
    int start = buf.writerIndex();
    writeHeader(buf, type, status, requestId, methodId, 0, metaLen, 0);
    if (metaLen > 0) {
      writeMetadata(buf, metadata);
    }
    int bodyStart = buf.writerIndex();
    if (marshaller != null) {
      marshaller.write(value, buf);
    }
    int actualBody = buf.writerIndex() - bodyStart;
    if (bodySize >= 0 && actualBody != bodySize) {
      throw new IllegalStateException(
          "marshaller announced " + bodySize + " bytes but wrote " + actualBody + " for " + value.getClass());
    }
    int frameSize = buf.writerIndex() - start;
    if (bodySize < 0 && frameSize > maxFrameSize) {
      throw tooLarge(type, frameSize, maxFrameSize, limitHint);
    }
    buf.setInt(start + OFF_LENGTH, frameSize - LENGTH_FIELD_SIZE);
    buf.setInt(start + OFF_BODY_LENGTH, actualBody);
    return actualBody;
  }

  private static FrameSizes.TooLarge tooLarge(byte type, long size, int max, String limitHint) {
    String what = type == TYPE_RESPONSE ? "response" : "request";
    return new FrameSizes.TooLarge(Status.RESOURCE_EXHAUSTED.withDescription(what + " of " + size
        + " bytes exceeds maxFrameSize " + max + " (raise " + limitHint + ".maxFrameSize on both sides)"));
  }

  /** Sets request id and timeout of a frame encoded by {@link #encodeMessage}. */
  static void patchRequest(ByteBuf frame, int requestId, long timeoutMillis) {
    frame.setInt(OFF_REQUEST_ID, requestId);
    frame.setInt(OFF_TIMEOUT, (int) Math.min(timeoutMillis, 0xFFFF_FFFFL));
  }

  /** A response that carries a non-OK status; the body is the UTF-8 description. */
  static ByteBuf encodeError(ByteBufAllocator alloc, int requestId, Status status, Metadata metadata,
      int maxFrameSize) {
    return encodeError(alloc, requestId, 0, status, metadata, maxFrameSize);
  }

  /**
   * The answer to a request the server refused before any handler saw it (a limit, or its shutdown): an error
   * response with {@link Protocol#FLAG_REFUSED}, so that the client may send the request to another server.
   */
  static ByteBuf encodeRefusal(ByteBufAllocator alloc, int requestId, Status status, int maxFrameSize) {
    return encodeError(alloc, requestId, FLAG_REFUSED, status, Metadata.EMPTY, maxFrameSize);
  }

  private static ByteBuf encodeError(ByteBufAllocator alloc, int requestId, int flags, Status status,
      Metadata metadata, int maxFrameSize) {
    String description = status.description() == null ? "" : status.description();
    int metaLen = metadataSize(metadata);
    if (HEADER_SIZE + metaLen > maxFrameSize) {
      metadata = Metadata.EMPTY; // the status matters more than the metadata
      metaLen = 0;
    }
    int max = Math.max(0, maxFrameSize - HEADER_SIZE - metaLen);
    byte[] bytes = description.getBytes(StandardCharsets.UTF_8);
    int len = Math.min(bytes.length, Math.min(max, 64 * 1024)); // descriptions are for humans: cap them
    ByteBuf buf = alloc.buffer(HEADER_SIZE + metaLen + len);
    writeHeader(buf, TYPE_RESPONSE, flags, status.code().value(), requestId, 0, 0, metaLen, len);
    if (metaLen > 0) {
      writeMetadata(buf, metadata);
    }
    buf.writeBytes(bytes, 0, len);
    return buf;
  }

  static ByteBuf encodeError(ByteBufAllocator alloc, int requestId, Status status, int maxFrameSize) {
    return encodeError(alloc, requestId, status, Metadata.EMPTY, maxFrameSize);
  }

  /** A frame with a header only: ping, pong, goaway, cancel. */
  static ByteBuf encodeControl(ByteBufAllocator alloc, byte type, int requestId) {
    ByteBuf buf = alloc.buffer(HEADER_SIZE);
    writeHeader(buf, type, 0, requestId, 0, 0, 0, 0);
    return buf;
  }

  /** A CANCEL frame for {@code requestId}, its status saying why (DEADLINE_EXCEEDED or CANCELLED). */
  static ByteBuf encodeCancel(ByteBufAllocator alloc, int requestId, Status.Code why) {
    ByteBuf buf = alloc.buffer(HEADER_SIZE);
    writeHeader(buf, Protocol.TYPE_CANCEL, why.value(), requestId, 0, 0, 0, 0);
    return buf;
  }

  /**
   * A GOAWAY frame (docs/protocol.md, "GOAWAY"): with {@code refusesLater} (a graceful shutdown), status
   * UNAVAILABLE and {@code lastRequestId}, the last request the server took, after which it refuses every
   * request unread; without it (a drain that answers every call that arrives), status 0 and id 0.
   */
  static ByteBuf encodeGoaway(ByteBufAllocator alloc, int lastRequestId, boolean refusesLater) {
    ByteBuf buf = alloc.buffer(HEADER_SIZE);
    writeHeader(buf, Protocol.TYPE_GOAWAY, refusesLater ? Status.Code.UNAVAILABLE.value() : 0,
        refusesLater ? lastRequestId : 0, 0, 0, 0, 0);
    return buf;
  }

  /**
   * A SETTINGS frame: {@code settings} holds (id, value) pairs, each written as a 6-byte entry (u16 id, u32
   * value), in the order given.
   */
  static ByteBuf encodeSettings(ByteBufAllocator alloc, int... settings) {
    if (settings.length % 2 != 0) {
      throw new IllegalArgumentException("settings come in (id, value) pairs");
    }
    int bodyLen = settings.length / 2 * SETTINGS_ENTRY_SIZE;
    ByteBuf buf = alloc.buffer(HEADER_SIZE + bodyLen);
    writeHeader(buf, TYPE_SETTINGS, 0, 0, 0, 0, 0, bodyLen);
    for (int i = 0; i < settings.length; i += 2) {
      buf.writeShort(settings[i]);
      buf.writeInt(settings[i + 1]);
    }
    return buf;
  }

  private static void writeHeader(ByteBuf buf, byte type, int status, int requestId, int methodId,
      long timeoutMillis, int metaLen, int bodyLen) {
    writeHeader(buf, type, 0, status, requestId, methodId, timeoutMillis, metaLen, bodyLen);
  }

  private static void writeHeader(ByteBuf buf, byte type, int flags, int status, int requestId, int methodId,
      long timeoutMillis, int metaLen, int bodyLen) {
    buf.writeInt(MIN_LENGTH + metaLen + bodyLen);
    buf.writeShort(MAGIC);
    buf.writeByte(VERSION);
    buf.writeByte(type);
    buf.writeByte(flags);
    buf.writeByte(status);
    buf.writeShort(0); // reserved
    buf.writeInt(requestId);
    buf.writeInt(methodId);
    buf.writeInt((int) timeoutMillis);
    buf.writeInt(metaLen);
    buf.writeInt(bodyLen);
  }
}
