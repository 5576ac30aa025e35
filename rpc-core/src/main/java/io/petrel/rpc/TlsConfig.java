package io.petrel.rpc;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * TLS settings of a server ({@code RpcServer.builder().tls(...)}) or a client ({@code RpcClient.builder().tls(...)}):
 * the own certificate and key, the certificates to trust, client authentication, hostname verification and
 * reloading. Immutable; build with {@link #builder()}. docs/security.md shows each use.
 *
 * <p>The own certificate and key come from PEM files ({@link Builder#keyPair}) or a {@link KeyStore}
 * ({@link Builder#keyStore}); a server needs them, a client only for mutual TLS. What to trust comes from a PEM
 * file of CA certificates, a trust store, or by default the JDK's trusted CAs ({@code cacerts}). Only TLS 1.3
 * and TLS 1.2 are offered.
 *
 * <p>Files are read when the server starts (the client is built), and again on {@code reloadTls()} or, with
 * {@link Builder#reloadInterval}, when they change: a new connection then uses the new material, connections
 * already open keep theirs.
 */
public final class TlsConfig {
  /** Whether a server asks its clients for a certificate (mutual TLS). */
  public enum ClientAuth {
    /** The server does not ask for a client certificate (default). */
    NONE,
    /** The server asks; a client without one is still accepted, a client with an untrusted one is refused. */
    OPTIONAL,
    /** The server refuses a client that sends no certificate or one it does not trust. */
    REQUIRE
  }

  private final @Nullable Path certificateChainFile;
  private final @Nullable Path privateKeyFile;
  private final char @Nullable [] privateKeyPassword;
  private final @Nullable KeyStore keyStore;
  private final @Nullable Path keyStoreFile;
  private final char @Nullable [] keyStorePassword;
  private final @Nullable Path trustCertificatesFile;
  private final @Nullable KeyStore trustStore;
  private final @Nullable Path trustStoreFile;
  private final char @Nullable [] trustStorePassword;
  private final ClientAuth clientAuth;
  private final boolean hostnameVerification;
  private final @Nullable String serverName;
  private final Duration reloadInterval;

  private TlsConfig(Builder b) {
    this.certificateChainFile = b.certificateChainFile;
    this.privateKeyFile = b.privateKeyFile;
    this.privateKeyPassword = b.privateKeyPassword;
    this.keyStore = b.keyStore;
    this.keyStoreFile = b.keyStoreFile;
    this.keyStorePassword = b.keyStorePassword;
    this.trustCertificatesFile = b.trustCertificatesFile;
    this.trustStore = b.trustStore;
    this.trustStoreFile = b.trustStoreFile;
    this.trustStorePassword = b.trustStorePassword;
    this.clientAuth = b.clientAuth;
    this.hostnameVerification = b.hostnameVerification;
    this.serverName = b.serverName;
    this.reloadInterval = b.reloadInterval;
  }

  /** A new builder: no own certificate, the JDK's trusted CAs, no client auth, hostname verification on. */
  public static Builder builder() {
    return new Builder();
  }

  /** PEM file of the own certificate chain (own certificate first), or null. */
  public @Nullable Path certificateChainFile() {
    return certificateChainFile;
  }

  /** PEM file of the own private key (PKCS#8), or null. */
  public @Nullable Path privateKeyFile() {
    return privateKeyFile;
  }

  /** Password of an encrypted {@link #privateKeyFile()} (a copy), or null. */
  public char @Nullable [] privateKeyPassword() {
    return privateKeyPassword == null ? null : privateKeyPassword.clone();
  }

  /** Key store holding the own key and certificate chain, or null (see {@link #keyStoreFile()}). */
  public @Nullable KeyStore keyStore() {
    return keyStore;
  }

  /** Key store file (PKCS#12 or JKS) holding the own key and certificate chain, or null. */
  public @Nullable Path keyStoreFile() {
    return keyStoreFile;
  }

  /** Password of the key store and of its key (a copy), or null. */
  public char @Nullable [] keyStorePassword() {
    return keyStorePassword == null ? null : keyStorePassword.clone();
  }

  /** PEM file of the certificates to trust (CAs, or the peer's own), or null. */
  public @Nullable Path trustCertificatesFile() {
    return trustCertificatesFile;
  }

  /** Trust store, or null. */
  public @Nullable KeyStore trustStore() {
    return trustStore;
  }

  /** Trust store file (PKCS#12 or JKS), or null. */
  public @Nullable Path trustStoreFile() {
    return trustStoreFile;
  }

  /** Password of {@link #trustStoreFile()} (a copy), or null. */
  public char @Nullable [] trustStorePassword() {
    return trustStorePassword == null ? null : trustStorePassword.clone();
  }

  /** True when neither trust certificates nor a trust store are set: the JDK's trusted CAs apply. */
  public boolean usesDefaultTrust() {
    return trustCertificatesFile == null && trustStore == null && trustStoreFile == null;
  }

  /** True when an own certificate and key are set (required on a server, for mutual TLS on a client). */
  public boolean hasOwnCertificate() {
    return privateKeyFile != null || keyStore != null || keyStoreFile != null;
  }

  /** Client authentication required by a server (default {@link ClientAuth#NONE}); not used by clients. */
  public ClientAuth clientAuth() {
    return clientAuth;
  }

  /** Whether a client checks that the server's certificate names the host it connects to (default true). */
  public boolean hostnameVerification() {
    return hostnameVerification;
  }

  /**
   * Client only: the name the server's certificate must carry and that is sent as SNI, in place of the host of each
   * endpoint the client connects to; null (default): each endpoint's own host.
   */
  public @Nullable String serverName() {
    return serverName;
  }

  /** How often files are checked for changes; {@code Duration.ZERO} (default) = only on {@code reloadTls()}. */
  public Duration reloadInterval() {
    return reloadInterval;
  }

  /** The files this configuration reads, for change detection. */
  public List<Path> files() {
    List<Path> files = new ArrayList<>(4);
    for (Path p : new Path[] {certificateChainFile, privateKeyFile, keyStoreFile, trustCertificatesFile,
        trustStoreFile}) {
      if (p != null) {
        files.add(p);
      }
    }
    return List.copyOf(files);
  }

  /** The settings, never a password or key. */
  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("TlsConfig{");
    if (privateKeyFile != null) {
      sb.append("keyPair=").append(certificateChainFile).append(" + ").append(privateKeyFile);
    } else if (keyStoreFile != null) {
      sb.append("keyStore=").append(keyStoreFile);
    } else if (keyStore != null) {
      sb.append("keyStore=<").append(keyStore.getType()).append(" in memory>");
    } else {
      sb.append("no own certificate");
    }
    sb.append(", trust=");
    if (trustCertificatesFile != null) {
      sb.append(trustCertificatesFile);
    } else if (trustStoreFile != null) {
      sb.append(trustStoreFile);
    } else if (trustStore != null) {
      sb.append('<').append(trustStore.getType()).append(" in memory>");
    } else {
      sb.append("JDK default");
    }
    sb.append(", clientAuth=").append(clientAuth).append(", hostnameVerification=").append(hostnameVerification);
    if (serverName != null) {
      sb.append(", serverName=").append(serverName);
    }
    if (!reloadInterval.isZero()) {
      sb.append(", reloadInterval=").append(reloadInterval);
    }
    return sb.append('}').toString();
  }

  /** Builds a {@link TlsConfig}. Each setter checks its arguments, with a message naming the option. */
  public static final class Builder {
    private @Nullable Path certificateChainFile;
    private @Nullable Path privateKeyFile;
    private char @Nullable [] privateKeyPassword;
    private @Nullable KeyStore keyStore;
    private @Nullable Path keyStoreFile;
    private char @Nullable [] keyStorePassword;
    private @Nullable Path trustCertificatesFile;
    private @Nullable KeyStore trustStore;
    private @Nullable Path trustStoreFile;
    private char @Nullable [] trustStorePassword;
    private ClientAuth clientAuth = ClientAuth.NONE;
    private boolean hostnameVerification = true;
    private @Nullable String serverName;
    private Duration reloadInterval = Duration.ZERO;

    private Builder() {}

    /**
     * The own certificate chain and private key, from PEM files: the chain with the own certificate first (then
     * any intermediates), the key unencrypted PKCS#8 ({@code -----BEGIN PRIVATE KEY-----}; convert others with
     * {@code openssl pkcs8 -topk8 -nocrypt}).
     */
    public Builder keyPair(Path certificateChainPem, Path privateKeyPem) {
      return keyPair(certificateChainPem, privateKeyPem, null);
    }

    /**
     * As {@link #keyPair(Path, Path)}, with an encrypted PKCS#8 key ({@code -----BEGIN ENCRYPTED PRIVATE
     * KEY-----}) and its password (copied; null for an unencrypted key).
     */
    public Builder keyPair(Path certificateChainPem, Path privateKeyPem, char @Nullable [] keyPassword) {
      checkNoOwnCertificate("keyPair");
      this.certificateChainFile = checkFile("keyPair certificate chain", certificateChainPem);
      this.privateKeyFile = checkFile("keyPair private key", privateKeyPem);
      this.privateKeyPassword = keyPassword == null ? null : keyPassword.clone();
      return this;
    }

    /**
     * The own key and certificate chain from a loaded key store; {@code password} (copied) unlocks the key. Its
     * keys with their certificate chains are copied when the server starts (the client is built) and at each
     * reload ({@code reloadTls()}, or this configuration's files changed under {@link #reloadInterval}): entries
     * changed in it take effect then, and not before, whichever key manager algorithm is used. A secret key kept in
     * the same store is not read.
     */
    public Builder keyStore(KeyStore keyStore, char[] password) {
      checkNoOwnCertificate("keyStore");
      this.keyStore = Objects.requireNonNull(keyStore, "keyStore");
      this.keyStorePassword = Objects.requireNonNull(password, "keyStore password").clone();
      return this;
    }

    /** The own key and certificate chain from a PKCS#12 or JKS file, whose password (copied) also unlocks the key. */
    public Builder keyStore(Path keyStoreFile, char[] password) {
      checkNoOwnCertificate("keyStore");
      this.keyStoreFile = checkFile("keyStore", keyStoreFile);
      this.keyStorePassword = Objects.requireNonNull(password, "keyStore password").clone();
      return this;
    }

    /** Trusts the certificates of a PEM file (CA certificates, or a peer's own) instead of the JDK's CAs. */
    public Builder trustCertificates(Path caCertificatesPem) {
      checkNoTrust("trustCertificates");
      this.trustCertificatesFile = checkFile("trustCertificates", caCertificatesPem);
      return this;
    }

    /** Trusts the certificate entries of a loaded trust store instead of the JDK's CAs. */
    public Builder trustStore(KeyStore trustStore) {
      checkNoTrust("trustStore");
      this.trustStore = Objects.requireNonNull(trustStore, "trustStore");
      return this;
    }

    /**
     * Trusts the certificate entries of a PKCS#12 or JKS file instead of the JDK's CAs; the password (copied) may
     * be null.
     */
    public Builder trustStore(Path trustStoreFile, char @Nullable [] password) {
      checkNoTrust("trustStore");
      this.trustStoreFile = checkFile("trustStore", trustStoreFile);
      this.trustStorePassword = password == null ? null : password.clone();
      return this;
    }

    /**
     * Server only: whether to ask clients for a certificate, checked against the trusted certificates (default
     * {@link ClientAuth#NONE}). The verified certificate is {@code ServerContext.current().peerCertificates()}.
     */
    public Builder clientAuth(ClientAuth clientAuth) {
      this.clientAuth = Objects.requireNonNull(clientAuth, "clientAuth");
      return this;
    }

    /**
     * Client only: accept a server certificate that does not name the host the client connects to (it must
     * still be trusted). Off by default; without hostname verification any server holding a certificate from a
     * trusted CA can pose as this one. Meant for tests and for servers reached by an address their
     * certificate does not list; prefer giving the server a certificate with the right name.
     */
    public Builder insecureSkipHostnameVerification() {
      this.hostnameVerification = false;
      return this;
    }

    /**
     * Client only: the name the server's certificate must carry (hostname verification) and that is sent as SNI,
     * in place of the host of each endpoint. For servers reached by an address their certificate does not list:
     * pods found by IP through a headless service or ZooKeeper, all with a certificate for the service's name
     * ({@code greeter.default.svc}); a load balancer's address. Unlike {@link #insecureSkipHostnameVerification},
     * the name is still checked. Default: none, each endpoint's own host. A DNS name or an IP address, without a
     * port; refused on a server.
     *
     * @throws IllegalArgumentException if {@code name} is empty, has a port, a scheme, a path or whitespace
     */
    public Builder serverName(String name) {
      Objects.requireNonNull(name, "serverName");
      String n = name.trim();
      if (n.isEmpty() || !n.equals(name)) {
        throw new IllegalArgumentException("serverName must be a host name such as greeter.default.svc, without"
            + " spaces: '" + name + "'");
      }
      boolean ipv6 = n.indexOf(':') != n.lastIndexOf(':');
      if (n.contains("/") || (n.contains(":") && !ipv6) || n.startsWith("[")) {
        throw new IllegalArgumentException("serverName is the name the server's certificate must carry, without"
            + " a scheme, port or path (as in greeter.default.svc, or an IPv6 address without brackets): '"
            + name + "'");
      }
      for (int i = 0; i < n.length(); i++) {
        char c = n.charAt(i);
        boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-'
            || c == '.' || c == '_' || c == ':';
        if (!ok) {
          throw new IllegalArgumentException("serverName may hold ASCII letters, digits, '-', '_', '.' and an IPv6"
              + " address's ':' only (an internationalized name in its xn-- form): '" + name + "'");
        }
      }
      this.serverName = n;
      return this;
    }

    /**
     * Checks the files at most this often, on a new connection, and if any changed (content) loads them again:
     * new connections use the new certificate, key and trust; open connections keep theirs. If the new files
     * cannot be loaded (for example the key does not match the certificate while they are being replaced), the
     * previous material stays in use, a WARN says why, and the next check tries again. Default
     * {@code Duration.ZERO}: no check; {@code reloadTls()} on the server or client reloads explicitly.
     */
    public Builder reloadInterval(Duration interval) {
      Objects.requireNonNull(interval, "reloadInterval");
      if (interval.isNegative()) {
        throw new IllegalArgumentException("reloadInterval must be >= 0 (0 = off): " + interval);
      }
      this.reloadInterval = interval;
      return this;
    }

    public TlsConfig build() {
      return new TlsConfig(this);
    }

    private void checkNoOwnCertificate(String option) {
      if (privateKeyFile != null || keyStore != null || keyStoreFile != null) {
        throw new IllegalStateException(option + ": the own certificate and key are already set; use one of"
            + " keyPair(...) or keyStore(...), once");
      }
    }

    private void checkNoTrust(String option) {
      if (trustCertificatesFile != null || trustStore != null || trustStoreFile != null) {
        throw new IllegalStateException(option + ": what to trust is already set; use one of"
            + " trustCertificates(...) or trustStore(...), once");
      }
    }

    private static Path checkFile(String what, Path file) {
      Objects.requireNonNull(file, what);
      if (!Files.isRegularFile(file) || !Files.isReadable(file)) {
        throw new IllegalArgumentException(what + " file " + file.toAbsolutePath()
            + " does not exist or cannot be read");
      }
      return file;
    }
  }
}
