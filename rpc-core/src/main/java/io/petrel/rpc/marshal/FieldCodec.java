package io.petrel.rpc.marshal;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.CodedOutputStream;
import java.io.IOException;
import org.jspecify.annotations.Nullable;

/**
 * Encodes one value as one protobuf field (tag and payload), so that an argument list or a return value is a
 * protobuf message whose field {@code i} is argument {@code i}. Any protobuf library can read what these
 * write; see docs/codegen.md for the mapping of each Java type. Null values are not written (the field is
 * absent), and an absent field reads as {@link #absentValue()}.
 *
 * @param <T> the Java type (boxed for primitives)
 */
public interface FieldCodec<T> {

  /** The protobuf wire type of one occurrence (0 varint, 1 fixed64, 2 length-delimited, 5 fixed32). */
  int wireType();

  /** Bytes that {@link #write} produces for a non-null value, tag included. */
  int computeSize(int fieldNumber, T value);

  /** Writes tag and payload of a non-null value. */
  void write(CodedOutputStream out, int fieldNumber, T value) throws IOException;

  /**
   * Reads one occurrence whose tag has been consumed. {@code previous} is the value read so far for this field
   * (repeated fields accumulate; singular fields replace, the last occurrence wins).
   */
  T read(CodedInputStream in, int wireType, @Nullable T previous) throws IOException;

  /** The value of an absent field: null for reference types. */
  default @Nullable T absentValue() {
    return null;
  }

  /** Applied after all fields were read, e.g. to freeze an accumulated list. */
  default T finish(T value) {
    return value;
  }
}
