package io.petrel.rpc.marshal;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.ExtensionRegistryLite;
import com.google.protobuf.Internal;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import com.google.protobuf.WireFormat;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.IntFunction;
import org.jspecify.annotations.Nullable;

/**
 * The {@link FieldCodec}s of the types Petrel carries, with their protobuf equivalents:
 *
 * <pre>
 * boolean/Boolean     bool     (varint)          float/Float    float   (fixed32)
 * byte, short, char,  int32    (varint)          double/Double  double  (fixed64)
 * int and boxes                                  String         string  (UTF-8)
 * long/Long           int64    (varint)          byte[]         bytes
 * enum                int32    (the ordinal)     protobuf msg   embedded message
 * List&lt;T&gt;             repeated T (packed for numeric T; both forms accepted)
 * Map&lt;String, T&gt;      map&lt;string, T&gt;  (repeated entry {1: key, 2: value})
 * </pre>
 */
public final class FieldCodecs {
  private FieldCodecs() {}

  private static final int VARINT = WireFormat.WIRETYPE_VARINT;
  private static final int FIXED32 = WireFormat.WIRETYPE_FIXED32;
  private static final int FIXED64 = WireFormat.WIRETYPE_FIXED64;
  private static final int LEN = WireFormat.WIRETYPE_LENGTH_DELIMITED;

  static void checkWireType(int expected, int actual) throws IOException {
    if (expected != actual) {
      throw new InvalidProtocolBufferException("wire type " + actual + " where " + expected + " was expected");
    }
  }

  public static final FieldCodec<Integer> INT32 = new FieldCodec<>() {
    @Override public int wireType() { return VARINT; }
    @Override public int computeSize(int f, Integer v) { return CodedOutputStream.computeInt32Size(f, v); }
    @Override public void write(CodedOutputStream out, int f, Integer v) throws IOException { out.writeInt32(f, v); }
    @Override public Integer read(CodedInputStream in, int wt, @Nullable Integer prev) throws IOException {
      checkWireType(VARINT, wt);
      return in.readInt32();
    }
  };

  public static final FieldCodec<Long> INT64 = new FieldCodec<>() {
    @Override public int wireType() { return VARINT; }
    @Override public int computeSize(int f, Long v) { return CodedOutputStream.computeInt64Size(f, v); }
    @Override public void write(CodedOutputStream out, int f, Long v) throws IOException { out.writeInt64(f, v); }
    @Override public Long read(CodedInputStream in, int wt, @Nullable Long prev) throws IOException {
      checkWireType(VARINT, wt);
      return in.readInt64();
    }
  };

  public static final FieldCodec<Boolean> BOOL = new FieldCodec<>() {
    @Override public int wireType() { return VARINT; }
    @Override public int computeSize(int f, Boolean v) { return CodedOutputStream.computeBoolSize(f, v); }
    @Override public void write(CodedOutputStream out, int f, Boolean v) throws IOException { out.writeBool(f, v); }
    @Override public Boolean read(CodedInputStream in, int wt, @Nullable Boolean prev) throws IOException {
      checkWireType(VARINT, wt);
      return in.readBool();
    }
  };

  public static final FieldCodec<Float> FLOAT = new FieldCodec<>() {
    @Override public int wireType() { return FIXED32; }
    @Override public int computeSize(int f, Float v) { return CodedOutputStream.computeFloatSize(f, v); }
    @Override public void write(CodedOutputStream out, int f, Float v) throws IOException { out.writeFloat(f, v); }
    @Override public Float read(CodedInputStream in, int wt, @Nullable Float prev) throws IOException {
      checkWireType(FIXED32, wt);
      return in.readFloat();
    }
  };

  public static final FieldCodec<Double> DOUBLE = new FieldCodec<>() {
    @Override public int wireType() { return FIXED64; }
    @Override public int computeSize(int f, Double v) { return CodedOutputStream.computeDoubleSize(f, v); }
    @Override public void write(CodedOutputStream out, int f, Double v) throws IOException { out.writeDouble(f, v); }
    @Override public Double read(CodedInputStream in, int wt, @Nullable Double prev) throws IOException {
      checkWireType(FIXED64, wt);
      return in.readDouble();
    }
  };

  /** byte/Byte as int32 (range-checked on read). */
  public static final FieldCodec<Byte> BYTE = narrow(Byte.MIN_VALUE, Byte.MAX_VALUE, i -> (byte) (int) i, b -> (int) b);
  /** short/Short as int32 (range-checked on read). */
  public static final FieldCodec<Short> SHORT =
      narrow(Short.MIN_VALUE, Short.MAX_VALUE, i -> (short) (int) i, s -> (int) s);
  /** char/Character as int32 holding the UTF-16 code unit. */
  public static final FieldCodec<Character> CHAR =
      narrow(Character.MIN_VALUE, Character.MAX_VALUE, i -> (char) (int) i, c -> (int) c);

  private static <T> FieldCodec<T> narrow(
      int min, int max, java.util.function.Function<Integer, T> from, java.util.function.Function<T, Integer> to) {
    return new FieldCodec<>() {
      @Override public int wireType() { return VARINT; }
      @Override public int computeSize(int f, T v) { return CodedOutputStream.computeInt32Size(f, to.apply(v)); }
      @Override public void write(CodedOutputStream out, int f, T v) throws IOException {
        out.writeInt32(f, to.apply(v));
      }
      @Override public T read(CodedInputStream in, int wt, @Nullable T prev) throws IOException {
        checkWireType(VARINT, wt);
        int i = in.readInt32();
        if (i < min || i > max) {
          throw new InvalidProtocolBufferException("value " + i + " out of range " + min + ".." + max);
        }
        return from.apply(i);
      }
    };
  }

  public static final FieldCodec<String> STRING = new FieldCodec<>() {
    @Override public int wireType() { return LEN; }
    @Override public int computeSize(int f, String v) { return CodedOutputStream.computeStringSize(f, v); }
    @Override public void write(CodedOutputStream out, int f, String v) throws IOException { out.writeString(f, v); }
    @Override public String read(CodedInputStream in, int wt, @Nullable String prev) throws IOException {
      checkWireType(LEN, wt);
      return in.readStringRequireUtf8();
    }
  };

  public static final FieldCodec<byte[]> BYTES = new FieldCodec<>() {
    @Override public int wireType() { return LEN; }
    @Override public int computeSize(int f, byte[] v) { return CodedOutputStream.computeByteArraySize(f, v); }
    @Override public void write(CodedOutputStream out, int f, byte[] v) throws IOException { out.writeByteArray(f, v); }
    @Override public byte[] read(CodedInputStream in, int wt, byte @Nullable [] prev) throws IOException {
      checkWireType(LEN, wt);
      return in.readByteArray();
    }
  };

  /** An embedded protobuf message. */
  public static <M extends MessageLite> FieldCodec<M> message(M defaultInstance) {
    @SuppressWarnings("unchecked")
    Parser<M> parser = (Parser<M>) defaultInstance.getParserForType();
    return new FieldCodec<>() {
      @Override public int wireType() { return LEN; }
      @Override public int computeSize(int f, M v) { return CodedOutputStream.computeMessageSize(f, v); }
      @Override public void write(CodedOutputStream out, int f, M v) throws IOException { out.writeMessage(f, v); }
      @Override public M read(CodedInputStream in, int wt, @Nullable M prev) throws IOException {
        checkWireType(LEN, wt);
        return in.readMessage(parser, ExtensionRegistryLite.getEmptyRegistry());
      }
    };
  }

  /**
   * A protoc-generated enum by its number ({@code getNumber()} / {@code forNumber}), so that a peer that reads the
   * .proto agrees. A number the enum does not know reads as its {@code UNRECOGNIZED} constant (what protoc
   * generates for proto3 enums, and what protobuf-java's own getters return), or, for an enum without one
   * (proto2), fails decoding with a message naming the number and the enum. Writing {@code UNRECOGNIZED} fails
   * encoding: it has no number ({@code getNumber()} throws IllegalArgumentException).
   */
  public static <E extends Enum<E> & Internal.EnumLite> FieldCodec<E> protoEnumOf(Class<E> type,
      IntFunction<E> forNumber) {
    E unrecognized = null;
    for (E e : type.getEnumConstants()) {
      if (e.name().equals("UNRECOGNIZED")) {
        unrecognized = e;
      }
    }
    E unknown = unrecognized;
    return new FieldCodec<>() {
      @Override public int wireType() { return VARINT; }
      @Override public int computeSize(int f, E v) { return CodedOutputStream.computeEnumSize(f, v.getNumber()); }
      @Override public void write(CodedOutputStream out, int f, E v) throws IOException {
        out.writeEnum(f, v.getNumber());
      }
      @Override public E read(CodedInputStream in, int wt, @Nullable E prev) throws IOException {
        checkWireType(VARINT, wt);
        int n = in.readEnum();
        E e = forNumber.apply(n);
        if (e != null) {
          return e;
        }
        if (unknown != null) {
          return unknown;
        }
        throw new InvalidProtocolBufferException("number " + n + " is not a constant of " + type.getName());
      }
    };
  }

  /** An enum by ordinal. An unknown ordinal fails decoding with a message naming the enum. */
  public static <E extends Enum<E>> FieldCodec<E> enumOf(Class<E> type) {
    E[] values = type.getEnumConstants();
    return new FieldCodec<>() {
      @Override public int wireType() { return VARINT; }
      @Override public int computeSize(int f, E v) { return CodedOutputStream.computeInt32Size(f, v.ordinal()); }
      @Override public void write(CodedOutputStream out, int f, E v) throws IOException {
        out.writeInt32(f, v.ordinal());
      }
      @Override public E read(CodedInputStream in, int wt, @Nullable E prev) throws IOException {
        checkWireType(VARINT, wt);
        int o = in.readInt32();
        if (o < 0 || o >= values.length) {
          throw new InvalidProtocolBufferException(
              "ordinal " + o + " is not a constant of " + type.getName() + " (" + values.length + " constants)");
        }
        return values[o];
      }
    };
  }

  /**
   * A list as a repeated field. Numeric elements are written packed. Null elements cannot be carried and fail
   * encoding with {@link IllegalArgumentException}. A null and an empty list both write nothing, and an absent
   * field reads as an empty list.
   */
  public static <T> FieldCodec<List<T>> listOf(FieldCodec<T> element) {
    boolean packed = element.wireType() != LEN;
    return new FieldCodec<>() {
      @Override public int wireType() { return LEN; }

      private int payloadSize(List<T> v) {
        int size = 0;
        for (T e : v) {
          size += element.computeSize(1, nonNull(e)) - 1; // tag of field 1 takes one byte
        }
        return size;
      }

      @Override public int computeSize(int f, List<T> v) {
        if (v.isEmpty()) {
          return 0;
        }
        if (packed) {
          int p = payloadSize(v);
          return CodedOutputStream.computeTagSize(f) + CodedOutputStream.computeUInt32SizeNoTag(p) + p;
        }
        int size = 0;
        for (T e : v) {
          size += element.computeSize(f, nonNull(e));
        }
        return size;
      }

      @Override public void write(CodedOutputStream out, int f, List<T> v) throws IOException {
        if (v.isEmpty()) {
          return;
        }
        if (packed) {
          out.writeTag(f, LEN);
          out.writeUInt32NoTag(payloadSize(v));
          for (T e : v) {
            writeNoTag(out, element, e);
          }
        } else {
          for (T e : v) {
            element.write(out, f, nonNull(e));
          }
        }
      }

      @Override public List<T> read(CodedInputStream in, int wt, @Nullable List<T> prev) throws IOException {
        List<T> list = prev == null ? new ArrayList<>() : prev;
        if (packed && wt == LEN) {
          int limit = in.pushLimit(in.readRawVarint32());
          while (in.getBytesUntilLimit() > 0) {
            list.add(element.read(in, element.wireType(), null));
          }
          in.popLimit(limit);
        } else {
          list.add(element.read(in, wt, null));
        }
        return list;
      }

      @Override public List<T> absentValue() {
        return List.of();
      }

      @Override public List<T> finish(List<T> value) {
        return value == null ? List.of() : Collections.unmodifiableList(value);
      }
    };
  }

  /** Writes a packable element without its tag: its payload is what follows a tag of field 1. */
  private static <T> void writeNoTag(CodedOutputStream out, FieldCodec<T> element, T e) throws IOException {
    // Encode as field 1 into a scratch array, then copy all but the one-byte tag. Numeric payloads are small.
    int size = element.computeSize(1, nonNull(e));
    byte[] scratch = new byte[size];
    CodedOutputStream tmp = CodedOutputStream.newInstance(scratch);
    element.write(tmp, 1, e);
    out.writeRawBytes(scratch, 1, size - 1);
  }

  private static <T> T nonNull(T e) {
    if (e == null) {
      throw new IllegalArgumentException("a List or Map argument holds a null element; Petrel cannot carry nulls"
          + " inside collections (protobuf has no null): remove it or use an empty value");
    }
    return e;
  }

  /** A {@code Map<String, V>} as protobuf's {@code map<string, V>}; insertion order is kept on read. */
  public static <V> FieldCodec<Map<String, V>> mapOf(FieldCodec<V> value) {
    return new FieldCodec<>() {
      @Override public int wireType() { return LEN; }

      private int entrySize(String k, V v) {
        return CodedOutputStream.computeStringSize(1, Objects.requireNonNull(k, "null map key"))
            + value.computeSize(2, nonNull(v));
      }

      @Override public int computeSize(int f, Map<String, V> m) {
        int size = 0;
        for (Map.Entry<String, V> e : m.entrySet()) {
          int es = entrySize(e.getKey(), e.getValue());
          size += CodedOutputStream.computeTagSize(f) + CodedOutputStream.computeUInt32SizeNoTag(es) + es;
        }
        return size;
      }

      @Override public void write(CodedOutputStream out, int f, Map<String, V> m) throws IOException {
        for (Map.Entry<String, V> e : m.entrySet()) {
          out.writeTag(f, LEN);
          out.writeUInt32NoTag(entrySize(e.getKey(), e.getValue()));
          out.writeString(1, e.getKey());
          value.write(out, 2, e.getValue());
        }
      }

      @Override public Map<String, V> read(CodedInputStream in, int wt, @Nullable Map<String, V> prev)
          throws IOException {
        checkWireType(LEN, wt);
        Map<String, V> map = prev == null ? new LinkedHashMap<>() : prev;
        int limit = in.pushLimit(in.readRawVarint32());
        String k = "";
        V v = null;
        while (true) {
          int tag = in.readTag();
          if (tag == 0) {
            break;
          }
          int field = WireFormat.getTagFieldNumber(tag);
          if (field == 1) {
            checkWireType(LEN, WireFormat.getTagWireType(tag));
            k = in.readStringRequireUtf8();
          } else if (field == 2) {
            v = value.read(in, WireFormat.getTagWireType(tag), v);
          } else {
            in.skipField(tag);
          }
        }
        in.popLimit(limit);
        map.put(k, v == null ? defaultValue(value) : value.finish(v));
        return map;
      }

      @Override public Map<String, V> absentValue() {
        return Map.of();
      }

      @Override public Map<String, V> finish(Map<String, V> m) {
        return m == null ? Map.of() : Collections.unmodifiableMap(m);
      }
    };
  }

  /**
   * The value of a map entry that has none: protobuf's default of the type ("", 0, false, no bytes, the first
   * enum constant, an empty message, an empty list), which is what an encoder that leaves out default values
   * means. Never null: a map value cannot be null in Petrel.
   */
  private static <V> V defaultValue(FieldCodec<V> codec) throws IOException {
    V absent = codec.absentValue();
    if (absent != null) {
      return absent;
    }
    int wireType = codec.wireType();
    // A zero of the wire type: varint 0, length 0, or 4 or 8 zero bytes.
    byte[] zero = new byte[wireType == FIXED64 ? 8 : wireType == FIXED32 ? 4 : 1];
    return codec.finish(codec.read(CodedInputStream.newInstance(zero), wireType, null));
  }
}
