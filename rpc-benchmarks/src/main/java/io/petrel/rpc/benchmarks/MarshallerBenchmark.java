package io.petrel.rpc.benchmarks;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.ExtensionRegistryLite;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.petrel.rpc.benchmarks.proto.BenchmarkMessage;
import io.petrel.rpc.marshal.ProtobufMarshaller;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The BenchmarkMessage's protobuf work on Netty buffers, without any I/O: Petrel's {@link ProtobufMarshaller}
 * writing into and reading from a direct or heap buffer, against serializing to / parsing from a byte[] with
 * one copy. It tells how much of a call's cost is the marshalling path rather than the transport.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@State(Scope.Thread)
public class MarshallerBenchmark {
  private static final ProtobufMarshaller<BenchmarkMessage> MARSHALLER =
      ProtobufMarshaller.of(BenchmarkMessage.getDefaultInstance());

  /** The buffer kind: direct (what Netty's default allocator gives a channel) or heap. */
  @Param({"direct", "heap"})
  public String buffer;

  private final BenchmarkMessage message = Messages.request();
  private ByteBuf out;
  private ByteBuf encoded;

  @Setup(Level.Trial)
  public void allocate() {
    ByteBufAllocator alloc = ByteBufAllocator.DEFAULT;
    boolean direct = buffer.equals("direct");
    out = direct ? alloc.directBuffer(1024) : alloc.heapBuffer(1024);
    encoded = direct ? alloc.directBuffer(1024) : alloc.heapBuffer(1024);
    encoded.writeBytes(message.toByteArray());
  }

  @TearDown(Level.Trial)
  public void release() {
    out.release();
    encoded.release();
  }

  /** {@link ProtobufMarshaller#write}: protobuf's encoder over the buffer's memory. */
  @Benchmark
  public int writeMarshaller() throws Exception {
    out.clear();
    MARSHALLER.write(message, out);
    return out.writerIndex();
  }

  /** Serialize into a byte[] (protobuf's array encoder), then one copy into the buffer. */
  @Benchmark
  public int writeViaArray() throws IOException {
    out.clear();
    byte[] a = new byte[message.getSerializedSize()];
    CodedOutputStream cos = CodedOutputStream.newInstance(a);
    message.writeTo(cos);
    out.writeBytes(a);
    return out.writerIndex();
  }

  /** {@link ProtobufMarshaller#read}: protobuf's decoder over the buffer's memory. */
  @Benchmark
  public BenchmarkMessage readMarshaller() throws Exception {
    return MARSHALLER.read(encoded.duplicate());
  }

  /** One copy of the readable bytes into a byte[], then protobuf's array decoder. */
  @Benchmark
  public BenchmarkMessage readViaArray() throws Exception {
    byte[] a = new byte[encoded.readableBytes()];
    encoded.getBytes(encoded.readerIndex(), a);
    return BenchmarkMessage.parseFrom(a);
  }

  /**
   * Protobuf's own coder over the buffer's NIO view, no copy: for a direct buffer its unsafe direct encoder, for
   * a heap buffer its array encoder.
   */
  @Benchmark
  public int writeNio() throws IOException {
    out.clear();
    int size = message.getSerializedSize();
    out.ensureWritable(size);
    CodedOutputStream cos = CodedOutputStream.newInstance(out.nioBuffer(out.writerIndex(), size));
    message.writeTo(cos);
    cos.flush();
    out.writerIndex(out.writerIndex() + size);
    return out.writerIndex();
  }

  /**
   * Protobuf's own decoder over the buffer's NIO view, no copy (for a direct buffer its unsafe direct decoder,
   * which reads the buffer's memory in place).
   */
  @Benchmark
  public BenchmarkMessage readNio() throws Exception {
    return BenchmarkMessage.parser().parseFrom(
        CodedInputStream.newInstance(encoded.nioBuffer(encoded.readerIndex(), encoded.readableBytes())),
        ExtensionRegistryLite.getEmptyRegistry());
  }

  /**
   * One copy into a byte[] of the message's own, parsed with aliasing on: the proto2 string fields (kept as
   * bytes until read) then point into that array instead of each getting a copy of its own.
   */
  @Benchmark
  public BenchmarkMessage readAliased() throws Exception {
    byte[] a = new byte[encoded.readableBytes()];
    encoded.getBytes(encoded.readerIndex(), a);
    CodedInputStream in = CodedInputStream.newInstance(a);
    in.enableAliasing(true);
    return BenchmarkMessage.parser().parseFrom(in, ExtensionRegistryLite.getEmptyRegistry());
  }
}
