package io.petrel.rpc.marshal;


import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.ListValue;
import com.google.protobuf.StringValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import com.google.protobuf.WireFormat;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.petrel.rpc.Marshaller;
import io.petrel.rpc.marshal.MarshallerFuzzTest.Color;
import io.petrel.rpc.testing.SeedCorpus;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The seed corpus of {@link MarshallerFuzzTest}: valid bodies of each marshaller and malformed ones (huge and
 * negative length prefixes, truncated values, wrong wire types, invalid UTF-8, deep nesting, out-of-range
 * enums and narrow integers, map entries with a part missing). Files directly in the corpus directory are
 * replayed by every fuzz method, those in a method's directory by that method. {@code MarshallerFuzzTest}
 * checks that the committed files equal these; after a change, rewrite them from the module directory with
 * {@code ../mvnw -q exec:java -Dexec.mainClass=io.petrel.rpc.marshal.MarshallerSeeds -Dexec.classpathScope=test}
 * (after {@code test-compile}).
 */
public final class MarshallerSeeds {
  /** Resource directory of the corpus, relative to the package (Jazzer's convention). */
  static final String CORPUS = "MarshallerFuzzTestInputs";

  private MarshallerSeeds() {}

  static Map<String, byte[]> all() {
    try {
      return build();
    } catch (Exception e) {
      throw new IllegalStateException("cannot build the seeds", e);
    }
  }

  private static Map<String, byte[]> build() throws Exception {
    Map<String, byte[]> seeds = new LinkedHashMap<>();
    // Malformed for every marshaller (field 1 is a string, a list or a map in each of them).
    seeds.put("length-prefix-huge", SeedCorpus.concat(bytes(0x0a, 0xff, 0xff, 0xff, 0xff, 0x07), bytes('a', 'b', 'c')));
    seeds.put("length-prefix-negative", bytes(0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01));
    seeds.put("length-past-end", bytes(0x0a, 0x10, 'a', 'b'));
    seeds.put("varint-too-long", bytes(0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff));
    seeds.put("truncated-fixed64", bytes(0x09, 1, 2, 3));
    seeds.put("truncated-fixed32", bytes(0x0d, 1, 2));
    seeds.put("tag-field-zero", bytes(0x02, 0x00));
    seeds.put("end-group-without-start", bytes(0x0c));
    seeds.put("wire-type-6", bytes(0x0e, 0x00));
    byte[] groups = new byte[300];
    Arrays.fill(groups, (byte) 0x5b); // start group, field 11, nested 300 deep
    seeds.put("deep-groups", groups);
    seeds.put("invalid-utf8", bytes(0x0a, 0x02, 0xc3, 0x28));
    seeds.put("unknown-fields", proto(out -> {
      out.writeInt32(20, 1);
      out.writeString(21, "x");
      out.writeFixed32(22, 7);
      out.writeFixed64(23, 8);
      out.writeTag(24, WireFormat.WIRETYPE_START_GROUP);
      out.writeInt32(1, 1);
      out.writeTag(24, WireFormat.WIRETYPE_END_GROUP);
    }));

    String args = "args/";
    seeds.put(args + "valid", encode(MarshallerFuzzTest.ARGS,
        new Object[] {"héllo", -5, Long.MIN_VALUE, List.of("a", "", "ü"), new byte[] {1, 2, 3}}));
    seeds.put(args + "valid-zeros-and-nulls", encode(MarshallerFuzzTest.ARGS, new Object[] {null, 0, 0L, List.of(), null}));
    seeds.put(args + "int-as-string", proto(out -> out.writeString(2, "1")));
    seeds.put(args + "list-element-as-varint", proto(out -> out.writeInt32(4, 1)));
    seeds.put(args + "string-twice", proto(out -> {
      out.writeString(1, "first");
      out.writeString(1, "second");
    }));
    seeds.put(args + "bytes-past-end", bytes(0x2a, 0x10, 1, 2, 3));

    String more = "moreArgs/";
    Struct struct = Struct.newBuilder().putFields("n", Value.newBuilder().setNumberValue(1.5).build())
        .putFields("l", Value.newBuilder().setListValue(ListValue.newBuilder()
            .addValues(Value.newBuilder().setStringValue("s")).addValues(Value.newBuilder().setBoolValue(true)))
            .build())
        .build();
    Map<String, Long> longs = new LinkedHashMap<>();
    longs.put("a", 1L);
    longs.put("", -1L);
    seeds.put(more + "valid", encode(MarshallerFuzzTest.MORE_ARGS, new Object[] {List.of(1, -1, 300),
        List.of(0.5, Double.NaN), longs, Map.of("x", StringValue.of("y")), Color.GREEN, struct, true, 1.5f, (byte) -3,
        (short) 300, 'é', 42L, List.of(Color.RED, Color.BLUE)}));
    seeds.put(more + "valid-value-map", encode(MarshallerFuzzTest.VALUE, Map.of("k", "v")));
    seeds.put(more + "ints-unpacked", proto(out -> {
      out.writeInt32(1, 1);
      out.writeInt32(1, -2);
    }));
    seeds.put(more + "packed-ints-truncated", bytes(0x0a, 0x05, 0x01, 0x02));
    seeds.put(more + "packed-doubles-partial", bytes(0x12, 0x03, 1, 2, 3));
    seeds.put(more + "enum-out-of-range", proto(out -> out.writeInt32(5, 7)));
    seeds.put(more + "byte-out-of-range", proto(out -> out.writeInt32(9, 300)));
    seeds.put(more + "char-out-of-range", proto(out -> out.writeInt32(11, 70000)));
    seeds.put(more + "map-entry-without-value", proto(out -> out.writeBytes(3, bs(proto(e -> e.writeString(1, "k"))))));
    seeds.put(more + "map-entry-without-key", proto(out -> out.writeBytes(3, bs(proto(e -> e.writeInt64(2, 5))))));
    seeds.put(more + "message-map-entry-without-value",
        proto(out -> out.writeBytes(4, bs(proto(e -> e.writeString(1, "k"))))));
    seeds.put(more + "struct-nested-20", proto(out -> out.writeMessage(6, nested(20))));
    seeds.put(more + "struct-nested-60", proto(out -> out.writeMessage(6, nested(60))));

    String protobuf = "protobuf/";
    seeds.put(protobuf + "valid", StringValue.of("hello wörld").toByteArray());
    seeds.put(protobuf + "value-with-unknown-field", SeedCorpus.concat(StringValue.of("hi").toByteArray(), bytes(0x10, 0x01)));
    seeds.put(protobuf + "value-twice", SeedCorpus.concat(StringValue.of("a").toByteArray(), StringValue.of("b").toByteArray()));
    seeds.put(protobuf + "value-as-varint", bytes(0x08, 0x01));
    return seeds;
  }

  /** A Struct nested {@code depth} deep through a field "a" holding the next Struct. */
  private static Struct nested(int depth) {
    Struct s = Struct.getDefaultInstance();
    for (int i = 0; i < depth; i++) {
      s = Struct.newBuilder().putFields("a", Value.newBuilder().setStructValue(s).build()).build();
    }
    return s;
  }

  private static <T> byte[] encode(Marshaller<T> m, T value) throws Exception {
    ByteBuf b = Unpooled.buffer();
    try {
      m.write(value, b);
      return ByteBufUtil.getBytes(b);
    } finally {
      b.release();
    }
  }

  private interface Writer {
    void write(CodedOutputStream out) throws IOException;
  }

  private static byte[] proto(Writer w) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    CodedOutputStream out = CodedOutputStream.newInstance(bytes);
    w.write(out);
    out.flush();
    return bytes.toByteArray();
  }

  private static ByteString bs(byte[] b) {
    return ByteString.copyFrom(b);
  }

  private static byte[] bytes(int... values) {
    byte[] b = new byte[values.length];
    for (int i = 0; i < values.length; i++) {
      b[i] = (byte) values[i];
    }
    return b;
  }


  /** Writes the corpus under src/test/resources of the module (the working directory, or args[0]). */
  public static void main(String[] args) throws IOException {
    SeedCorpus.write(MarshallerSeeds.class, CORPUS, all(), args.length > 0 ? args[0] : ".");
  }
}
