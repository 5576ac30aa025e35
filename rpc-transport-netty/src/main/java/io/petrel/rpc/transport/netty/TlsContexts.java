package io.petrel.rpc.transport.netty;

import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.petrel.rpc.TlsConfig;
import io.petrel.rpc.spi.KeyPairCheck;
import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManagerFactory;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds Netty {@link SslContext}s from a {@link TlsConfig}: TLS 1.3 and 1.2 only, OpenSSL (BoringSSL through
 * netty-tcnative) when it is on the class path, else the JDK; hostname verification (HTTPS rules) on clients
 * unless switched off. The system property {@value #PROVIDER_PROPERTY} ({@code auto}, {@code openssl},
 * {@code jdk}) overrides the choice.
 */
final class TlsContexts {
  private static final Logger log = LoggerFactory.getLogger(TlsContexts.class);

  /** Forces a provider: {@code openssl} or {@code jdk}; {@code auto} (default) prefers OpenSSL. */
  static final String PROVIDER_PROPERTY = "io.petrel.tls.provider";
  static final String[] PROTOCOLS = {"TLSv1.3", "TLSv1.2"};
  private static final AtomicBoolean providerLogged = new AtomicBoolean();

  private TlsContexts() {}

  /** The provider to use now (the property is read each time, so that tests can switch it). */
  static SslProvider provider() {
    String wanted = System.getProperty(PROVIDER_PROPERTY, "auto").trim().toLowerCase(Locale.ROOT);
    SslProvider p;
    switch (wanted) {
      case "jdk":
        p = SslProvider.JDK;
        break;
      case "openssl":
        if (!OpenSsl.isAvailable()) {
          throw new IllegalStateException("-D" + PROVIDER_PROPERTY + "=openssl, but OpenSSL cannot be used: "
              + OpenSsl.unavailabilityCause() + " (add io.netty:netty-tcnative-boringssl-static for this platform)");
        }
        p = SslProvider.OPENSSL;
        break;
      case "auto":
        p = OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK;
        break;
      default:
        throw new IllegalStateException("-D" + PROVIDER_PROPERTY + "=" + wanted + " is not a TLS provider; use"
            + " auto, openssl or jdk");
    }
    if (providerLogged.compareAndSet(false, true)) {
      if (p == SslProvider.OPENSSL) {
        log.info("TLS provider: {}", describe(p));
      } else {
        log.info("TLS provider: {}{}", describe(p), OpenSsl.isAvailable() ? "" : "; OpenSSL not used ("
            + OpenSsl.unavailabilityCause() + "): add io.netty:netty-tcnative-boringssl-static to use it");
      }
    }
    return p;
  }

  /** "OpenSSL (BoringSSL) through netty-tcnative" or "JDK (SunJSSE 17)". */
  static String describe(SslProvider p) {
    if (p == SslProvider.OPENSSL) {
      return "OpenSSL (" + OpenSsl.versionString() + ") through netty-tcnative";
    }
    try {
      java.security.Provider jsse = javax.net.ssl.SSLContext.getDefault().getProvider();
      return "JDK (" + jsse.getName() + " " + jsse.getVersionStr() + ")";
    } catch (GeneralSecurityException e) {
      return "JDK";
    }
  }

  /** A server context: the own certificate, client auth and trust of {@code config}. */
  static SslContext server(TlsConfig config) throws IOException {
    try {
      SslContextBuilder b;
      if (config.privateKeyFile() != null) {
        PrivateKey key = Pem.privateKey(config.privateKeyFile(), config.privateKeyPassword());
        X509Certificate[] chain = Pem.certificates(Objects.requireNonNull(config.certificateChainFile(),
            "keyPair sets the certificate chain with the key"), "certificate chain");
        checkKeyMatches(key, chain[0], config);
        b = SslContextBuilder.forServer(key, chain);
      } else {
        b = SslContextBuilder.forServer(keyManagers(config));
      }
      b.clientAuth(switch (config.clientAuth()) {
        case NONE -> ClientAuth.NONE;
        case OPTIONAL -> ClientAuth.OPTIONAL;
        case REQUIRE -> ClientAuth.REQUIRE;
      });
      return finish(b, config);
    } catch (GeneralSecurityException | RuntimeException e) {
      throw failure(config, e);
    }
  }

  /** A client context: trust, hostname verification and (mutual TLS) the own certificate of {@code config}. */
  static SslContext client(TlsConfig config) throws IOException {
    try {
      SslContextBuilder b = SslContextBuilder.forClient();
      if (config.privateKeyFile() != null) {
        PrivateKey key = Pem.privateKey(config.privateKeyFile(), config.privateKeyPassword());
        X509Certificate[] chain = Pem.certificates(Objects.requireNonNull(config.certificateChainFile(),
            "keyPair sets the certificate chain with the key"), "certificate chain");
        checkKeyMatches(key, chain[0], config);
        b.keyManager(key, chain);
      } else if (config.hasOwnCertificate()) {
        b.keyManager(keyManagers(config));
      }
      b.endpointIdentificationAlgorithm(config.hostnameVerification() ? "HTTPS" : null);
      return finish(b, config);
    } catch (GeneralSecurityException | RuntimeException e) {
      throw failure(config, e);
    }
  }

  private static SslContext finish(SslContextBuilder b, TlsConfig config)
      throws IOException, GeneralSecurityException {
    if (config.trustCertificatesFile() != null) {
      b.trustManager(Pem.certificates(config.trustCertificatesFile(), "trust certificates"));
    } else if (config.trustStore() != null || config.trustStoreFile() != null) {
      KeyStore ts = config.trustStore() != null ? config.trustStore()
          : load(Objects.requireNonNull(config.trustStoreFile(), "a trust store or its file"),
              config.trustStorePassword(), "trustStore");
      TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(ts);
      b.trustManager(tmf);
    } // else: Netty uses the JDK's default trust managers (cacerts) with either provider
    return b.sslProvider(provider()).protocols(PROTOCOLS).build();
  }

  /**
   * The key managers of one context, over key material of its own: a key store file is loaded for it, and an
   * in-memory key store is copied ({@link KeySnapshot}). A key manager may read its store on each handshake (the
   * JDK's PKIX does, with the security property {@code ssl.KeyManagerFactory.algorithm=PKIX}; the default SunX509
   * copies it when it is made), and the application changes its in-memory store in place before
   * {@code reloadTls()}: without a copy, the contexts built before (connections accepted then, still in their
   * handshake) would present the new material, and so would the running context after a reload that failed.
   */
  private static KeyManagerFactory keyManagers(TlsConfig config) throws IOException, GeneralSecurityException {
    char[] password = config.keyStorePassword();
    KeyStore inMemory = config.keyStore();
    KeyStore ks = inMemory != null ? KeySnapshot.of(inMemory, Objects.requireNonNull(password, "keyStore password"))
        : load(Objects.requireNonNull(config.keyStoreFile(), "a key store or its file"), password, "keyStore");
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(ks, password);
    return kmf;
  }

  private static KeyStore load(Path file, char @Nullable [] password, String option) throws IOException {
    try {
      return KeyStore.getInstance(file.toFile(), password);
    } catch (GeneralSecurityException | IOException | RuntimeException e) {
      throw new IOException(option + " " + file + " cannot be read as a PKCS#12 or JKS key store: "
          + e.getMessage(), e);
    }
  }

  /**
   * Refuses a private key that does not belong to the certificate ({@link KeyPairCheck}): a certificate and key
   * replaced one at a time, where the handshake would otherwise fail for every peer.
   */
  private static void checkKeyMatches(PrivateKey key, X509Certificate cert, TlsConfig config) throws IOException {
    switch (KeyPairCheck.check(key, cert)) {
      case MATCHES -> { }
      case UNKNOWN -> log.debug("cannot check that the private key {} belongs to its certificate (a kind of key"
          + " it does not sign with, or signing failed): left to the handshake", config.privateKeyFile());
      case DIFFERENT -> throw new IOException("the private key " + config.privateKeyFile() + " does not belong to"
          + " the certificate " + cert.getSubjectX500Principal() + " of " + config.certificateChainFile()
          + " (were they replaced one at a time? write both, then reload)");
    }
  }

  private static IOException failure(TlsConfig config, Exception e) {
    return new IOException("cannot load TLS material (" + config + "): " + e.getMessage(), e);
  }

  /** PEM reading, through Netty's reader (PKCS#8 keys, encrypted too; PKCS#1 too when BouncyCastle is present). */
  private abstract static class Pem extends SslContext {
    static PrivateKey privateKey(Path file, char @Nullable [] password) throws IOException {
      try {
        PrivateKey key = toPrivateKey(file.toFile(), password == null ? null : new String(password));
        if (key == null) {
          throw new IOException("no private key");
        }
        return key;
      } catch (IOException | GeneralSecurityException | RuntimeException e) {
        throw new IOException("private key " + file + " cannot be read (PEM PKCS#8 '-----BEGIN PRIVATE KEY-----'"
            + (password == null ? "" : " or 'ENCRYPTED PRIVATE KEY' with its password") + " expected): "
            + e.getMessage(), e);
      }
    }

    static X509Certificate[] certificates(Path file, String what) throws IOException {
      X509Certificate[] certs;
      try {
        certs = toX509Certificates(new File(file.toString()));
      } catch (GeneralSecurityException | RuntimeException e) {
        throw new IOException(what + " " + file + " cannot be read (PEM '-----BEGIN CERTIFICATE-----' expected): "
            + e.getMessage(), e);
      }
      if (certs == null || certs.length == 0) {
        throw new IOException(what + " " + file + " has no certificate (PEM '-----BEGIN CERTIFICATE-----'"
            + " expected)");
      }
      return certs;
    }
  }
}
