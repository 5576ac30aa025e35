package io.petrel.rpc.benchmarks;

/**
 * What one call carries. Opaque bodies are echoed unchanged; {@link #MESSAGE} is the rpcx BenchmarkMessage,
 * which the server answers with field1 = "OK" and field2 = 100.
 *
 * <p>The opaque sizes from 4 B to 1 MiB are the payload scale table's (docs/benchmarks.md, "How cost grows with
 * the work"); the default run measures {@link #MESSAGE}, {@link #EMPTY}, {@link #BYTES_4} and {@link #BYTES_1K}
 * only ({@link Target#payload}). Every framework's default limits take a 1 MiB body each way: Petrel's
 * maxFrameSize is 8 MiB, gRPC-java's maxInboundMessageSize 4 MiB, the raw Netty echo's frames 16 MiB
 * ({@link RawNettyServer#MAX_BODY}).
 */
public enum Payload {
  /** The rpcx BenchmarkMessage: 581 bytes encoded (the reply 527). */
  MESSAGE("BenchmarkMessage", -1),
  /** An empty request and an empty reply: the framework's own cost per call. */
  EMPTY("empty hello", 0),
  /** A 4-byte opaque body (as Tars' small case). */
  BYTES_4("4 B opaque", 4),
  /** A 64-byte opaque body. */
  BYTES_64("64 B opaque", 64),
  /** A 1 KiB opaque body (as Tars' large case). */
  BYTES_1K("1 KiB opaque", 1024),
  /** A 16 KiB opaque body. */
  BYTES_16K("16 KiB opaque", 16 * 1024),
  /** A 64 KiB opaque body. */
  BYTES_64K("64 KiB opaque", 64 * 1024),
  /** A 256 KiB opaque body. */
  BYTES_256K("256 KiB opaque", 256 * 1024),
  /** A 1 MiB opaque body. */
  BYTES_1M("1 MiB opaque", 1024 * 1024);

  private final String label;
  private final int size;

  Payload(String label, int size) {
    this.label = label;
    this.size = size;
  }

  public String label() {
    return label;
  }

  /** The opaque body's size, or -1 for {@link #MESSAGE}. */
  public int size() {
    return size;
  }

  /**
   * The payload bytes one call moves, request and reply together: the message bodies as the application hands
   * them over, without any framework's header or the TCP/IP overhead (the same count for every framework). An
   * opaque body is echoed, so twice its size; the BenchmarkMessage is 581 bytes out and 527 back.
   */
  public long bytesPerCall() {
    if (size < 0) {
      return (long) Messages.request().getSerializedSize() + Messages.reply(Messages.request()).getSerializedSize();
    }
    return 2L * size;
  }

  /** A fresh opaque body of {@link #size()} bytes (not all zero, so nothing can compress it away). */
  public byte[] body() {
    if (size < 0) {
      return Messages.request().toByteArray();
    }
    byte[] b = new byte[size];
    for (int i = 0; i < size; i++) {
      b[i] = (byte) ('a' + i % 26);
    }
    return b;
  }
}
