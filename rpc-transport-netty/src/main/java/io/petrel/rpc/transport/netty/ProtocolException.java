package io.petrel.rpc.transport.netty;

/** The peer broke the wire protocol; the connection is closed after logging this. */
final class ProtocolException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  ProtocolException(String message) {
    super(message, null, false, false);
  }
}
