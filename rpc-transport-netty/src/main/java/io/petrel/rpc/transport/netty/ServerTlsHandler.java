package io.petrel.rpc.transport.netty;

import io.petrel.rpc.spi.RateLimitedLog;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.util.AttributeKey;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLPeerUnverifiedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's TLS handshake of one connection, right after the {@link SslHandler}: on success it keeps the
 * client's verified certificates for {@link io.petrel.rpc.ServerContext#peerCertificates()} and leaves the
 * pipeline; on failure it logs one rate-limited WARN line saying why and closes the connection.
 */
final class ServerTlsHandler extends ChannelInboundHandlerAdapter {
  private static final Logger log = LoggerFactory.getLogger(ServerTlsHandler.class);
  private static final AttributeKey<List<X509Certificate>> PEER_CERTIFICATES =
      AttributeKey.valueOf(ServerTlsHandler.class, "peerCertificates");

  /** The content type of a TLS handshake record, the first byte a TLS client sends (its ClientHello). */
  private static final int HANDSHAKE_RECORD = 22;

  private final RateLimitedLog limitLog;
  private boolean failed;
  /** Whether the client's first bytes were a TLS handshake record (set by {@link FirstByte}). */
  private boolean clientBeganTls;

  private ServerTlsHandler(RateLimitedLog limitLog) {
    this.limitLog = limitLog;
  }

  /**
   * Puts TLS first in a new connection's pipeline. The handshake must end within {@code handshakeTimeoutNanos}
   * (0 = no limit), the server's handshakeTimeout, which also bounds the first frame after it.
   */
  static void install(Channel ch, SslContext context, long handshakeTimeoutNanos, RateLimitedLog limitLog) {
    SslHandler ssl = context.newHandler(ch.alloc());
    ssl.setHandshakeTimeout(handshakeTimeoutNanos, TimeUnit.NANOSECONDS);
    ServerTlsHandler handshake = new ServerTlsHandler(limitLog);
    ch.pipeline().addLast("petrel-tls-first-byte", new FirstByte(handshake));
    ch.pipeline().addLast("petrel-tls", ssl);
    ch.pipeline().addLast("petrel-tls-handshake", handshake);
  }

  /** The client's verified certificate chain on this connection, or an empty list. */
  static List<X509Certificate> peerCertificates(Channel ch) {
    List<X509Certificate> certs = ch.attr(PEER_CERTIFICATES).get();
    return certs == null ? List.of() : certs;
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
    if (evt instanceof SslHandshakeCompletionEvent done) {
      if (done.isSuccess()) {
        SSLEngine engine = ctx.pipeline().get(SslHandler.class).engine();
        ctx.channel().attr(PEER_CERTIFICATES).set(verifiedPeer(engine));
        if (log.isDebugEnabled()) {
          log.debug("TLS handshake with {} done: {} {}", ctx.channel().remoteAddress(),
              engine.getSession().getProtocol(), engine.getSession().getCipherSuite());
        }
        ctx.fireUserEventTriggered(evt);
        ctx.pipeline().remove(this); // nothing more to do: frames pass without this hop
        return;
      }
      fail(ctx, done.cause());
    }
    ctx.fireUserEventTriggered(evt);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    if (TlsErrors.isTls(cause)) {
      fail(ctx, cause); // during the handshake: this handler leaves the pipeline once it succeeds
    } else {
      ctx.fireExceptionCaught(cause);
    }
  }

  private void fail(ChannelHandlerContext ctx, Throwable cause) {
    if (!failed) {
      failed = true;
      TlsErrors.Kind kind = TlsErrors.classify(cause);
      String why;
      String key;
      if (kind == TlsErrors.Kind.NOT_TLS && clientBeganTls) {
        // Not a plaintext client: it sent a ClientHello, and later bytes that are not TLS records.
        why = "the client began a TLS handshake, then sent bytes that are not TLS records (a broken TLS client, or"
            + " something else writing to its connection); it is no plaintext client";
        key = "TLS handshake failed: NOT_TLS after a ClientHello";
      } else {
        why = TlsErrors.describe(cause, false, null, true, true);
        key = "TLS handshake failed: " + kind;
      }
      String line = "TLS handshake with " + ctx.channel().remoteAddress() + " failed, closing the connection: " + why;
      if (kind == TlsErrors.Kind.CLOSED) {
        log.debug(line); // a peer that connects and leaves (port scans, TCP health checks) is no problem
      } else {
        limitLog.warn(key, line);
      }
    }
    ctx.close();
  }

  private static List<X509Certificate> verifiedPeer(SSLEngine engine) {
    Certificate[] chain;
    try {
      chain = engine.getSession().getPeerCertificates();
    } catch (SSLPeerUnverifiedException e) {
      return List.of(); // no client certificate (clientAuth NONE, or OPTIONAL and none sent)
    }
    List<X509Certificate> certs = new ArrayList<>(chain.length);
    for (Certificate c : chain) {
      if (c instanceof X509Certificate x) {
        certs.add(x);
      }
    }
    return List.copyOf(certs);
  }

  /**
   * Before the {@link SslHandler}: notes whether the client's first byte starts a TLS handshake record, so that
   * non-TLS bytes later in the handshake are not blamed on a plaintext client; then leaves the pipeline.
   */
  private static final class FirstByte extends ChannelInboundHandlerAdapter {
    private final ServerTlsHandler handshake;

    FirstByte(ServerTlsHandler handshake) {
      this.handshake = handshake;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (msg instanceof ByteBuf b && b.isReadable()) {
        handshake.clientBeganTls = b.getUnsignedByte(b.readerIndex()) == HANDSHAKE_RECORD;
        ctx.pipeline().remove(this);
      }
      ctx.fireChannelRead(msg);
    }
  }
}
