package io.petrel.rpc.benchmarks;

/**
 * What one call carries. Opaque bodies are echoed unchanged; {@link #MESSAGE} is the rpcx BenchmarkMessage,
 * which the server answers with field1 = "OK" and field2 = 100.
 */
public enum Payload {
  /** The rpcx BenchmarkMessage: 581 bytes encoded. */
  MESSAGE("BenchmarkMessage", -1),
  /** An empty request and an empty reply: the framework's own cost per call. */
  EMPTY("empty hello", 0),
  /** A 4-byte opaque body (as Tars' small case). */
  BYTES_4("4 B opaque", 4),
  /** A 1 KiB opaque body (as Tars' large case). */
  BYTES_1K("1 KiB opaque", 1024);

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
