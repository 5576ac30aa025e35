package io.petrel.rpc.stub;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.StringValue;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.marshal.ArgsMarshaller;
import io.petrel.rpc.marshal.FieldCodecs;
import io.petrel.rpc.marshal.ProtobufMarshaller;
import io.petrel.rpc.marshal.ValueMarshaller;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

class StubHelpersTest {
  private static final MethodDescriptor<StringValue, StringValue> ECHO = MethodDescriptor.<StringValue, StringValue>newBuilder()
      .serviceName("demo.Echo")
      .methodName("echo")
      .requestMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
      .responseMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
      .build();

  @Test
  void primitiveCodecsWriteLikeTheBoxedOnesAndReadAnAbsentFieldAsZero() throws Exception {
    ArgsMarshaller primitives = ArgsMarshaller.of(PrimitiveCodecs.INT, PrimitiveCodecs.BOOLEAN, PrimitiveCodecs.CHAR);
    ArgsMarshaller boxes = ArgsMarshaller.of(FieldCodecs.INT32, FieldCodecs.BOOL, FieldCodecs.CHAR);
    Object[] args = {2, true, 'x'};
    // field 1 varint 2, field 2 varint 1, field 3 varint 0x78: what any protobuf library writes for these fields
    assertThat(encode(primitives, args)).isEqualTo(encode(boxes, args)).isEqualTo("080210011878");

    ByteBuf empty = Unpooled.buffer(0);
    try {
      assertThat(primitives.read(empty)).containsExactly(0, false, '\0');
      assertThat(boxes.read(empty.resetReaderIndex())).containsExactly(null, null, null);
    } finally {
      empty.release();
    }
    ByteBuf absentLong = Unpooled.buffer(0);
    try {
      assertThat(ValueMarshaller.of(PrimitiveCodecs.LONG).read(absentLong)).isZero();
      assertThat(ValueMarshaller.of(PrimitiveCodecs.DOUBLE).read(absentLong.resetReaderIndex())).isZero();
    } finally {
      absentLong.release();
    }
  }

  private static String encode(ArgsMarshaller m, Object[] args) throws Exception {
    ByteBuf buf = Unpooled.buffer();
    try {
      m.write(args, buf);
      return ByteBufUtil.hexDump(buf);
    } finally {
      buf.release();
    }
  }

  @Test
  void aNullMessageArgumentIsRejectedBeforeSendingNamingMethodAndParameter() {
    assertThat(ClientCalls.requireMessage(StringValue.of("a"), ECHO, "request")).isEqualTo(StringValue.of("a"));
    assertThatThrownBy(() -> ClientCalls.requireMessage(null, ECHO, "request"))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("demo.Echo/echo: argument 'request' is null; a protobuf message argument cannot be null"
            + " (pass its getDefaultInstance())");
  }

  @Test
  void aNullMessageResponseOrFutureBecomesAnInternalStatusNamingTheMethod() throws Exception {
    assertThatThrownBy(() -> ServerCalls.message(null, ECHO))
        .isInstanceOfSatisfying(StatusException.class, e -> {
          assertThat(e.code()).isEqualTo(Status.Code.INTERNAL);
          assertThat(e.status().description()).startsWith("demo.Echo/echo returned null");
        });
    assertThatThrownBy(() -> ServerCalls.future(null, ECHO))
        .isInstanceOfSatisfying(StatusException.class,
            e -> assertThat(e.status().description()).contains("returned a null CompletableFuture"));

    CompletionStage<Object> nullValue = ServerCalls.messageFuture(CompletableFuture.completedFuture(null), ECHO);
    assertThatThrownBy(() -> nullValue.toCompletableFuture().get())
        .isInstanceOf(ExecutionException.class)
        .cause().isInstanceOf(StatusException.class);
    assertThat(ServerCalls.messageFuture(CompletableFuture.completedFuture(StringValue.of("v")), ECHO)
        .toCompletableFuture().get()).isEqualTo(StringValue.of("v"));

    CompletionStage<Object> nullLong = ServerCalls.primitiveFuture(CompletableFuture.completedFuture(null), ECHO,
        long.class);
    assertThatThrownBy(() -> nullLong.toCompletableFuture().get())
        .isInstanceOf(ExecutionException.class)
        .cause().isInstanceOfSatisfying(StatusException.class, e -> {
          assertThat(e.code()).isEqualTo(Status.Code.INTERNAL);
          assertThat(e.status().description()).isEqualTo("demo.Echo/echo completed its future with null; its"
              + " response type long cannot be null (complete it with a value, or return Long in the interface"
              + " if null is meant to be a value)");
        });
    assertThat(ServerCalls.primitiveFuture(CompletableFuture.completedFuture(0), ECHO, int.class)
        .toCompletableFuture().get()).isEqualTo(0);
  }

  @Test
  void handlersOfObjectTypeAreAttachedToTypedDescriptors() throws Exception {
    var blocking = ServerCalls.blocking(ECHO, request -> request);
    assertThat(blocking.method()).isSameAs(ECHO);
    assertThat(blocking.isAsync()).isFalse();
    assertThat(blocking.handler().invoke(StringValue.of("x"))).isEqualTo(StringValue.of("x"));

    var async = ServerCalls.async(ECHO, request -> CompletableFuture.completedFuture(request));
    assertThat(async.isAsync()).isTrue();
    assertThat(async.asyncHandler().invoke(StringValue.of("y")).toCompletableFuture().get())
        .isEqualTo(StringValue.of("y"));
  }
}
