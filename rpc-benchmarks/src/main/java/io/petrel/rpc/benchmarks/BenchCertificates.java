package io.petrel.rpc.benchmarks;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.Date;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * The TLS material of a benchmark server, made when it starts: a throwaway CA and a server certificate it signs
 * (EC P-256 keys, ECDSA with SHA-256), valid for 30 days, written as PEM into a temporary directory that is
 * deleted when the server closes (or at exit). The server certificate names every name and address a client
 * may reach the server by (localhost, 127.0.0.1, ::1, the bind address when it is not a wildcard, this host's
 * name, and every address of every local interface), so that clients keep hostname verification on, also from
 * another machine. Clients trust only the CA, which they fetch from the control port ({@code CA}).
 */
final class BenchCertificates implements AutoCloseable {
  private static final Duration VALIDITY = Duration.ofDays(30);

  private final Path dir;
  private final Path caFile;
  private final Path certificateFile;
  private final Path keyFile;
  private final X509Certificate ca;
  private final X509Certificate certificate;
  private final List<String> names;

  private BenchCertificates(Path dir, X509Certificate ca, X509Certificate certificate, PrivateKey key,
      List<String> names) throws IOException {
    this.dir = dir;
    this.ca = ca;
    this.certificate = certificate;
    this.names = names;
    this.caFile = dir.resolve("ca.pem");
    this.certificateFile = dir.resolve("server.pem");
    this.keyFile = dir.resolve("server.key");
    // deleteOnExit deletes in the reverse order of registration: the files, then the directory.
    dir.toFile().deleteOnExit();
    for (Path p : List.of(caFile, certificateFile, keyFile)) {
      p.toFile().deleteOnExit();
    }
    Files.writeString(caFile, pem("CERTIFICATE", encoded(ca)), StandardCharsets.US_ASCII);
    Files.writeString(certificateFile, pem("CERTIFICATE", encoded(certificate)), StandardCharsets.US_ASCII);
    Files.writeString(keyFile, pem("PRIVATE KEY", key.getEncoded()), StandardCharsets.US_ASCII);
  }

  /** A new CA and a server certificate for a server listening on {@code bind} (a wildcard: every interface). */
  static BenchCertificates create(String bind) throws IOException {
    List<String> names = subjectAlternativeNames(bind);
    try {
      KeyPair caKeys = ecKeys();
      X500Name caName = new X500Name("CN=Petrel benchmark CA " + Long.toHexString(new SecureRandom().nextLong()));
      Instant now = Instant.now();
      Date from = Date.from(now.minus(Duration.ofHours(1)));
      Date until = Date.from(now.plus(VALIDITY));
      JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
      X509v3CertificateBuilder cb = new JcaX509v3CertificateBuilder(caName, serial(), from, until, caName,
          caKeys.getPublic());
      cb.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
      cb.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
      cb.addExtension(Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(caKeys.getPublic()));
      X509Certificate ca = sign(cb, caKeys.getPrivate());

      KeyPair serverKeys = ecKeys();
      X509v3CertificateBuilder sb = new JcaX509v3CertificateBuilder(caName, serial(), from, until,
          new X500Name("CN=petrel-benchmark-server"), serverKeys.getPublic());
      sb.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
      sb.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature));
      sb.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth));
      sb.addExtension(Extension.subjectKeyIdentifier, false,
          ext.createSubjectKeyIdentifier(serverKeys.getPublic()));
      sb.addExtension(Extension.authorityKeyIdentifier, false, ext.createAuthorityKeyIdentifier(ca));
      List<GeneralName> sans = new ArrayList<>();
      for (String n : names) {
        sans.add(new GeneralName(isIpLiteral(n) ? GeneralName.iPAddress : GeneralName.dNSName, n));
      }
      sb.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(sans.toArray(new GeneralName[0])));
      X509Certificate server = sign(sb, caKeys.getPrivate());
      return new BenchCertificates(Files.createTempDirectory("petrel-bench-tls"), ca, server,
          serverKeys.getPrivate(), names);
    } catch (GeneralSecurityException e) {
      throw new IOException("cannot make the benchmark server's TLS certificate: " + e, e);
    }
  }

  /**
   * The names and addresses the server certificate lists: localhost, the loopback addresses, the bind address
   * unless it is a wildcard, this host's name (and its canonical name), and every address of every interface.
   */
  static List<String> subjectAlternativeNames(String bind) {
    Set<String> names = new LinkedHashSet<>(List.of("localhost", "127.0.0.1"));
    try {
      names.add(address(InetAddress.getByName("::1")));
    } catch (UnknownHostException e) {
      // no IPv6
    }
    if (bind != null && !bind.isBlank()) {
      try {
        InetAddress b = InetAddress.getByName(bind);
        if (!b.isAnyLocalAddress()) {
          names.add(isIpLiteral(bind) ? address(b) : bind.toLowerCase(Locale.ROOT));
          names.add(address(b));
        }
      } catch (UnknownHostException e) {
        names.add(bind.toLowerCase(Locale.ROOT)); // the server will fail to bind anyway, and say so
      }
    }
    try {
      InetAddress local = InetAddress.getLocalHost();
      addName(names, local.getHostName());
      addName(names, local.getCanonicalHostName());
      names.add(address(local));
    } catch (UnknownHostException e) {
      // No resolvable host name: the interface addresses below still cover remote clients.
    }
    try {
      for (NetworkInterface ni : Collections.list(NetworkInterface.getNetworkInterfaces())) {
        for (InetAddress a : Collections.list(ni.getInetAddresses())) {
          names.add(address(a));
        }
      }
    } catch (SocketException e) {
      // Loopback and the host name are still listed.
    }
    return List.copyOf(names);
  }

  private static void addName(Set<String> names, String host) {
    if (host != null && !host.isBlank() && !isIpLiteral(host)) {
      names.add(host.toLowerCase(Locale.ROOT));
    }
  }

  /** The textual address without an IPv6 scope ("fe80::1%eth0" becomes "fe80::1"). */
  private static String address(InetAddress a) {
    String s = a.getHostAddress();
    int scope = s.indexOf('%');
    return scope >= 0 ? s.substring(0, scope) : s;
  }

  private static boolean isIpLiteral(String s) {
    return s.matches("[0-9.]+") || s.contains(":");
  }

  /** PEM file of the CA certificate (what clients trust). */
  Path caFile() {
    return caFile;
  }

  /** PEM file of the server certificate. */
  Path certificateFile() {
    return certificateFile;
  }

  /** PEM file of the server's private key (PKCS#8). */
  Path keyFile() {
    return keyFile;
  }

  X509Certificate ca() {
    return ca;
  }

  X509Certificate certificate() {
    return certificate;
  }

  /** The subject alternative names of the server certificate. */
  List<String> names() {
    return names;
  }

  /** The CA certificate on one line: the base64 of its DER encoding (the body of its PEM form). */
  String caLine() {
    return Base64.getEncoder().encodeToString(encoded(ca));
  }

  /** Parses a {@link #caLine()}. */
  static X509Certificate parseCaLine(String line) throws CertificateException {
    byte[] der;
    try {
      der = Base64.getDecoder().decode(line.trim());
    } catch (IllegalArgumentException e) {
      throw new CertificateException("not a base64 certificate: " + e.getMessage(), e);
    }
    return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(new ByteArrayInputStream(der));
  }

  /** Writes {@code certificate} as a PEM file. */
  static void writePem(Path file, X509Certificate certificate) throws IOException {
    Files.writeString(file, pem("CERTIFICATE", encoded(certificate)), StandardCharsets.US_ASCII);
  }

  /** Deletes the files and their directory. */
  @Override
  public void close() {
    for (Path p : List.of(caFile, certificateFile, keyFile, dir)) {
      try {
        Files.deleteIfExists(p);
      } catch (IOException e) {
        System.err.println("benchmark server: cannot delete " + p + ": " + e);
      }
    }
  }

  private static byte[] encoded(X509Certificate c) {
    try {
      return c.getEncoded();
    } catch (CertificateException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String pem(String type, byte[] der) {
    String body = Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der);
    return "-----BEGIN " + type + "-----\n" + body + "\n-----END " + type + "-----\n";
  }

  private static KeyPair ecKeys() throws GeneralSecurityException {
    KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
    g.initialize(new ECGenParameterSpec("secp256r1"));
    return g.generateKeyPair();
  }

  private static BigInteger serial() {
    return new BigInteger(63, new SecureRandom()).add(BigInteger.ONE);
  }

  private static X509Certificate sign(X509v3CertificateBuilder b, PrivateKey issuerKey)
      throws GeneralSecurityException {
    try {
      return new JcaX509CertificateConverter().getCertificate(
          b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(issuerKey)));
    } catch (OperatorCreationException e) {
      throw new GeneralSecurityException(e);
    }
  }
}
