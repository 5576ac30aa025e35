package io.petrel.rpc.transport.netty;

import io.netty.channel.Channel;
import io.netty.handler.codec.DecoderException;
import java.io.IOException;
import org.slf4j.Logger;

/** How both sides react to an exception on a connection: every case closes it, at the right log level. */
final class ConnectionErrors {
  private ConnectionErrors() {}

  /**
   * @param peer "from /1.2.3.4:5" or "to host:port", for the log line
   */
  static void close(Logger log, Channel channel, Throwable cause, String peer) {
    Throwable t = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
    if (t instanceof ProtocolException) {
      protocolViolation(log, channel, t.getMessage(), peer);
    } else if (t instanceof IOException) {
      log.debug("connection {} failed: {}", peer, t.toString());
      channel.close();
    } else {
      log.warn("closing connection {} after an unexpected error", peer, t);
      channel.close();
    }
  }

  static void protocolViolation(Logger log, Channel channel, String what, String peer) {
    log.warn("closing connection {}: protocol violation: {}", peer, what);
    channel.close();
  }
}
