package io.petrel.rpc.marshal;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.StringValue;
import com.google.protobuf.Struct;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.petrel.rpc.Marshaller;
import io.petrel.rpc.stub.PrimitiveCodecs;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import io.petrel.rpc.testing.SeedCorpus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Fuzzes the request decoders of rpc-core: {@code Marshaller.read} of an argument list, of a return value and
 * of a protobuf message, with bodies as a peer could send them. For every input and for a heap buffer (array
 * path) and a direct buffer (scratch-array path) alike:
 *
 * <ul>
 *   <li>a malformed body throws {@link InvalidProtocolBufferException} (the server answers INVALID_ARGUMENT);
 *       any other exception or {@link Error} (OutOfMemoryError, StackOverflowError) is a finding;
 *   <li>both buffers decode to equal values, or both fail;
 *   <li>the buffer's reference count and reader index are unchanged;
 *   <li>a decoded value encodes again (its size as announced) and decodes to an equal value.
 * </ul>
 *
 * Hangs are caught by the per-input timeout. In a normal build this replays the seed corpus under
 * {@code MarshallerFuzzTestInputs} (made by {@link MarshallerSeeds}); {@code -Pfuzz} fuzzes one method
 * (docs/fuzzing.md).
 */
final class MarshallerFuzzTest {
  enum Color { RED, GREEN, BLUE }

  /** A typical argument list: (String, int, long, List&lt;String&gt;, byte[]). */
  static final ArgsMarshaller ARGS = ArgsMarshaller.of(FieldCodecs.STRING, PrimitiveCodecs.INT, PrimitiveCodecs.LONG,
      FieldCodecs.listOf(FieldCodecs.STRING), FieldCodecs.BYTES);

  /** Every other codec: packed lists, maps, an enum, a recursive message, narrow and boxed scalars. */
  static final ArgsMarshaller MORE_ARGS = ArgsMarshaller.of(FieldCodecs.listOf(FieldCodecs.INT32),
      FieldCodecs.listOf(FieldCodecs.DOUBLE), FieldCodecs.mapOf(FieldCodecs.INT64),
      FieldCodecs.mapOf(FieldCodecs.message(StringValue.getDefaultInstance())), FieldCodecs.enumOf(Color.class),
      FieldCodecs.message(Struct.getDefaultInstance()), FieldCodecs.BOOL, FieldCodecs.FLOAT, FieldCodecs.BYTE,
      FieldCodecs.SHORT, FieldCodecs.CHAR, FieldCodecs.INT64, FieldCodecs.listOf(FieldCodecs.enumOf(Color.class)));

  /** A return value that is not a message: field 1 of a message. */
  static final ValueMarshaller<Map<String, String>> VALUE = ValueMarshaller.of(FieldCodecs.mapOf(FieldCodecs.STRING));

  static final ProtobufMarshaller<StringValue> PROTOBUF = ProtobufMarshaller.of(StringValue.getDefaultInstance());

  @FuzzTest(maxDuration = "2m")
  @Timeout(value = 10, unit = TimeUnit.SECONDS) // per input; in fuzzing mode libFuzzer's -timeout
  void args(byte[] body) throws Exception {
    check(ARGS, body);
  }

  @FuzzTest(maxDuration = "2m")
  @Timeout(value = 10, unit = TimeUnit.SECONDS)
  void moreArgs(byte[] body) throws Exception {
    check(MORE_ARGS, body);
    check(VALUE, body);
  }

  @FuzzTest(maxDuration = "2m")
  @Timeout(value = 10, unit = TimeUnit.SECONDS)
  void protobuf(byte[] body) throws Exception {
    check(PROTOBUF, body);
  }

  static <T> void check(Marshaller<T> m, byte[] body) throws Exception {
    Result<T> heap = read(m, Unpooled.buffer(body.length + 3), body);
    Result<T> direct = read(m, Unpooled.directBuffer(body.length + 3), body);
    if (heap.failure != null || direct.failure != null) {
      require(heap.failure != null && direct.failure != null, "heap and direct buffers disagree: %s / %s",
          heap.describe(), direct.describe());
      return;
    }
    require(Objects.deepEquals(heap.value, direct.value), "heap and direct buffers decode differently: %s / %s",
        heap.describe(), direct.describe());
    ByteBuf again = Unpooled.buffer();
    try {
      m.write(heap.value, again); // fails if the announced size differs from the bytes written
      T back = m.read(again);
      require(Objects.deepEquals(heap.value, back), "%s encodes to something that decodes as %s", heap.describe(),
          new Result<>(back, null).describe());
    } finally {
      again.release();
    }
  }

  /** Decodes {@code body} from {@code buf}, after 3 bytes already read (so offsets matter); releases buf. */
  private static <T> Result<T> read(Marshaller<T> m, ByteBuf buf, byte[] body) {
    try {
      buf.writeBytes(new byte[] {1, 2, 3}).writeBytes(body).readerIndex(3);
      Result<T> result;
      try {
        result = new Result<>(m.read(buf), null);
      } catch (InvalidProtocolBufferException e) {
        result = new Result<>(null, e);
      } catch (Exception e) {
        throw new AssertionError("decoding fails with " + e + ", not InvalidProtocolBufferException", e);
      }
      require(buf.refCnt() == 1 && buf.readerIndex() == 3 && buf.readableBytes() == body.length,
          "the decoder changed the buffer: %s refCnt=%s", buf, buf.refCnt());
      return result;
    } finally {
      buf.release();
    }
  }

  private record Result<T>(T value, InvalidProtocolBufferException failure) {
    String describe() {
      if (failure != null) {
        return failure.toString();
      }
      return value instanceof Object[] a ? Arrays.deepToString(a) : String.valueOf(value);
    }
  }

  private static void require(boolean condition, String format, Object... args) {
    if (!condition) {
      throw new AssertionError(String.format(format, args));
    }
  }

  /** The committed corpus is what {@link MarshallerSeeds} makes, where Jazzer looks for it. */
  @Test
  void seedCorpusIsCommittedWhereJazzerReplaysIt() throws IOException {
    Map<String, byte[]> seeds = MarshallerSeeds.all();
    assertThat(seeds).hasSizeGreaterThanOrEqualTo(20);
    SeedCorpus.assertCommitted(MarshallerFuzzTest.class, MarshallerSeeds.CORPUS, seeds, MarshallerSeeds.class);
  }
}
