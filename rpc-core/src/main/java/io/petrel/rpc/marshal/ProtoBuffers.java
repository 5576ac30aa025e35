package io.petrel.rpc.marshal;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.MessageLite;
import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.FastThreadLocal;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Protobuf encoding into, and decoding from, Netty buffers. Frame buffers are usually direct, and protobuf
 * handles direct memory slowly: its {@code CodedInputStream.newInstance(ByteBuffer)} copies a direct buffer
 * into a new array before parsing, and its NIO encoder writes byte by byte through {@code ByteBuffer.put}.
 * So messages up to {@link #SCRATCH_LIMIT} bytes go through a per-thread scratch array instead: one bulk
 * copy, the fast array coders, and no garbage. Parsing never aliases the scratch array (protobuf copies
 * bytes and strings out of its input unless aliasing is enabled), so a decoded value does not refer to it.
 */
final class ProtoBuffers {
  /** Larger messages get an array of their own; the scratch arrays never grow beyond this. */
  static final int SCRATCH_LIMIT = 64 * 1024;

  private static final byte[] EMPTY = new byte[0];

  private static final FastThreadLocal<Scratch> SCRATCH = new FastThreadLocal<>() {
    @Override
    protected Scratch initialValue() {
      return new Scratch();
    }
  };

  private ProtoBuffers() {}

  /** Decodes from a protobuf input; the input is valid only during the call. */
  @FunctionalInterface
  interface Decoder<T> {
    T decode(CodedInputStream in) throws Exception;
  }

  /** Encodes into a protobuf output. */
  @FunctionalInterface
  interface Encoder {
    void encode(CodedOutputStream out) throws Exception;
  }

  private static final class Scratch {
    byte[] read = EMPTY;
    byte[] write = EMPTY;
    boolean reading;
    boolean writing;
  }

  /** Decodes all readable bytes of {@code in} (without moving its reader index). */
  static <T> T decode(ByteBuf in, Decoder<T> decoder) throws Exception {
    int len = in.readableBytes();
    if (len == 0) {
      return decoder.decode(CodedInputStream.newInstance(EMPTY));
    }
    if (in.hasArray()) {
      return decoder.decode(CodedInputStream.newInstance(in.array(), in.arrayOffset() + in.readerIndex(), len));
    }
    Scratch s = len <= SCRATCH_LIMIT ? SCRATCH.get() : null;
    if (s == null || s.reading) { // too large, or a decoder decoding another buffer on this thread
      byte[] copy = new byte[len];
      in.getBytes(in.readerIndex(), copy);
      return decoder.decode(CodedInputStream.newInstance(copy));
    }
    if (s.read.length < len) {
      s.read = new byte[Math.min(SCRATCH_LIMIT, Math.max(len, 2 * s.read.length))];
    }
    byte[] a = s.read;
    in.getBytes(in.readerIndex(), a, 0, len);
    s.reading = true;
    try {
      return decoder.decode(CodedInputStream.newInstance(a, 0, len));
    } finally {
      s.reading = false;
    }
  }

  /** Appends exactly {@code size} bytes, the encoding of {@code message}, at the writer index of {@code out}. */
  static void encode(ByteBuf out, int size, MessageLite message) throws Exception {
    encode(out, size, message, null);
  }

  /** Appends exactly {@code size} bytes produced by {@code encoder} at the writer index of {@code out}. */
  static void encode(ByteBuf out, int size, Encoder encoder) throws Exception {
    encode(out, size, null, encoder);
  }

  /** One of {@code message} and {@code encoder} is null (no lambda is allocated for a message). */
  private static void encode(ByteBuf out, int size, @Nullable MessageLite message, @Nullable Encoder encoder)
      throws Exception {
    out.ensureWritable(size);
    int index = out.writerIndex();
    if (out.hasArray()) {
      write(CodedOutputStream.newInstance(out.array(), out.arrayOffset() + index, size), size, message, encoder);
      out.writerIndex(index + size);
      return;
    }
    Scratch s = size <= SCRATCH_LIMIT ? SCRATCH.get() : null;
    if (s == null || s.writing) {
      write(CodedOutputStream.newInstance(out.nioBuffer(index, size)), size, message, encoder);
      out.writerIndex(index + size);
      return;
    }
    s.writing = true;
    try {
      byte[] a = writeArray(s, size);
      write(CodedOutputStream.newInstance(a, 0, size), size, message, encoder);
      out.writeBytes(a, 0, size);
    } finally {
      s.writing = false;
    }
  }

  private static void write(CodedOutputStream cos, int size, @Nullable MessageLite message,
      @Nullable Encoder encoder) throws Exception {
    if (message != null) {
      message.writeTo(cos);
    } else {
      Objects.requireNonNull(encoder, "a message or an encoder").encode(cos);
    }
    cos.flush();
    if (cos.spaceLeft() != 0) {
      throw new IllegalStateException("encoder wrote " + (size - cos.spaceLeft()) + " of the " + size
          + " bytes it announced (was the message modified while being sent?)");
    }
  }

  private static byte[] writeArray(Scratch s, int size) {
    if (s.write.length < size) {
      s.write = new byte[Math.min(SCRATCH_LIMIT, Math.max(size, 2 * s.write.length))];
    }
    return s.write;
  }
}
