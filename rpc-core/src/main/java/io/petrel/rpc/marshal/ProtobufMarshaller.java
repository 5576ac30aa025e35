package io.petrel.rpc.marshal;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.ExtensionRegistryLite;
import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import io.netty.buffer.ByteBuf;
import io.petrel.rpc.Marshaller;
import java.nio.ByteBuffer;

/**
 * Marshals a protobuf message as its own bytes (the body a gRPC unary call carries, without gRPC's 5-byte
 * prefix). Writes straight into the frame buffer and parses straight from it: no intermediate byte[].
 */
public final class ProtobufMarshaller<T extends MessageLite> implements Marshaller<T> {
  private final Parser<T> parser;
  private final T defaultInstance;

  private ProtobufMarshaller(T defaultInstance) {
    this.defaultInstance = defaultInstance;
    @SuppressWarnings("unchecked")
    Parser<T> p = (Parser<T>) defaultInstance.getParserForType();
    this.parser = p;
  }

  /** The marshaller of a message type, e.g. {@code ProtobufMarshaller.of(HelloRequest.getDefaultInstance())}. */
  public static <T extends MessageLite> ProtobufMarshaller<T> of(T defaultInstance) {
    return new ProtobufMarshaller<>(defaultInstance);
  }

  public T defaultInstance() {
    return defaultInstance;
  }

  @Override
  public int serializedSize(T value) {
    return value.getSerializedSize();
  }

  @Override
  public void write(T value, ByteBuf out) throws Exception {
    int size = value.getSerializedSize();
    writeTo(value, size, out);
  }

  static void writeTo(MessageLite value, int size, ByteBuf out) throws java.io.IOException {
    out.ensureWritable(size);
    int index = out.writerIndex();
    CodedOutputStream cos;
    if (out.hasArray()) {
      cos = CodedOutputStream.newInstance(out.array(), out.arrayOffset() + index, size);
    } else {
      cos = CodedOutputStream.newInstance(out.nioBuffer(index, size));
    }
    value.writeTo(cos);
    cos.checkNoSpaceLeft();
    out.writerIndex(index + size);
  }

  @Override
  public T read(ByteBuf in) throws Exception {
    return parser.parseFrom(codedInput(in), ExtensionRegistryLite.getEmptyRegistry());
  }

  /** A protobuf input over the readable bytes, without copying when the buffer is one array or NIO buffer. */
  static CodedInputStream codedInput(ByteBuf in) {
    int len = in.readableBytes();
    if (len == 0) {
      return CodedInputStream.newInstance(new byte[0]);
    }
    if (in.hasArray()) {
      return CodedInputStream.newInstance(in.array(), in.arrayOffset() + in.readerIndex(), len);
    }
    if (in.nioBufferCount() == 1) {
      ByteBuffer nio = in.nioBuffer(in.readerIndex(), len);
      return CodedInputStream.newInstance(nio);
    }
    byte[] copy = new byte[len];
    in.getBytes(in.readerIndex(), copy);
    return CodedInputStream.newInstance(copy);
  }
}
