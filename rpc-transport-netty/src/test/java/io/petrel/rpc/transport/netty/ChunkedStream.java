package io.petrel.rpc.transport.netty;

import java.util.Arrays;

/**
 * How a fuzz input becomes a byte stream and the points where it is split into reads, so that the fuzzer
 * chooses both. Layout of the input:
 *
 * <pre>
 * byte 0          n = byte 0 &amp; 0x0f: number of cut points
 * next 2n bytes   n big-endian u16 cut offsets (each taken modulo stream length + 1, then sorted)
 * the rest        the stream
 * </pre>
 *
 * An input too short for its cut points uses as many as it has bytes for. Every byte string is valid.
 */
final class ChunkedStream {
  final byte[] stream;
  /** End offsets of the chunks, ascending; the last is {@code stream.length}. Chunks may be empty. */
  final int[] chunkEnds;

  private ChunkedStream(byte[] stream, int[] chunkEnds) {
    this.stream = stream;
    this.chunkEnds = chunkEnds;
  }

  static ChunkedStream parse(byte[] input) {
    if (input.length == 0) {
      return new ChunkedStream(input, new int[] {0});
    }
    int n = Math.min(input[0] & 0x0f, (input.length - 1) / 2);
    int headerLength = 1 + 2 * n;
    byte[] stream = Arrays.copyOfRange(input, headerLength, input.length);
    int[] ends = new int[n + 1];
    for (int i = 0; i < n; i++) {
      int cut = ((input[1 + 2 * i] & 0xff) << 8) | (input[2 + 2 * i] & 0xff);
      ends[i] = cut % (stream.length + 1);
    }
    ends[n] = stream.length;
    Arrays.sort(ends);
    return new ChunkedStream(stream, ends);
  }

  /** The fuzz input that {@link #parse} turns into this stream cut at {@code cuts} (at most 15, each < 65536). */
  static byte[] encode(byte[] stream, int... cuts) {
    if (cuts.length > 15) {
      throw new IllegalArgumentException("at most 15 cut points");
    }
    byte[] input = new byte[1 + 2 * cuts.length + stream.length];
    input[0] = (byte) cuts.length;
    for (int i = 0; i < cuts.length; i++) {
      if (cuts[i] < 0 || cuts[i] > stream.length) {
        throw new IllegalArgumentException("cut " + cuts[i] + " outside the stream of " + stream.length);
      }
      input[1 + 2 * i] = (byte) (cuts[i] >>> 8);
      input[2 + 2 * i] = (byte) cuts[i];
    }
    System.arraycopy(stream, 0, input, 1 + 2 * cuts.length, stream.length);
    return input;
  }
}
