package io.petrel.rpc.internal.inprocess;

import io.petrel.rpc.spi.FrameSizes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.StringValue;
import io.netty.buffer.ByteBuf;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.Status;
import io.petrel.rpc.marshal.Marshallers;
import io.petrel.rpc.marshal.ProtobufMarshaller;
import org.junit.jupiter.api.Test;

class FramesTest {
  @Test
  void buffersAreTrackedByTheLeakDetector() {
    ByteBuf buf = Frames.ALLOC.heapBuffer(8);
    try {
      // Netty leaves unpooled heap buffers untracked; these must not be (the tests run at the paranoid level).
      assertThat(buf.getClass().getSimpleName()).contains("LeakAware");
      assertThat(buf.hasArray()).isTrue();
    } finally {
      buf.release();
    }
  }

  @Test
  void sizesAreCountedAsFramesOfTheWireProtocol() throws Exception {
    Metadata md = Metadata.of("x-test", "abc");
    assertThat(Frames.metadataSize(md)).isEqualTo(2 + 6 + 1 + 4 + 3);
    assertThat(Frames.metadataSize(Metadata.EMPTY)).isZero();
    ByteBuf body = Frames.encode("request", ProtobufMarshaller.of(StringValue.getDefaultInstance()),
        StringValue.of("hi"), 0, 64, "RpcClient.builder()");
    try {
      assertThat(body.readableBytes()).isEqualTo(StringValue.of("hi").getSerializedSize());
    } finally {
      body.release();
    }
    assertThatThrownBy(() -> Frames.encode("response", Marshallers.bytes(), new byte[40], 0, 64,
        "RpcServer.builder()"))
        .isInstanceOfSatisfying(FrameSizes.TooLarge.class, e -> {
          assertThat(e.status.code()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
          assertThat(e.status.description()).isEqualTo("response of 72 bytes exceeds maxFrameSize 64 (raise"
              + " RpcServer.builder().maxFrameSize on both sides)");
        });
    assertThatThrownBy(() -> Frames.checkMetadata(md, 10, "RpcClient.builder()"))
        .isInstanceOf(FrameSizes.TooLarge.class)
        .hasMessage("metadata of 16 bytes exceeds maxMetadataSize 10 (raise RpcClient.builder().maxMetadataSize)");
  }
}
