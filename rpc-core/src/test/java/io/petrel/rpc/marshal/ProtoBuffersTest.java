package io.petrel.rpc.marshal;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import com.google.protobuf.BytesValue;
import com.google.protobuf.StringValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

/** The scratch-array path for direct buffers: same bytes as the plain path, and no value aliases the array. */
class ProtoBuffersTest {
  private static final ProtobufMarshaller<BytesValue> BYTES = ProtobufMarshaller.of(BytesValue.getDefaultInstance());
  private static final ProtobufMarshaller<StringValue> STRING = ProtobufMarshaller.of(StringValue.getDefaultInstance());

  private static ByteBuf direct(ProtobufMarshaller<BytesValue> m, BytesValue v) throws Exception {
    ByteBuf buf = Unpooled.directBuffer();
    m.write(v, buf);
    return buf;
  }

  @Test
  void directAndHeapBuffersGetTheSameBytesAsProtobufItself() throws Exception {
    Struct message = Struct.newBuilder()
        .putFields("name", Value.newBuilder().setStringValue("pétrel 海燕").build())
        .putFields("n", Value.newBuilder().setNumberValue(42.5).build())
        .build();
    ProtobufMarshaller<Struct> m = ProtobufMarshaller.of(Struct.getDefaultInstance());
    ByteBuf direct = Unpooled.directBuffer();
    ByteBuf heap = Unpooled.buffer();
    try {
      direct.writeByte(7); // the body does not start at index 0 of the frame
      m.write(message, direct);
      m.write(message, heap);
      assertThat(ByteBufUtil.getBytes(direct, 1, direct.readableBytes() - 1)).isEqualTo(message.toByteArray());
      assertThat(ByteBufUtil.getBytes(heap)).isEqualTo(message.toByteArray());
      direct.skipBytes(1);
      assertThat(m.read(direct)).isEqualTo(message);
      assertThat(m.read(heap)).isEqualTo(message);
    } finally {
      direct.release();
      heap.release();
    }
  }

  @Test
  void aDecodedValueDoesNotChangeWhenTheScratchArrayIsReused() throws Exception {
    ByteBuf first = direct(BYTES, BytesValue.of(ByteString.copyFromUtf8("first value, kept")));
    ByteBuf second = direct(BYTES, BytesValue.of(ByteString.copyFromUtf8("SECOND VALUE, OVERWRITES")));
    try {
      BytesValue a = BYTES.read(first);
      BytesValue b = BYTES.read(second);
      assertThat(a.getValue().toStringUtf8()).isEqualTo("first value, kept");
      assertThat(b.getValue().toStringUtf8()).isEqualTo("SECOND VALUE, OVERWRITES");
    } finally {
      first.release();
      second.release();
    }
  }

  @Test
  void messagesLargerThanTheScratchLimitRoundTrip() throws Exception {
    String big = "x".repeat(ProtoBuffers.SCRATCH_LIMIT + 1000);
    ByteBuf buf = Unpooled.directBuffer();
    try {
      STRING.write(StringValue.of(big), buf);
      assertThat(buf.readableBytes()).isGreaterThan(ProtoBuffers.SCRATCH_LIMIT);
      assertThat(STRING.read(buf).getValue()).isEqualTo(big);
    } finally {
      buf.release();
    }
  }

  @Test
  void aDecoderThatDecodesAnotherBufferOnTheSameThreadGetsBothRight() throws Exception {
    ByteBuf outer = direct(BYTES, BytesValue.of(ByteString.copyFromUtf8("outer")));
    ByteBuf inner = direct(BYTES, BytesValue.of(ByteString.copyFromUtf8("inner, longer than outer")));
    try {
      String[] got = ProtoBuffers.decode(outer, in -> {
        String innerValue = BYTES.read(inner).getValue().toStringUtf8(); // while the outer input is in use
        String outerValue = BytesValue.parseFrom(in).getValue().toStringUtf8();
        return new String[] {outerValue, innerValue};
      });
      assertThat(got).containsExactly("outer", "inner, longer than outer");
    } finally {
      outer.release();
      inner.release();
    }
  }

  @Test
  void anEmptyBodyIsTheDefaultInstance() throws Exception {
    ByteBuf empty = Unpooled.directBuffer(0);
    try {
      assertThat(STRING.read(empty)).isEqualTo(StringValue.getDefaultInstance());
    } finally {
      empty.release();
    }
  }
}
