package io.petrel.rpc.transport.netty;

import io.netty.channel.ChannelPipeline;
import io.netty.handler.ssl.NotSslRecordException;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeTimeoutException;
import java.nio.channels.ClosedChannelException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import javax.net.ssl.SSLException;
import org.jspecify.annotations.Nullable;

/**
 * Says in words why a TLS handshake failed, from the exception chain that either provider (JDK, OpenSSL) gives:
 * local checks keep the JDK's certificate exceptions as causes, a refusal by the peer arrives as an alert whose
 * name is in the message ("certificate_required", "SSLV3_ALERT_BAD_CERTIFICATE").
 */
final class TlsErrors {
  private TlsErrors() {}

  /** What went wrong; also the key of the server's rate-limited WARN line. */
  enum Kind {
    EXPIRED, NOT_YET_VALID, UNTRUSTED, HOSTNAME, NO_CERTIFICATE, CERTIFICATE_REFUSED, NOT_TLS, TIMEOUT, CLOSED, OTHER
  }

  /** True when {@code t} (or a cause) is a TLS failure rather than a plain I/O error. */
  static boolean isTls(Throwable t) {
    for (Throwable c : chain(t)) {
      if (c instanceof SSLException || c instanceof NotSslRecordException) {
        return true;
      }
    }
    return false;
  }

  static Kind classify(Throwable t) {
    StringBuilder text = new StringBuilder();
    for (Throwable c : chain(t)) {
      if (c instanceof CertificateExpiredException) {
        return Kind.EXPIRED;
      }
      if (c instanceof CertificateNotYetValidException) {
        return Kind.NOT_YET_VALID;
      }
      if (c instanceof CertPathValidatorException v) {
        if (v.getReason() == CertPathValidatorException.BasicReason.EXPIRED) {
          return Kind.EXPIRED;
        }
        if (v.getReason() == CertPathValidatorException.BasicReason.NOT_YET_VALID) {
          return Kind.NOT_YET_VALID;
        }
      }
      if (c instanceof SslHandshakeTimeoutException) {
        return Kind.TIMEOUT;
      }
      if (c instanceof NotSslRecordException) {
        return Kind.NOT_TLS;
      }
      text.append(c.getClass().getName()).append(": ").append(c.getMessage()).append('\n');
    }
    String s = text.toString().toLowerCase(Locale.ROOT);
    if (s.contains("no subject alternative") || s.contains("no name matching")) {
      return Kind.HOSTNAME;
    }
    if (s.contains("certpathbuilderexception") || s.contains("unable to find valid certification path")
        || s.contains("pkix path") || s.contains("certpathvalidatorexception") || s.contains("not trusted")) {
      return Kind.UNTRUSTED;
    }
    if (s.contains("certificate_required") || s.contains("empty client certificate")
        || s.contains("peer_did_not_return_a_certificate") || s.contains("empty certificate chain")) {
      return Kind.NO_CERTIFICATE;
    }
    if (s.contains("bad_certificate") || s.contains("unknown_ca") || s.contains("certificate_unknown")
        || s.contains("unsupported_certificate") || s.contains("certificate_expired")
        || s.contains("certificate_revoked") || s.contains("access_denied")) {
      return Kind.CERTIFICATE_REFUSED;
    }
    if (has(t, ClosedChannelException.class) || s.contains("closed") || s.contains("terminated the handshake")
        || s.contains("connection reset") || s.contains("end of stream") || abandoned(s)) {
      return Kind.CLOSED;
    }
    return Kind.OTHER;
  }

  /**
   * A peer that gave up during a TLS 1.3 handshake (closed, or its only call's deadline passed) before it read the
   * server's answer sends its closing alert unencrypted, where the server already reads encrypted records: a
   * 2-byte record that the JDK cannot decrypt ("Insufficient buffer remaining for AEAD cipher fragment (2)") and
   * BoringSSL calls BAD_PACKET_LENGTH. The peer left, as when it closes the connection.
   */
  private static boolean abandoned(String lowerCaseText) {
    return lowerCaseText.contains("aead cipher fragment (2)") || lowerCaseText.contains("bad_packet_length");
  }

  /**
   * Why the handshake failed, for the client's status description ({@code atClient}) or the server's log line.
   *
   * @param host the host the client connects to (for a hostname mismatch), or null on the server
   * @param ownCertificate whether this side has a certificate to show
   * @param sentCertificate whether this side sent it: a client that sent none and that the server refuses with a
   *     certificate alert (the JDK sends "bad_certificate" for a missing one) was refused for that. A client
   *     sends its certificate only if it is issued by one of the CAs the server names.
   */
  static String describe(Throwable t, boolean atClient, @Nullable String host, boolean ownCertificate,
      boolean sentCertificate) {
    return describe(t, atClient, host, false, ownCertificate, sentCertificate);
  }

  /**
   * As {@link #describe(Throwable, boolean, String, boolean, boolean)}, where {@code namedServer} says that
   * {@code host} is the client's {@code TlsConfig} {@code serverName}, not the host it connected to.
   */
  static String describe(Throwable t, boolean atClient, @Nullable String host, boolean namedServer,
      boolean ownCertificate, boolean sentCertificate) {
    Kind kind = classify(t);
    if (atClient && !sentCertificate && kind == Kind.CERTIFICATE_REFUSED) {
      kind = Kind.NO_CERTIFICATE;
    }
    String peerCert = atClient ? "the server's certificate" : "the client's certificate";
    String message = detail(t);
    String detail = message == null ? "" : " (" + message + ")";
    return switch (kind) {
      case EXPIRED -> peerCert + " has expired" + detail + "; it needs to be renewed";
      case NOT_YET_VALID -> peerCert + " is not valid yet" + detail + "; check the clocks of both machines";
      case UNTRUSTED -> peerCert + " is not trusted" + detail + ": it is not signed by a CA the "
          + (atClient ? "client" : "server") + " trusts; trust its CA with TlsConfig.builder().trustCertificates(...)"
          + " or trustStore(...)";
      case HOSTNAME -> namedServer
          ? peerCert + " does not match the name '" + host + "' the client expects (TlsConfig serverName)" + detail
              + ": set serverName to a name the certificate lists, or give the server a certificate for '" + host
              + "'"
          : peerCert + " does not match the host name '" + host + "'" + detail + ": connect with a name"
              + " the certificate lists, or give the server a certificate for '" + host + "'";
      case NO_CERTIFICATE -> !atClient
          ? "the client sent no certificate and the server requires one (TlsConfig clientAuth REQUIRE); a client"
              + " sends one only if it is issued by a CA the server trusts"
          : ownCertificate
              ? "the server requires a client certificate issued by a CA it trusts, and the client's is not (so the"
                  + " client sent none)" + detail + "; give the client a certificate from a CA the server trusts"
              : "the server requires a client certificate and the client sent none" + detail + "; give the client"
                  + " one with TlsConfig.builder().keyPair(...) or keyStore(...)";
      case CERTIFICATE_REFUSED -> atClient
          ? "the server refused the client's certificate" + detail + "; the server must trust the CA of the"
              + " client's certificate, and the certificate must be valid"
          : "the client refused the server's certificate" + detail + "; the client must trust the CA of the"
              + " server's certificate, and the certificate must name the host the client connects to";
      case NOT_TLS -> atClient
          ? "the server did not answer with TLS (does it serve plaintext? then remove tls(...) from the client, or"
              + " enable TLS on the server)"
          : "the client did not speak TLS (a plaintext client? configure it with RpcClient.builder().tls(...))";
      case TIMEOUT -> atClient
          ? "the TLS handshake did not complete within the client's connectTimeout" + detail
          : "the client did not complete a TLS handshake within the server's handshakeTimeout" + detail
              + "; see RpcServer.builder().handshakeTimeout";
      case CLOSED -> atClient
          ? "the server closed the connection during the TLS handshake" + detail + " (does it serve plaintext,"
              + " or did it refuse this client? the server's log says why)"
          : "the client closed the connection during the TLS handshake" + detail + " (the client's error says why)";
      case OTHER -> message != null && message.toLowerCase(Locale.ROOT).contains("alert")
          ? (atClient ? "the server aborted the handshake" + detail + "; the server's log says why"
              : "the client aborted the handshake" + detail + "; the client's error says why (for example, it"
                  + " does not trust the server's certificate)")
          : (message == null ? t.getClass().getName() : message);
    };
  }

  /** Whether this side sent its certificate in the handshake of the connection with this pipeline. */
  static boolean sentCertificate(ChannelPipeline pipeline) {
    return sentCertificate(pipeline.get(SslHandler.class));
  }

  static boolean sentCertificate(SslHandler ssl) {
    try {
      return ssl != null && ssl.engine().getSession().getLocalCertificates() != null;
    } catch (RuntimeException e) {
      return false;
    }
  }

  /** The most specific message in the chain (the root cause's, which names the check that failed), or null. */
  private static @Nullable String detail(Throwable t) {
    String best = null;
    for (Throwable c : chain(t)) {
      if (c instanceof NotSslRecordException) {
        return null; // its message is a hex dump of what arrived
      }
      String m = c.getMessage();
      if (m != null && !m.isBlank()) {
        best = m;
      }
    }
    return best;
  }

  private static boolean has(Throwable t, Class<? extends Throwable> type) {
    for (Throwable c : chain(t)) {
      if (type.isInstance(c)) {
        return true;
      }
    }
    return false;
  }

  /** {@code t} and its causes, at most 16 (a cause chain may loop). */
  private static List<Throwable> chain(Throwable t) {
    List<Throwable> all = new ArrayList<>(4);
    for (Throwable c = t; c != null && all.size() < 16 && !all.contains(c); c = c.getCause()) {
      all.add(c);
    }
    return all;
  }
}
