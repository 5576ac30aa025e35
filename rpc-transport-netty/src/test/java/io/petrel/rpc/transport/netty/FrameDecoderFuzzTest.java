package io.petrel.rpc.transport.netty;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import io.netty.util.ReferenceCountUtil;
import io.petrel.rpc.Metadata;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import io.petrel.rpc.testing.SeedCorpus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Fuzzes {@link FrameDecoder} the way a connection drives it: an {@link EmbeddedChannel} with small limits is
 * fed a byte stream cut into reads at points the fuzzer chooses (see {@link ChunkedStream}). Checked for every
 * input:
 *
 * <ul>
 *   <li>the only exception is a {@link DecoderException} caused by {@link ProtocolException}, at most once,
 *       and nothing comes out of the decoder after it;
 *   <li>every {@link Frame} and {@link OversizeFrame} is the one {@link FrameModel} finds at that offset of
 *       the stream (header fields, body bytes, limits), a violation is reported exactly when the model sees
 *       one, and the decoder never sits on a complete frame;
 *   <li>no buffer is ever larger than twice the bytes that arrived (nothing is allocated for a declared length);
 *   <li>after the run every buffer allocated by the test and by the decoder (inputs, cumulations) has reference
 *       count 0: frames are released by the test, the rest by the decoder.
 * </ul>
 *
 * <p>In a normal build this replays the seed corpus under {@code FrameDecoderFuzzTestInputs/decode} (made by
 * {@link FrameDecoderSeeds}); {@code -Pfuzz} fuzzes it (docs/fuzzing.md).
 */
final class FrameDecoderFuzzTest {
  static final int MAX_FRAME_SIZE = 4096;
  static final int MAX_METADATA_SIZE = 512;

  @FuzzTest(maxDuration = "2m")
  @Timeout(value = 10, unit = TimeUnit.SECONDS) // per input; in fuzzing mode libFuzzer's -timeout
  void decode(byte[] input) {
    run(ChunkedStream.parse(input));
  }

  static void run(ChunkedStream in) {
    TrackingAllocator alloc = new TrackingAllocator();
    EmbeddedChannel ch = new EmbeddedChannel();
    ch.config().setAllocator(alloc);
    ch.pipeline().addLast(new FrameDecoder(MAX_FRAME_SIZE, MAX_METADATA_SIZE));
    byte[] s = in.stream;
    long position = 0; // where the next frame starts in the stream
    boolean failed = false;
    int start = 0;
    for (int end : in.chunkEnds) {
      ByteBuf chunk = alloc.heapBuffer(end - start).writeBytes(s, start, end - start);
      boolean failedBefore = failed;
      try {
        ch.writeInbound(chunk);
      } catch (DecoderException e) {
        if (!(e.getCause() instanceof ProtocolException) || failedBefore) {
          throw e;
        }
        failed = true;
      }
      for (Object msg; (msg = ch.readInbound()) != null; ) {
        try {
          require(!failedBefore, "%s came out after a protocol violation", msg);
          position = check(msg, s, position);
        } finally {
          ReferenceCountUtil.release(msg);
        }
      }
      require(alloc.largestLiveCapacity() <= Math.max(64, 2 * end), "a buffer of %s bytes after %s bytes arrived",
          alloc.largestLiveCapacity(), end);
      start = end;
    }
    FrameModel.Kind rest = FrameModel.at(s, position, MAX_FRAME_SIZE, MAX_METADATA_SIZE).kind;
    if (failed) {
      require(rest == FrameModel.Kind.INVALID, "violation reported at offset %s, but the model sees %s", position,
          rest);
    } else {
      require(rest == FrameModel.Kind.INCOMPLETE, "the decoder stopped at offset %s, where the model sees %s",
          position, rest);
    }
    require(!ch.finishAndReleaseAll(), "messages were left in the channel");
    require(alloc.unreleased().isEmpty(), "unreleased buffers: %s", alloc.unreleased());
  }

  /** Checks one decoded message against the model; returns the offset after its frame. */
  private static long check(Object msg, byte[] s, long position) {
    FrameModel m = FrameModel.at(s, position, MAX_FRAME_SIZE, MAX_METADATA_SIZE);
    int p = (int) position;
    if (msg instanceof Frame f) {
      require(m.kind == FrameModel.Kind.FRAME, "%s at offset %s, where the model sees %s", f, position, m.kind);
      require(f.type == s[p + 7] && f.flags == s[p + 8] && f.status == (s[p + 9] & 0xff)
          && f.requestId == FrameModel.i32(s, p + 12) && f.methodId == FrameModel.i32(s, p + 16)
          && f.timeoutMillis == FrameModel.u32(s, p + 20), "%s differs from the header at offset %s", f, position);
      ByteBuf body = f.body();
      int bodyStart = p + 32 + (int) m.metadataLength;
      require(body.readableBytes() == m.bodyLength
          && Arrays.equals(ByteBufUtil.getBytes(body), 0, body.readableBytes(), s, bodyStart,
              bodyStart + body.readableBytes()), "body of %s differs from the stream at offset %s", f, position);
      require(m.frameSize() <= MAX_FRAME_SIZE && m.metadataLength <= MAX_METADATA_SIZE, "%s exceeds the limits", f);
      require(minimumEncodedSize(f.metadata) <= m.metadataLength, "metadata %s is larger than the %s bytes sent",
          f.metadata, m.metadataLength);
    } else if (msg instanceof OversizeFrame o) {
      require(m.kind == FrameModel.Kind.OVERSIZE, "%s at offset %s, where the model sees %s", o, position, m.kind);
      require(o.type() == s[p + 7] && o.requestId() == FrameModel.i32(s, p + 12)
          && o.methodId() == FrameModel.i32(s, p + 16), "%s differs from the header at offset %s", o, position);
      boolean frameTooLarge = m.frameSize() > MAX_FRAME_SIZE;
      require(o.limit() == (frameTooLarge ? MAX_FRAME_SIZE : MAX_METADATA_SIZE)
          && o.frameSize() == (frameTooLarge ? m.frameSize() : m.metadataLength), "%s for a frame of %s bytes"
          + " with %s bytes of metadata", o, m.frameSize(), m.metadataLength);
    } else {
      throw new AssertionError("unexpected message " + msg);
    }
    return position + m.frameSize();
  }

  /** A lower bound of the wire size: a UTF-8 string has at least as many bytes as UTF-16 units. */
  private static long minimumEncodedSize(Metadata metadata) {
    long size = 0;
    for (Metadata.Entry e : metadata.entries()) {
      size += 2 + e.key().length() + 1 + 4 + (e.isBinary() ? e.binaryValue().length : e.stringValue().length());
    }
    return size;
  }

  private static void require(boolean condition, String format, Object... args) {
    if (!condition) {
      throw new AssertionError(String.format(format, args));
    }
  }

  /** The committed corpus is what {@link FrameDecoderSeeds} makes, and it is where Jazzer looks for it. */
  @Test
  void seedCorpusIsCommittedWhereJazzerReplaysIt() throws IOException {
    Map<String, byte[]> seeds = FrameDecoderSeeds.all();
    assertThat(seeds).hasSizeGreaterThanOrEqualTo(20);
    SeedCorpus.assertCommitted(FrameDecoderFuzzTest.class, FrameDecoderSeeds.CORPUS, seeds,
        FrameDecoderSeeds.class);
    for (Map.Entry<String, byte[]> seed : seeds.entrySet()) {
      // Every seed passes the checks (a seed that fails would fail the regression run, but name it here).
      run(ChunkedStream.parse(seed.getValue()));
    }
  }
}
