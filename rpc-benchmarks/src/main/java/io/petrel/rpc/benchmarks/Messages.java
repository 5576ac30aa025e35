package io.petrel.rpc.benchmarks;

import com.google.protobuf.ByteString;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.benchmarks.proto.BenchmarkMessage;
import io.petrel.rpc.marshal.Marshallers;
import io.petrel.rpc.marshal.ProtobufMarshaller;

/** The benchmark payloads and the method descriptors of the Petrel benchmark service. */
public final class Messages {
  /** The service name shared by Petrel and gRPC-java ("bench.Benchmark", as in the .proto file). */
  public static final String SERVICE = "bench.Benchmark";

  /** BenchmarkMessage in, BenchmarkMessage out (field1 = "OK", field2 = 100). */
  public static final MethodDescriptor<BenchmarkMessage, BenchmarkMessage> ECHO =
      MethodDescriptor.<BenchmarkMessage, BenchmarkMessage>newBuilder()
          .serviceName(SERVICE)
          .methodName("Echo")
          .requestMarshaller(ProtobufMarshaller.of(BenchmarkMessage.getDefaultInstance()))
          .responseMarshaller(ProtobufMarshaller.of(BenchmarkMessage.getDefaultInstance()))
          .build();

  /** An opaque body echoed unchanged. */
  public static final MethodDescriptor<byte[], byte[]> ECHO_BYTES =
      MethodDescriptor.<byte[], byte[]>newBuilder()
          .serviceName(SERVICE)
          .methodName("EchoBytes")
          .requestMarshaller(Marshallers.bytes())
          .responseMarshaller(Marshallers.bytes())
          .build();

  /**
   * Stores an object in the server's in-memory store (the Tarantool client seed): the request is an 8-byte
   * big-endian key followed by the object; the reply is empty.
   */
  public static final MethodDescriptor<byte[], byte[]> STORE_PUT = bytesMethod("StorePut");

  /** The number of objects in the server's store, as an 8-byte big-endian long (the request is empty). */
  public static final MethodDescriptor<byte[], byte[]> STORE_SIZE = bytesMethod("StoreSize");

  /** Empties the server's store; the reply is empty. */
  public static final MethodDescriptor<byte[], byte[]> STORE_CLEAR = bytesMethod("StoreClear");

  /** The tRPC-Go seed's echo: any request (122 bytes there), answered with {@link #HELLO_REPLY} (27 bytes). */
  public static final MethodDescriptor<byte[], byte[]> HELLO = bytesMethod("Hello");

  /** The tRPC-Go seed's reply body: 27 bytes. */
  static final byte[] HELLO_REPLY = "hello from a Petrel server!".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

  private static MethodDescriptor<byte[], byte[]> bytesMethod(String name) {
    return MethodDescriptor.<byte[], byte[]>newBuilder()
        .serviceName(SERVICE)
        .methodName(name)
        .requestMarshaller(Marshallers.bytes())
        .responseMarshaller(Marshallers.bytes())
        .build();
  }

  /** The sentence the rpcx benchmark puts in every string field (18 CJK characters, 54 bytes in UTF-8). */
  static final String SENTENCE = "许多往事在眼前一幕一幕，变的那麼模糊";

  private static final BenchmarkMessage REQUEST = fill();

  private Messages() {}

  /** The request every client sends: filled as the rpcx benchmark fills it; 581 bytes encoded. */
  public static BenchmarkMessage request() {
    return REQUEST;
  }

  /** The server's answer: the request with field1 = "OK" and field2 = 100. */
  public static BenchmarkMessage reply(BenchmarkMessage request) {
    return request.toBuilder().setField1("OK").setField2(100).build();
  }

  /** Whether a reply is the one the server must send (the rpcx benchmark's success test). */
  public static boolean isOk(BenchmarkMessage reply) {
    return OK.equals(reply.getField1Bytes());
  }

  private static final ByteString OK = ByteString.copyFromUtf8("OK");

  /**
   * The strings are set as their UTF-8 bytes, the form Go (rpcx, grpc-go) holds them in and the form a parsed
   * message holds them in: the message is the same on the wire, and no client re-encodes the same UTF-16 text
   * on every call. Petrel's and gRPC-java's clients send this same object.
   */
  private static BenchmarkMessage fill() {
    ByteString s = ByteString.copyFromUtf8(SENTENCE);
    int n = 100000;
    return BenchmarkMessage.newBuilder()
        .setField1Bytes(s).setField9Bytes(s).setField18Bytes(s).setField4Bytes(s).setField7Bytes(s)
        .setField102Bytes(s).setField103Bytes(s).setField129Bytes(s)
        .setField2(n).setField3(n).setField280(n).setField6(n).setField22(n).setField16(n)
        .setField130(n).setField104(n).setField100(n).setField101(n).setField29(n).setField60(n)
        .setField271(n).setField272(n).setField150(n).setField23(n).setField25(n).setField67(n)
        .setField68(n).setField128(n).setField131(n)
        .setField80(true).setField81(true).setField59(true).setField12(true).setField17(true)
        .setField13(true).setField14(true).setField30(true).setField24(true).setField78(true)
        .build();
  }
}
