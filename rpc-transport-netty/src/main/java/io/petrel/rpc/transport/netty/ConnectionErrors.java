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
    if (t instanceof ProtocolException) {
      protocolViolation(log, channel, String.valueOf(t.getMessage()), peer);
    } else if (t instanceof IOException) {
      log.debug("connection " + peer + " failed: " + t);
      channel.close();
    } else {
      log.warn("unexpected error: " + t.getClass().getName(), "closing connection " + peer
          + " after an unexpected error", t);
      channel.close();
    }
  }

  static void protocolViolation(RateLimitedLog log, Channel channel, String what, String peer) {
    log.warn("protocol violation", "closing connection " + peer + ": protocol violation: " + what);
    channel.close();
  }
}
