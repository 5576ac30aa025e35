package io.petrel.rpc.transport.netty;

import com.google.protobuf.StringValue;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.MethodType;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.marshal.ArgsMarshaller;
import io.petrel.rpc.marshal.FieldCodecs;
import io.petrel.rpc.marshal.Marshallers;
import io.petrel.rpc.marshal.ProtobufMarshaller;
import io.petrel.rpc.marshal.ValueMarshaller;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A hand-written service used by the transport tests: descriptors as generated code would declare them. */
final class TestService {
  static final String NAME = "test.Echo";

  /** A unary method of {@code service} taking and answering a protobuf StringValue (for tests' own services). */
  static MethodDescriptor<StringValue, StringValue> textMethod(String service, String name) {
    return MethodDescriptor.<StringValue, StringValue>newBuilder().serviceName(service).methodName(name)
        .requestMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
        .responseMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance())).build();
  }

  static final MethodDescriptor<StringValue, StringValue> ECHO = MethodDescriptor.<StringValue, StringValue>newBuilder()
      .serviceName(NAME).methodName("echo")
      .requestMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
      .responseMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
      .build();

  static final MethodDescriptor<Object[], Integer> ADD = MethodDescriptor.<Object[], Integer>newBuilder()
      .serviceName(NAME).methodName("add")
      .requestMarshaller(ArgsMarshaller.of(FieldCodecs.INT32, FieldCodecs.INT32))
      .responseMarshaller(ValueMarshaller.of(FieldCodecs.INT32))
      .build();

  static final MethodDescriptor<byte[], byte[]> BYTES = MethodDescriptor.<byte[], byte[]>newBuilder()
      .serviceName(NAME).methodName("bytes")
      .requestMarshaller(Marshallers.bytes()).responseMarshaller(Marshallers.bytes())
      .build();

  /** Returns a body of the requested size (the request is a 4-byte int). */
  static final MethodDescriptor<Object[], byte[]> BIG_RESPONSE = MethodDescriptor.<Object[], byte[]>newBuilder()
      .serviceName(NAME).methodName("bigResponse")
      .requestMarshaller(ArgsMarshaller.of(FieldCodecs.INT32)).responseMarshaller(Marshallers.bytes())
      .build();

  /** Blocks until the test opens {@link #gate}; returns the request. */
  static final MethodDescriptor<StringValue, StringValue> BLOCK = MethodDescriptor.<StringValue, StringValue>newBuilder()
      .serviceName(NAME).methodName("block")
      .requestMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
      .responseMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
      .build();

  static final MethodDescriptor<StringValue, StringValue> FAIL = MethodDescriptor.<StringValue, StringValue>newBuilder()
      .serviceName(NAME).methodName("fail")
      .requestMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
      .responseMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
      .build();

  static final MethodDescriptor<StringValue, StringValue> ASYNC_ECHO =
      MethodDescriptor.<StringValue, StringValue>newBuilder()
          .serviceName(NAME).methodName("asyncEcho")
          .requestMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
          .responseMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
          .build();

  /** Returns the request metadata value of key "x-test". */
  static final MethodDescriptor<StringValue, StringValue> META = MethodDescriptor.<StringValue, StringValue>newBuilder()
      .serviceName(NAME).methodName("meta")
      .requestMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
      .responseMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
      .build();

  static final MethodDescriptor<StringValue, Void> LOG = MethodDescriptor.<StringValue, Void>newBuilder()
      .serviceName(NAME).methodName("log").type(MethodType.ONEWAY)
      .requestMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
      .build();

  /** Registered nowhere: the server answers UNIMPLEMENTED. */
  static final MethodDescriptor<StringValue, StringValue> MISSING = MethodDescriptor.<StringValue, StringValue>newBuilder()
      .serviceName(NAME).methodName("missing")
      .requestMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
      .responseMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
      .build();

  final BlockingQueue<String> logged = new LinkedBlockingQueue<>();
  final CountDownLatch gate = new CountDownLatch(1);
  /** Counted down each time a BLOCK call has started running. */
  final BlockingQueue<String> blockStarted = new LinkedBlockingQueue<>();

  ServiceDefinition definition() {
    return ServiceDefinition.builder(NAME)
        .unary(ECHO, req -> req)
        .unary(ADD, args -> (Integer) args[0] + (Integer) args[1])
        .unary(BYTES, b -> b)
        .unary(BIG_RESPONSE, args -> new byte[(Integer) args[0]])
        .unary(BLOCK, req -> {
          blockStarted.add(req.getValue());
          if (!gate.await(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException("test gate never opened");
          }
          return req;
        })
        .unary(FAIL, req -> {
          throw new IllegalStateException("boom: " + req.getValue());
        })
        .async(ASYNC_ECHO, req -> CompletableFuture.supplyAsync(() -> StringValue.of("async:" + req.getValue())))
        .unary(META, req -> StringValue.of(String.valueOf(ServerContext.current().metadata().get("x-test"))))
        .unary(LOG, req -> {
          logged.add(req.getValue());
          return null;
        })
        .build();
  }
}
