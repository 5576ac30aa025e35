package io.petrel.rpc.transport.netty;

import io.petrel.rpc.spi.RateLimitedLog;
import io.netty.channel.Channel;
import io.netty.handler.codec.DecoderException;
import java.io.IOException;

/** How both sides react to an exception on a connection: every case closes it, at the right log level. */
final class ConnectionErrors {
  private ConnectionErrors() {}

  /**
   * @param peer "from /1.2.3.4:5" or "to host:port", for the log line
   */
  static void close(RateLimitedLog log, Channel channel, Throwable cause, String peer) {
    Throwable t = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
    if (t instanceof ProtocolException p) {
      protocolViolation(log, channel, p.kind(), String.valueOf(t.getMessage()), peer);
    } else if (t instanceof IOException) {
      log.debug("connection " + peer + " failed: " + t);
      channel.close();
    } else {
      log.warn("unexpected error: " + t.getClass().getName(), "closing connection " + peer
          + " after an unexpected error", t);
      channel.close();
    }
  }

  /**
   * @param kind a short fixed phrase ("unknown frame type"): one line per kind per period, so that one peer's
   *     flood of one violation does not hide another kind
   */
  static void protocolViolation(RateLimitedLog log, Channel channel, String kind, String what, String peer) {
    log.warn("protocol violation: " + kind, "closing connection " + peer + ": protocol violation: " + what);
    channel.close();
  }
}
