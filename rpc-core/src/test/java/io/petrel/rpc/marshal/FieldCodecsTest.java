package io.petrel.rpc.marshal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.DescriptorProtos.Edition;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.NullValue;
import com.google.protobuf.StringValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.petrel.rpc.Marshaller;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FieldCodecsTest {
  enum Color { RED, GREEN, BLUE }

  private static <T> T roundTrip(Marshaller<T> m, T value) throws Exception {
    ByteBuf buf = Unpooled.directBuffer();
    try {
      m.write(value, buf);
      assertThat(buf.readableBytes()).as("serializedSize").isEqualTo(m.serializedSize(value));
      return m.read(buf);
    } finally {
      buf.release();
    }
  }

  @Test
  void scalarArgumentsRoundTripAsProtobufFields() throws Exception {
    ArgsMarshaller m = ArgsMarshaller.of(FieldCodecs.INT32, FieldCodecs.INT64, FieldCodecs.BOOL, FieldCodecs.FLOAT,
        FieldCodecs.DOUBLE, FieldCodecs.STRING, FieldCodecs.BYTES, FieldCodecs.BYTE, FieldCodecs.SHORT,
        FieldCodecs.CHAR, FieldCodecs.enumOf(Color.class));
    Object[] args = {-5, Long.MAX_VALUE, true, 1.5f, -2.25, "ünï", new byte[] {1, 2, 3}, (byte) -3, (short) 300,
        'é', Color.BLUE};
    Object[] back = roundTrip(m, args);
    assertThat(back).containsExactly(-5, Long.MAX_VALUE, true, 1.5f, -2.25, "ünï", new byte[] {1, 2, 3},
        (byte) -3, (short) 300, 'é', Color.BLUE);
  }

  @Test
  void aProtocEnumTravelsByItsNumberAndAnUnknownNumberHasAClearOutcome() throws Exception {
    // Edition (descriptor.proto, proto2: closed, no UNRECOGNIZED): EDITION_2023 is number 1000, not its ordinal.
    ArgsMarshaller m = ArgsMarshaller.of(FieldCodecs.protoEnumOf(Edition.class, Edition::forNumber),
        FieldCodecs.listOf(FieldCodecs.protoEnumOf(NullValue.class, NullValue::forNumber)));
    ByteBuf buf = Unpooled.buffer();
    try {
      m.write(new Object[] {Edition.EDITION_2023, List.of(NullValue.NULL_VALUE)}, buf);
      CodedInputStream in = CodedInputStream.newInstance(buf.nioBuffer());
      assertThat(in.readTag()).isEqualTo(1 << 3);
      // Not its position among the constants (its ordinal).
      assertThat(in.readEnum()).isEqualTo(1000).isNotEqualTo(List.of(Edition.values()).indexOf(Edition.EDITION_2023));
      assertThat(m.read(buf)).containsExactly(Edition.EDITION_2023, List.of(NullValue.NULL_VALUE));
    } finally {
      buf.release();
    }
    // A number the enum does not know: proto3 (NullValue) reads UNRECOGNIZED, proto2 (Edition) fails decoding.
    ArgsMarshaller numbers = ArgsMarshaller.of(FieldCodecs.INT32, FieldCodecs.listOf(FieldCodecs.INT32));
    ByteBuf unknown = Unpooled.buffer();
    try {
      numbers.write(new Object[] {1000, List.of(7)}, unknown);
      assertThat(m.read(unknown.duplicate())).containsExactly(Edition.EDITION_2023, List.of(NullValue.UNRECOGNIZED));
      unknown.clear();
      numbers.write(new Object[] {7, List.of()}, unknown);
      assertThatThrownBy(() -> m.read(unknown))
          .isInstanceOf(InvalidProtocolBufferException.class)
          .hasMessage("number 7 is not a constant of com.google.protobuf.DescriptorProtos$Edition");
    } finally {
      unknown.release();
    }
    assertThatThrownBy(() -> roundTrip(m, new Object[] {Edition.EDITION_2023, List.of(NullValue.UNRECOGNIZED)}))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void argumentsAreReadableByAnyProtobufParser() throws Exception {
    // Field 1 string, field 2 int32: check with protobuf's own reader.
    ArgsMarshaller m = ArgsMarshaller.of(FieldCodecs.STRING, FieldCodecs.INT32);
    ByteBuf buf = Unpooled.buffer();
    try {
      m.write(new Object[] {"hi", 150}, buf);
      byte[] bytes = new byte[buf.readableBytes()];
      buf.readBytes(bytes);
      assertThat(bytes).containsExactly(0x0a, 2, 'h', 'i', 0x10, (byte) 0x96, 0x01);
      CodedInputStream in = CodedInputStream.newInstance(bytes);
      assertThat(in.readTag()).isEqualTo(0x0a);
      assertThat(in.readString()).isEqualTo("hi");
    } finally {
      buf.release();
    }
  }

  @Test
  void nullArgumentsAreAbsentAndReadBackAsAbsentValues() throws Exception {
    ArgsMarshaller m = ArgsMarshaller.of(FieldCodecs.STRING, FieldCodecs.INT32,
        FieldCodecs.listOf(FieldCodecs.STRING), FieldCodecs.mapOf(FieldCodecs.INT64));
    Object[] back = roundTrip(m, new Object[] {null, null, null, null});
    assertThat(back[0]).isNull();
    assertThat(back[1]).isNull();
    assertThat(back[2]).isEqualTo(List.of());
    assertThat(back[3]).isEqualTo(Map.of());
  }

  @Test
  void collectionsAndMessagesRoundTrip() throws Exception {
    Map<String, Integer> map = new LinkedHashMap<>();
    map.put("a", 1);
    map.put("b", -2);
    Struct struct = Struct.newBuilder().putFields("x", Value.newBuilder().setNumberValue(3).build()).build();
    ArgsMarshaller m = ArgsMarshaller.of(FieldCodecs.listOf(FieldCodecs.INT32), FieldCodecs.listOf(FieldCodecs.STRING),
        FieldCodecs.mapOf(FieldCodecs.INT32), FieldCodecs.message(Struct.getDefaultInstance()),
        FieldCodecs.listOf(FieldCodecs.message(StringValue.getDefaultInstance())));
    Object[] back = roundTrip(m, new Object[] {List.of(1, -1, 300), List.of("x", "", "z"), map, struct,
        List.of(StringValue.of("m1"), StringValue.of("m2"))});
    assertThat(back[0]).isEqualTo(List.of(1, -1, 300));
    assertThat(back[1]).isEqualTo(List.of("x", "", "z"));
    assertThat(back[2]).isEqualTo(map);
    assertThat(back[3]).isEqualTo(struct);
    assertThat(back[4]).isEqualTo(List.of(StringValue.of("m1"), StringValue.of("m2")));
  }

  @Test
  void nullInsideACollectionIsRejectedWithAClearMessage() {
    ArgsMarshaller m = ArgsMarshaller.of(FieldCodecs.listOf(FieldCodecs.STRING));
    java.util.ArrayList<String> list = new java.util.ArrayList<>();
    list.add(null);
    assertThatThrownBy(() -> m.serializedSize(new Object[] {list}))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("null element");
  }

  @Test
  void returnValueRoundTripsAsField1() throws Exception {
    assertThat(roundTrip(ValueMarshaller.of(FieldCodecs.STRING), "r")).isEqualTo("r");
    assertThat(roundTrip(ValueMarshaller.of(FieldCodecs.INT32), null)).isNull();
    assertThat(roundTrip(ProtobufMarshaller.of(StringValue.getDefaultInstance()), StringValue.of("p")))
        .isEqualTo(StringValue.of("p"));
  }

  /** Found by MarshallerFuzzTest: such an entry used to read as a null value, which no handler expects. */
  @Test
  void mapEntryWithoutAValueReadsAsTheDefaultOfTheValueType() throws Exception {
    byte[] entryWithKeyOnly = {0x0a, 0x03, 0x0a, 0x01, 'k'}; // field 1: one entry {1: "k"}, no field 2
    assertThat(readValue(FieldCodecs.mapOf(FieldCodecs.INT64), entryWithKeyOnly)).isEqualTo(Map.of("k", 0L));
    assertThat(readValue(FieldCodecs.mapOf(FieldCodecs.STRING), entryWithKeyOnly)).isEqualTo(Map.of("k", ""));
    assertThat(readValue(FieldCodecs.mapOf(FieldCodecs.BOOL), entryWithKeyOnly)).isEqualTo(Map.of("k", false));
    assertThat(readValue(FieldCodecs.mapOf(FieldCodecs.DOUBLE), entryWithKeyOnly)).isEqualTo(Map.of("k", 0d));
    assertThat(readValue(FieldCodecs.mapOf(FieldCodecs.FLOAT), entryWithKeyOnly)).isEqualTo(Map.of("k", 0f));
    assertThat(readValue(FieldCodecs.mapOf(FieldCodecs.BYTES), entryWithKeyOnly).get("k")).isEmpty();
    assertThat(readValue(FieldCodecs.mapOf(FieldCodecs.enumOf(Color.class)), entryWithKeyOnly))
        .isEqualTo(Map.of("k", Color.RED));
    assertThat(readValue(FieldCodecs.mapOf(FieldCodecs.message(StringValue.getDefaultInstance())), entryWithKeyOnly))
        .isEqualTo(Map.of("k", StringValue.getDefaultInstance()));
    // An entry without a key has the key "": protobuf's default as well.
    assertThat(readValue(FieldCodecs.mapOf(FieldCodecs.INT64), new byte[] {0x0a, 0x02, 0x10, 0x05}))
        .isEqualTo(Map.of("", 5L));
  }

  private static <T> T readValue(FieldCodec<T> codec, byte[] body) throws Exception {
    ByteBuf buf = Unpooled.wrappedBuffer(body);
    try {
      return ValueMarshaller.of(codec).read(buf);
    } finally {
      buf.release();
    }
  }

  @Test
  void unknownEnumOrdinalFailsNamingTheEnum() throws Exception {
    ValueMarshaller<Integer> asInt = ValueMarshaller.of(FieldCodecs.INT32);
    ValueMarshaller<Color> asColor = ValueMarshaller.of(FieldCodecs.enumOf(Color.class));
    ByteBuf buf = Unpooled.buffer();
    try {
      asInt.write(7, buf);
      assertThatThrownBy(() -> asColor.read(buf)).hasMessageContaining("ordinal 7").hasMessageContaining("Color");
    } finally {
      buf.release();
    }
  }
}
