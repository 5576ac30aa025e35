package io.petrel.rpc.marshal;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.WireFormat;
import io.netty.buffer.ByteBuf;
import io.petrel.rpc.Marshaller;
import org.jspecify.annotations.Nullable;

/**
 * Marshals one value as field 1 of a protobuf message: how return values that are not themselves a protobuf
 * message travel. A null value writes an empty body and reads back as the codec's absent value.
 */
public final class ValueMarshaller<T> implements Marshaller<T> {
  private final FieldCodec<T> codec;
  private final ProtoBuffers.Decoder<T> decoder = this::decode;

  private ValueMarshaller(FieldCodec<T> codec) {
    this.codec = codec;
  }

  public static <T> ValueMarshaller<T> of(FieldCodec<T> codec) {
    return new ValueMarshaller<>(codec);
  }

  @Override
  public int serializedSize(T value) {
    return value == null ? 0 : codec.computeSize(1, value);
  }

  @Override
  public void write(T value, ByteBuf out) throws Exception {
    if (value == null) {
      return;
    }
    ArgsMarshaller.writeFields(out, codec.computeSize(1, value), cos -> codec.write(cos, 1, value));
  }

  @Override
  public T read(ByteBuf in) throws Exception {
    return ProtoBuffers.decode(in, decoder);
  }

  // Null for an absent value of a reference type: T is then a nullable type (a Marshaller<@Nullable String>),
  // which NullAway's standard mode does not model.
  @SuppressWarnings("NullAway")
  private T decode(CodedInputStream cis) throws Exception {
    @Nullable T value = null;
    while (true) {
      int tag = cis.readTag();
      if (tag == 0) {
        break;
      }
      if (WireFormat.getTagFieldNumber(tag) == 1) {
        value = codec.read(cis, WireFormat.getTagWireType(tag), value);
      } else {
        cis.skipField(tag);
      }
    }
    return value == null ? codec.absentValue() : codec.finish(value);
  }
}
