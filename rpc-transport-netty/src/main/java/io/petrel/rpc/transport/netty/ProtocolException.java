package io.petrel.rpc.transport.netty;

/** The peer broke the wire protocol; the connection is closed after logging this. */
final class ProtocolException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** What kind of violation, a short fixed phrase: the key its WARN is rate-limited under. */
  private final String kind;

  ProtocolException(String kind, String message) {
    super(message, null, false, false);
    this.kind = kind;
  }

  String kind() {
    return kind;
  }
}
