package io.petrel.rpc.transport.netty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.DefaultByteBufHolder;
import io.petrel.rpc.Metadata;

/**
 * A decoded frame: header fields, decoded metadata and the body as a retained slice. Whoever receives a Frame
 * owns it and must release it (the body) once the body is decoded or the frame is dropped.
 */
final class Frame extends DefaultByteBufHolder {
  final byte type;
  final byte flags;
  final int status;
  final int requestId;
  final int methodId;
  final long timeoutMillis;
  final Metadata metadata;
  /**
   * About what {@link #metadata} holds on the heap, decoded (entries, strings, arrays): far more than its bytes on
   * the wire when it has many small entries, so the server counts this, not the wire size, against its buffers.
   */
  final int metadataHeapBytes;

  Frame(byte type, byte flags, int status, int requestId, int methodId, long timeoutMillis, Metadata metadata,
      int metadataHeapBytes, ByteBuf body) {
    super(body);
    this.metadataHeapBytes = metadataHeapBytes;
    this.type = type;
    this.flags = flags;
    this.status = status;
    this.requestId = requestId;
    this.methodId = methodId;
    this.timeoutMillis = timeoutMillis;
    this.metadata = metadata;
  }

  ByteBuf body() {
    return content();
  }

  @Override
  public String toString() {
    return "Frame{" + Protocol.typeName(type) + ", id=" + Integer.toUnsignedString(requestId) + ", method=0x"
        + Integer.toHexString(methodId) + ", status=" + status + ", body=" + content().readableBytes() + "}";
  }
}
