package io.petrel.rpc.transport.netty;


import static io.petrel.rpc.transport.netty.Protocol.*;

import com.google.protobuf.StringValue;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.Status;
import io.petrel.rpc.marshal.Marshallers;
import io.petrel.rpc.marshal.ProtobufMarshaller;
import io.petrel.rpc.testing.SeedCorpus;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The seed corpus of {@link FrameDecoderFuzzTest}: valid frames of every type (SETTINGS included), cut at various points, frames
 * at and over the limits, truncated frames and each kind of protocol violation, in the input layout of
 * {@link ChunkedStream}. {@code FrameDecoderFuzzTest} checks that the committed files equal these; after a
 * change, rewrite them from the module directory with
 * {@code ../mvnw -q exec:java -Dexec.mainClass=io.petrel.rpc.transport.netty.FrameDecoderSeeds
 * -Dexec.classpathScope=test} (after {@code test-compile}).
 */
public final class FrameDecoderSeeds {
  /** Resource directory of the corpus, relative to the package; Jazzer's convention for the method decode. */
  static final String CORPUS = "FrameDecoderFuzzTestInputs/decode";

  private static final UnpooledByteBufAllocator ALLOC = new UnpooledByteBufAllocator(false);
  private static final int MAX_FRAME = FrameDecoderFuzzTest.MAX_FRAME_SIZE;
  private static final int MAX_METADATA = FrameDecoderFuzzTest.MAX_METADATA_SIZE;

  private FrameDecoderSeeds() {}

  static Map<String, byte[]> all() {
    try {
      return build();
    } catch (Exception e) {
      throw new IllegalStateException("cannot build the seeds", e);
    }
  }

  private static Map<String, byte[]> build() throws Exception {
    Map<String, byte[]> seeds = new LinkedHashMap<>();
    Metadata md = Metadata.of("trace-id", "0af7651916cd43dd").withBinary("bin", new byte[] {9, 8, 7})
        .with("k", "ünïcode");
    byte[] request = request(7, md, "hello");
    byte[] ping = header(TYPE_PING, 0, 11, 0, 0, 0, 0);
    byte[] response = encoded(FrameEncoder.encodeMessage(ALLOC, TYPE_RESPONSE, 7, 0, 0, Metadata.EMPTY,
        Marshallers.bytes(), new byte[] {1, 2, 3, 4, 5}, MAX_FRAME, MAX_METADATA, "seed"));
    byte[] cancel = header(TYPE_CANCEL, 0, 7, 0, 0, 0, 0);

    seeds.put("request-with-metadata", ChunkedStream.encode(request));
    seeds.put("request-with-metadata-cut", ChunkedStream.encode(request, 3, 5, 6, 7, 31, 32, 40, request.length - 1));
    seeds.put("response", ChunkedStream.encode(response));
    seeds.put("response-error-with-metadata", ChunkedStream.encode(encoded(FrameEncoder.encodeError(ALLOC, 9,
        Status.NOT_FOUND.withDescription("no such key"), Metadata.of("retry-after", "5"), MAX_FRAME)), 40));
    seeds.put("oneway", ChunkedStream.encode(frame(TYPE_ONEWAY, 0, 0, 0x3a8e75c1, 0, new byte[0], new byte[] {1})));
    seeds.put("ping", ChunkedStream.encode(ping));
    seeds.put("pong", ChunkedStream.encode(header(TYPE_PONG, 0, 11, 0, 0, 0, 0)));
    seeds.put("goaway", ChunkedStream.encode(header(TYPE_GOAWAY, 0, 0, 0, 0, 0, 0)));
    seeds.put("cancel", ChunkedStream.encode(cancel));
    // SETTINGS: the server's three limits and an id of a later version (the decoder does not read the body).
    byte[] settings = encoded(FrameEncoder.encodeSettings(ALLOC, SETTING_MAX_CONCURRENT_CALLS, 1000,
        SETTING_MAX_FRAME_SIZE, MAX_FRAME, SETTING_MAX_METADATA_SIZE, MAX_METADATA, 0x7777, -1));
    seeds.put("settings", ChunkedStream.encode(settings));
    seeds.put("settings-empty", ChunkedStream.encode(encoded(FrameEncoder.encodeSettings(ALLOC))));
    seeds.put("settings-then-response-cut", ChunkedStream.encode(SeedCorpus.concat(settings, response), 7, 32, 35,
        settings.length + 1));
    // A body that is not whole 6-byte entries: a whole frame for the decoder; the client rejects its content.
    seeds.put("settings-odd-body", ChunkedStream.encode(header(TYPE_SETTINGS, 0, 0, 0, 0, 0, 5)));
    byte[] several = SeedCorpus.concat(request, ping, response, cancel, request(8, Metadata.EMPTY, ""));
    seeds.put("several-frames", ChunkedStream.encode(several));
    seeds.put("several-frames-cut", ChunkedStream.encode(several, 1, 2, 30, 33, request.length,
        request.length + 1, request.length + 32, request.length + 40, several.length - 5));

    byte[] largest = frame(TYPE_REQUEST, 0, 1, 2, 3, new byte[0], new byte[MAX_FRAME - HEADER_SIZE]);
    seeds.put("frame-at-the-size-limit", ChunkedStream.encode(largest, 32, 2000));
    byte[] tooLarge = frame(TYPE_REQUEST, 0, 5, 2, 0, new byte[0], new byte[MAX_FRAME - HEADER_SIZE + 1]);
    seeds.put("oversize-frame-then-ping", ChunkedStream.encode(SeedCorpus.concat(tooLarge, ping), 32, 1000, tooLarge.length));
    byte[] metadataAtLimit = metadata("k", new byte[MAX_METADATA - 8]);
    seeds.put("metadata-at-the-limit",
        ChunkedStream.encode(frame(TYPE_REQUEST, 0, 3, 4, 0, metadataAtLimit, new byte[] {42})));
    byte[] metadataTooLarge = metadata("k", new byte[MAX_METADATA - 7]);
    seeds.put("oversize-metadata-then-ping", ChunkedStream.encode(
        SeedCorpus.concat(frame(TYPE_REQUEST, 0, 6, 4, 0, metadataTooLarge, new byte[0]), ping), 100));

    seeds.put("truncated-header", ChunkedStream.encode(Arrays.copyOf(request, 20)));
    seeds.put("truncated-body", ChunkedStream.encode(Arrays.copyOf(request, request.length - 3), 32));

    seeds.put("bad-magic-http", ChunkedStream.encode(
        "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".getBytes(StandardCharsets.US_ASCII)));
    seeds.put("bad-magic-then-ping", ChunkedStream.encode(SeedCorpus.concat(new byte[] {0, 0, 0, 28, 'G', 'E', 1, 1}, ping), 8));
    byte[] badVersion = ping.clone();
    badVersion[OFF_VERSION] = 2;
    seeds.put("bad-version-after-ping", ChunkedStream.encode(SeedCorpus.concat(ping, badVersion), 32, 38));
    seeds.put("unknown-type-0", ChunkedStream.encode(header((byte) 0, 0, 1, 0, 0, 0, 0)));
    seeds.put("unknown-type-9", ChunkedStream.encode(header((byte) (MAX_TYPE + 1), 0, 1, 0, 0, 0, 0)));
    byte[] badLength = ping.clone();
    badLength[OFF_LENGTH + 3] = 40;
    seeds.put("length-does-not-match", ChunkedStream.encode(badLength));
    seeds.put("huge-declared-length", ChunkedStream.encode(headerWithLength(0xFFFF_FFFFL, 0, 0xFFFF_FFFFL - 28)));

    ByteArrayOutputStream emptyKey = new ByteArrayOutputStream();
    emptyKey.write(new byte[] {0, 0, 0, 0, 0, 0, 0});
    seeds.put("metadata-empty-key", badMetadata(emptyKey.toByteArray()));
    seeds.put("metadata-upper-case-key", badMetadata(metadata("Key", "v".getBytes(StandardCharsets.US_ASCII))));
    byte[] pastEnd = metadata("k", new byte[4]);
    pastEnd[7] = 9; // value length 9, only 4 bytes follow
    seeds.put("metadata-value-past-end", badMetadata(pastEnd));
    byte[] unknownKind = metadata("k", new byte[] {1});
    unknownKind[3] = 2;
    seeds.put("metadata-unknown-kind", badMetadata(unknownKind));
    seeds.put("metadata-truncated-key-length", badMetadata(SeedCorpus.concat(metadata("k", new byte[0]), new byte[] {0})));
    return seeds;
  }

  private static byte[] request(int requestId, Metadata md, String value) throws Exception {
    ByteBuf b = FrameEncoder.encodeMessage(ALLOC, TYPE_REQUEST, 0, 0x1234, 0, md,
        ProtobufMarshaller.of(StringValue.getDefaultInstance()), StringValue.of(value), MAX_FRAME, MAX_METADATA,
        "seed");
    FrameEncoder.patchRequest(b, requestId, 1500);
    return encoded(b);
  }

  private static byte[] encoded(ByteBuf b) {
    try {
      return ByteBufUtil.getBytes(b);
    } finally {
      b.release();
    }
  }

  private static byte[] header(byte type, int status, int requestId, int methodId, int timeout, int metaLen,
      int bodyLen) {
    return frame(type, status, requestId, methodId, timeout, new byte[metaLen], new byte[bodyLen]);
  }

  private static byte[] frame(byte type, int status, int requestId, int methodId, int timeout, byte[] metadata,
      byte[] body) {
    ByteBuf b = ALLOC.heapBuffer();
    b.writeInt(MIN_LENGTH + metadata.length + body.length).writeShort(MAGIC).writeByte(VERSION).writeByte(type)
        .writeByte(0).writeByte(status).writeShort(0).writeInt(requestId).writeInt(methodId).writeInt(timeout)
        .writeInt(metadata.length).writeInt(body.length).writeBytes(metadata).writeBytes(body);
    return encoded(b);
  }

  /** A header whose length fields may declare more than any buffer holds; no payload follows. */
  private static byte[] headerWithLength(long length, long metaLen, long bodyLen) {
    ByteBuf b = ALLOC.heapBuffer();
    b.writeInt((int) length).writeShort(MAGIC).writeByte(VERSION).writeByte(TYPE_REQUEST).writeByte(0)
        .writeByte(0).writeShort(0).writeInt(1).writeInt(1).writeInt(0).writeInt((int) metaLen)
        .writeInt((int) bodyLen);
    return encoded(b);
  }

  /** One binary metadata entry. */
  private static byte[] metadata(String key, byte[] value) {
    ByteBuf b = ALLOC.heapBuffer();
    b.writeShort(key.length()).writeCharSequence(key, StandardCharsets.US_ASCII);
    b.writeByte(META_BINARY).writeInt(value.length).writeBytes(value);
    return encoded(b);
  }

  private static byte[] badMetadata(byte[] metadata) {
    return ChunkedStream.encode(frame(TYPE_REQUEST, 0, 1, 1, 0, metadata, new byte[] {1, 2}));
  }


  /** Writes the corpus under src/test/resources of the module (the working directory, or args[0]). */
  public static void main(String[] args) throws IOException {
    SeedCorpus.write(FrameDecoderSeeds.class, CORPUS, all(), args.length > 0 ? args[0] : ".");
  }
}
