package io.petrel.rpc.stub;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.CodedOutputStream;
import io.petrel.rpc.marshal.FieldCodec;
import io.petrel.rpc.marshal.FieldCodecs;
import java.io.IOException;
import org.jspecify.annotations.Nullable;

/**
 * Codecs of primitive parameters and return values ({@code int}, not {@code Integer}). On the wire they are the
 * same as the boxed codecs of {@link FieldCodecs}; the difference is that an absent field reads as Java's
 * default value (0, false, '\0') instead of null, the way proto3 treats a field that a peer left out as zero.
 * Generated code uses them so that unboxing a primitive argument never throws.
 */
public final class PrimitiveCodecs {
  private PrimitiveCodecs() {}

  public static final FieldCodec<Integer> INT = withDefault(FieldCodecs.INT32, 0);
  public static final FieldCodec<Long> LONG = withDefault(FieldCodecs.INT64, 0L);
  public static final FieldCodec<Boolean> BOOLEAN = withDefault(FieldCodecs.BOOL, false);
  public static final FieldCodec<Float> FLOAT = withDefault(FieldCodecs.FLOAT, 0f);
  public static final FieldCodec<Double> DOUBLE = withDefault(FieldCodecs.DOUBLE, 0d);
  public static final FieldCodec<Byte> BYTE = withDefault(FieldCodecs.BYTE, (byte) 0);
  public static final FieldCodec<Short> SHORT = withDefault(FieldCodecs.SHORT, (short) 0);
  public static final FieldCodec<Character> CHAR = withDefault(FieldCodecs.CHAR, '\0');

  private static <T> FieldCodec<T> withDefault(FieldCodec<T> codec, T absent) {
    return new FieldCodec<>() {
      @Override
      public int wireType() {
        return codec.wireType();
      }

      @Override
      public int computeSize(int fieldNumber, T value) {
        return codec.computeSize(fieldNumber, value);
      }

      @Override
      public void write(CodedOutputStream out, int fieldNumber, T value) throws IOException {
        codec.write(out, fieldNumber, value);
      }

      @Override
      public T read(CodedInputStream in, int wireType, @Nullable T previous) throws IOException {
        return codec.read(in, wireType, previous);
      }

      @Override
      public T absentValue() {
        return absent;
      }
    };
  }
}
