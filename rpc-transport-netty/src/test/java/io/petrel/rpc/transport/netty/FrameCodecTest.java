package io.petrel.rpc.transport.netty;

import io.petrel.rpc.spi.FrameSizes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.google.protobuf.StringValue;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.Status;
import io.petrel.rpc.marshal.ProtobufMarshaller;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class FrameCodecTest {
  private static final ByteBufAllocator ALLOC = ByteBufAllocator.DEFAULT;

  private static ByteBuf request(int requestId, String value, Metadata md) throws Exception {
    ByteBuf b = FrameEncoder.encodeMessage(ALLOC, Protocol.TYPE_REQUEST, 0, 0x1234, 0, md,
        ProtobufMarshaller.of(StringValue.getDefaultInstance()), StringValue.of(value), 1 << 20, 8192, "test");
    FrameEncoder.patchRequest(b, requestId, 1500);
    return b;
  }

  /** Feeds the bytes one at a time: every split point of the stream is exercised. */
  private static void feedByteByByte(EmbeddedChannel ch, ByteBuf stream) {
    try {
      while (stream.isReadable()) {
        ch.writeInbound(stream.readRetainedSlice(1));
      }
    } finally {
      stream.release();
    }
  }

  @Test
  void fragmentedFramesDecodeWithAllHeaderFields() throws Exception {
    EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(1 << 20, 8192));
    ByteBuf stream = Unpooled.buffer();
    ByteBuf a = request(7, "first", Metadata.of("k", "v").withBinary("b", new byte[] {9}));
    ByteBuf b = request(8, "second", Metadata.EMPTY);
    ByteBuf c = FrameEncoder.encodeError(ALLOC, 9, Status.NOT_FOUND.withDescription("nope"), 1 << 20);
    stream.writeBytes(a).writeBytes(b).writeBytes(c);
    a.release();
    b.release();
    c.release();
    feedByteByByte(ch, stream);

    Frame f1 = ch.readInbound();
    try {
      assertThat(f1.type).isEqualTo(Protocol.TYPE_REQUEST);
      assertThat(f1.requestId).isEqualTo(7);
      assertThat(f1.methodId).isEqualTo(0x1234);
      assertThat(f1.timeoutMillis).isEqualTo(1500);
      assertThat(f1.metadata.get("k")).isEqualTo("v");
      assertThat(f1.metadata.getBinary("b")).containsExactly(9);
      assertThat(ProtobufMarshaller.of(StringValue.getDefaultInstance()).read(f1.body()).getValue())
          .isEqualTo("first");
    } finally {
      f1.release();
    }
    Frame f2 = ch.readInbound();
    try {
      assertThat(f2.requestId).isEqualTo(8);
      assertThat(f2.metadata.isEmpty()).isTrue();
    } finally {
      f2.release();
    }
    Frame f3 = ch.readInbound();
    try {
      assertThat(f3.type).isEqualTo(Protocol.TYPE_RESPONSE);
      assertThat(f3.status).isEqualTo(Status.Code.NOT_FOUND.value());
      assertThat(f3.body().toString(StandardCharsets.UTF_8)).isEqualTo("nope");
    } finally {
      f3.release();
    }
    assertThat((Object) ch.readInbound()).isNull();
    assertFalse(ch.finish());
  }

  @Test
  void headerLayoutMatchesTheSpecification() throws Exception {
    ByteBuf b = request(0x01020304, "", Metadata.EMPTY);
    try {
      assertThat(b.getInt(0)).isEqualTo(b.readableBytes() - 4);
      assertThat(b.getUnsignedShort(4)).isEqualTo(0x5052);
      assertThat(b.getByte(6)).isEqualTo((byte) 1);
      assertThat(b.getByte(7)).isEqualTo(Protocol.TYPE_REQUEST);
      assertThat(b.getByte(8)).isZero();
      assertThat(b.getByte(9)).isZero();
      assertThat(b.getShort(10)).isZero();
      assertThat(b.getInt(12)).isEqualTo(0x01020304);
      assertThat(b.getInt(16)).isEqualTo(0x1234);
      assertThat(b.getInt(20)).isEqualTo(1500);
      assertThat(b.getInt(24)).isZero();
      assertThat(b.getInt(28)).isZero(); // StringValue("") encodes to nothing
      assertThat(b.readableBytes()).isEqualTo(32);
    } finally {
      b.release();
    }
  }

  /** The SETTINGS example of docs/protocol.md, byte for byte, and how the decoder hands it on. */
  @Test
  void settingsLayoutMatchesTheSpecification() {
    ByteBuf b = FrameEncoder.encodeSettings(ALLOC, Protocol.SETTING_MAX_CONCURRENT_CALLS, 1000,
        Protocol.SETTING_MAX_FRAME_SIZE, 8 * 1024 * 1024, Protocol.SETTING_MAX_METADATA_SIZE, 8192);
    assertThat(io.netty.buffer.ByteBufUtil.hexDump(b)).isEqualTo("0000002e" + "5052" + "01" + "08" + "00" + "00"
        + "0000" + "00000000" + "00000000" + "00000000" + "00000000" + "00000012"
        + "0001" + "000003e8" + "0002" + "00800000" + "0003" + "00002000");
    EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(1 << 20, 8192));
    ch.writeInbound(b);
    Frame f = ch.readInbound();
    try {
      assertThat(f.type).isEqualTo(Protocol.TYPE_SETTINGS);
      assertThat(f.requestId).isZero();
      assertThat(f.body().readableBytes()).isEqualTo(18);
      assertThat(f.body().getUnsignedShort(f.body().readerIndex() + 6)).isEqualTo(Protocol.SETTING_MAX_FRAME_SIZE);
      assertThat(f.body().getInt(f.body().readerIndex() + 8)).isEqualTo(8 * 1024 * 1024);
    } finally {
      f.release();
    }
    assertFalse(ch.finish());
  }

  @Test
  void goawayLayoutMatchesTheSpecification() {
    ByteBuf b = FrameEncoder.encodeGoaway(ALLOC, 7, true);
    assertThat(io.netty.buffer.ByteBufUtil.hexDump(b)).isEqualTo("0000001c" + "5052" + "01" + "06" + "00" + "0e"
        + "0000" + "00000007" + "00000000" + "00000000" + "00000000" + "00000000");
    ByteBuf drain = FrameEncoder.encodeGoaway(ALLOC, 7, false);
    EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(1 << 20, 8192));
    ch.writeInbound(b, drain);
    Frame f = ch.readInbound();
    Frame d = ch.readInbound();
    try {
      assertThat(f.type).isEqualTo(Protocol.TYPE_GOAWAY);
      assertThat(f.status).isEqualTo(14);
      assertThat(f.requestId).isEqualTo(7);
      assertThat(d.status).as("a drain GOAWAY, as every older server sends it").isZero();
      assertThat(d.requestId).isZero();
    } finally {
      f.release();
      d.release();
    }
    assertFalse(ch.finish());
  }

  @Test
  void refusalLayoutMatchesTheSpecification() {
    ByteBuf b = FrameEncoder.encodeRefusal(ALLOC, 9, io.petrel.rpc.Status.RESOURCE_EXHAUSTED.withDescription("full"),
        1 << 20);
    assertThat(io.netty.buffer.ByteBufUtil.hexDump(b)).isEqualTo("00000020" + "5052" + "01" + "02" + "04" + "08"
        + "0000" + "00000009" + "00000000" + "00000000" + "00000000" + "00000004" + "66756c6c");
    ByteBuf answer = FrameEncoder.encodeError(ALLOC, 10, io.petrel.rpc.Status.RESOURCE_EXHAUSTED.withDescription(
        "quota"), 1 << 20);
    EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(1 << 20, 8192));
    ch.writeInbound(b, answer);
    Frame f = ch.readInbound();
    Frame a = ch.readInbound();
    try {
      assertThat(f.flags).isEqualTo(Protocol.FLAG_REFUSED);
      assertThat(f.status).isEqualTo(8);
      assertThat(f.body().toString(java.nio.charset.StandardCharsets.UTF_8)).isEqualTo("full");
      assertThat(a.flags).as("an error answer, as every older server sends it").isZero();
      assertThat(a.status).isEqualTo(8);
    } finally {
      f.release();
      a.release();
    }
    assertFalse(ch.finish());
  }

  @Test
  void oversizeFrameIsAnnouncedAndSkippedWithoutBuffering() throws Exception {
    EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(1024, 8192));
    ByteBuf big = FrameEncoder.encodeMessage(ALLOC, Protocol.TYPE_REQUEST, 5, 1, 0, Metadata.EMPTY,
        io.petrel.rpc.marshal.Marshallers.bytes(), new byte[5000], 1 << 20, 8192, "test");
    ByteBuf small = request(6, "after", Metadata.EMPTY);
    ByteBuf stream = Unpooled.buffer().writeBytes(big).writeBytes(small);
    big.release();
    small.release();
    // In chunks of 700 bytes: the skipped region spans several reads.
    try {
      while (stream.isReadable()) {
        ch.writeInbound(stream.readRetainedSlice(Math.min(700, stream.readableBytes())));
      }
    } finally {
      stream.release();
    }
    OversizeFrame o = ch.readInbound();
    assertThat(o.requestId()).isEqualTo(5);
    assertThat(o.frameSize()).isEqualTo(5032);
    assertThat(o.limit()).isEqualTo(1024);
    Frame next = ch.readInbound();
    try {
      assertThat(next.requestId).isEqualTo(6);
    } finally {
      next.release();
    }
    assertFalse(ch.finish());
  }

  @Test
  void partialFramesReserveFromTheBudgetAndAFrameThatDoesNotFitIsSkipped() {
    BufferBudget budget = new BufferBudget(100_000);
    EmbeddedChannel a = new EmbeddedChannel(new FrameDecoder(1 << 20, 8192, budget));
    EmbeddedChannel b = new EmbeddedChannel(new FrameDecoder(1 << 20, 8192, budget));
    a.writeInbound(Unpooled.wrappedBuffer(RawPeer.header(Protocol.TYPE_REQUEST, 1, 5, 60_000), new byte[10]));
    assertThat((Object) a.readInbound()).isNull();
    assertThat(budget.used()).isEqualTo(60_032);
    b.writeInbound(Unpooled.wrappedBuffer(RawPeer.header(Protocol.TYPE_REQUEST, 2, 5, 60_000), new byte[10]));
    OversizeFrame refused = b.readInbound();
    assertThat(refused.what()).isEqualTo("buffer");
    assertThat(refused.requestId()).isEqualTo(2);
    assertThat(budget.used()).isEqualTo(60_032);
    // The rest of a's frame arrives: the frame comes out and its reservation is returned.
    a.writeInbound(Unpooled.wrappedBuffer(new byte[59_990]));
    Frame f = a.readInbound();
    assertThat(f.body().readableBytes()).isEqualTo(60_000);
    f.release();
    assertThat(budget.used()).isZero();
    // A partial frame's reservation is returned when its connection closes.
    a.writeInbound(Unpooled.wrappedBuffer(RawPeer.header(Protocol.TYPE_REQUEST, 3, 5, 60_000)));
    assertThat(budget.used()).isEqualTo(60_032);
    a.finishAndReleaseAll();
    b.finishAndReleaseAll();
    assertThat(budget.used()).isZero();
  }

  @Test
  void badMagicIsAProtocolViolation() {
    EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(1024, 8192));
    assertThatThrownBy(() -> ch.writeInbound(Unpooled.wrappedBuffer(new byte[] {0, 0, 0, 28, 'G', 'E', 1, 1})))
        .isInstanceOf(DecoderException.class).hasCauseInstanceOf(ProtocolException.class)
        .hasMessageContaining("bad magic 0x4745").hasMessageNotContaining("TLS");
    // Everything after a violation is discarded.
    ch.writeInbound(Unpooled.wrappedBuffer(new byte[64]));
    assertThat((Object) ch.readInbound()).isNull();
    assertFalse(ch.finish());
  }

  /** A TLS record where a frame should be (one side configured for TLS, the other not) is named as such. */
  @Test
  void tlsBytesWhereAFrameShouldBeAreNamedInTheViolation() {
    EmbeddedChannel clientHello = new EmbeddedChannel(new FrameDecoder(1024, 8192));
    // A TLS 1.2/1.3 ClientHello record: handshake (22), version 3.1, length 512, then message type 1.
    assertThatThrownBy(() -> clientHello.writeInbound(Unpooled.wrappedBuffer(
        new byte[] {22, 3, 1, 2, 0, 1, 0, 1, (byte) 0xfc, 3, 3})))
        .isInstanceOf(DecoderException.class).hasCauseInstanceOf(ProtocolException.class)
        .hasMessageContaining("does not speak the Petrel protocol")
        .hasMessageContaining("its bytes look like TLS: one side uses TLS and the other does not");
    assertFalse(clientHello.finish());
    EmbeddedChannel alert = new EmbeddedChannel(new FrameDecoder(1024, 8192));
    // A TLS alert record (21), version 3.3, as a TLS server may answer a plaintext client.
    assertThatThrownBy(() -> alert.writeInbound(Unpooled.wrappedBuffer(new byte[] {21, 3, 3, 0, 2, 2, 70})))
        .hasMessageContaining("look like TLS");
    assertFalse(alert.finish());
  }

  @Test
  void inconsistentLengthsAreAProtocolViolation() {
    EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(1024, 8192));
    ByteBuf b = Unpooled.buffer(32);
    b.writeInt(28 + 10).writeShort(0x5052).writeByte(1).writeByte(1).writeInt(0).writeInt(1).writeInt(1)
        .writeInt(0).writeInt(0).writeInt(3); // body says 3, length says 10
    assertThatThrownBy(() -> ch.writeInbound(b)).hasCauseInstanceOf(ProtocolException.class)
        .hasMessageContaining("does not match");
    assertFalse(ch.finish());
  }

  @Test
  void oversizeMetadataIsRefusedBeforeSending() {
    Metadata md = Metadata.of("k", "x".repeat(10_000));
    assertThatThrownBy(() -> FrameEncoder.encodeMessage(ALLOC, Protocol.TYPE_REQUEST, 0, 1, 0, md,
        ProtobufMarshaller.of(StringValue.getDefaultInstance()), StringValue.of(""), 1 << 20, 8192,
        "RpcClient.builder()"))
        .isInstanceOf(FrameSizes.TooLarge.class)
        .hasMessageContaining("exceeds maxMetadataSize 8192");
  }
  @Test
  void appendedFramesFollowEachOtherAndAFailedAppendLeavesTheBufferAsItWas() throws Exception {
    ProtobufMarshaller<StringValue> m = ProtobufMarshaller.of(StringValue.getDefaultInstance());
    ByteBuf batch = Unpooled.buffer(64);
    try {
      int[] reserved = new int[2];
      FrameEncoder.Output out = size -> {
        reserved[0]++;
        reserved[1] = size;
        return batch;
      };
      int body = FrameEncoder.appendMessage(out, Protocol.TYPE_RESPONSE, 5, 0, 0, Metadata.EMPTY, m,
          StringValue.of("one"), 1 << 20, 8192, "test");
      assertThat(body).isEqualTo(5);
      assertThat(reserved[1]).isEqualTo(Protocol.HEADER_SIZE + 5); // the size is known before writing
      int afterFirst = batch.writerIndex();
      FrameEncoder.appendMessage(out, Protocol.TYPE_RESPONSE, 6, 0, 0, Metadata.of("k", "v"), m,
          StringValue.of("x".repeat(100)), 1 << 20, 8192, "test"); // grows the buffer
      int afterSecond = batch.writerIndex();
      assertThatThrownBy(() -> FrameEncoder.appendMessage(out, Protocol.TYPE_RESPONSE, 7, 0, 0, Metadata.EMPTY,
          m, StringValue.of("y".repeat(2000)), 1024, 8192, "RpcServer.builder()"))
          .isInstanceOf(FrameSizes.TooLarge.class).hasMessageContaining("exceeds maxFrameSize 1024");
      io.petrel.rpc.Marshaller<StringValue> liar = new io.petrel.rpc.Marshaller<>() {
        @Override
        public int serializedSize(StringValue value) {
          return 3;
        }

        @Override
        public void write(StringValue value, ByteBuf buf) throws Exception {
          m.write(value, buf);
        }

        @Override
        public StringValue read(ByteBuf buf) throws Exception {
          return m.read(buf);
        }
      };
      assertThatThrownBy(() -> FrameEncoder.appendMessage(out, Protocol.TYPE_RESPONSE, 8, 0, 0, Metadata.EMPTY,
          liar, StringValue.of("longer than three"), 1 << 20, 8192, "test"))
          .isInstanceOf(IllegalStateException.class).hasMessageContaining("announced 3 bytes");
      assertThat(batch.writerIndex()).isEqualTo(afterSecond);

      EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(1 << 20, 8192));
      ch.writeInbound(batch.retain());
      Frame f1 = ch.readInbound();
      Frame f2 = ch.readInbound();
      try {
        assertThat(f1.requestId).isEqualTo(5);
        assertThat(m.read(f1.body()).getValue()).isEqualTo("one");
        assertThat(f2.requestId).isEqualTo(6);
        assertThat(f2.metadata.get("k")).isEqualTo("v");
        assertThat(m.read(f2.body()).getValue()).isEqualTo("x".repeat(100));
      } finally {
        f1.release();
        f2.release();
      }
      assertThat((Object) ch.readInbound()).isNull();
      assertFalse(ch.finish());
      assertThat(afterFirst).isEqualTo(Protocol.HEADER_SIZE + 5);
    } finally {
      batch.release();
    }
  }
}
