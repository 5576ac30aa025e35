package io.petrel.rpc.marshal;

import com.google.protobuf.ExtensionRegistryLite;
import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import io.netty.buffer.ByteBuf;
import io.petrel.rpc.Marshaller;

/**
 * Marshals a protobuf message as its own bytes (the body a gRPC unary call carries, without gRPC's 5-byte
 * prefix). Direct frame buffers are coded through a per-thread scratch array (see {@link ProtoBuffers}).
 */
public final class ProtobufMarshaller<T extends MessageLite> implements Marshaller<T> {
  private final Parser<T> parser;
  private final T defaultInstance;
  private final ProtoBuffers.Decoder<T> decoder;

  private ProtobufMarshaller(T defaultInstance) {
    this.defaultInstance = defaultInstance;
    @SuppressWarnings("unchecked")
    Parser<T> p = (Parser<T>) defaultInstance.getParserForType();
    this.parser = p;
    this.decoder = in -> parser.parseFrom(in, ExtensionRegistryLite.getEmptyRegistry());
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
    ProtoBuffers.encode(out, value.getSerializedSize(), value);
  }

  @Override
  public T read(ByteBuf in) throws Exception {
    return ProtoBuffers.decode(in, decoder);
  }
}
