package io.petrel.rpc.transport.netty;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
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

/** Certificates for the TLS tests, made at run time with BouncyCastle: EC P-256 keys, ECDSA signatures. */
final class TestCertificates {
  private static final AtomicLong SERIAL = new AtomicLong(System.currentTimeMillis());

  private TestCertificates() {}

  /** A certificate with its key, and the chain to write next to it. */
  record Issued(X509Certificate certificate, PrivateKey key) {
    /** Writes {@code <name>.pem} (the certificate) and {@code <name>.key} (PKCS#8) into {@code dir}. */
    PemFiles written(Path dir, String name) throws IOException {
      Path pem = dir.resolve(name + ".pem");
      Path key = dir.resolve(name + ".key");
      writeCertificates(pem, certificate);
      writeKey(key, this.key);
      return new PemFiles(pem, key);
    }

    /** A PKCS#12 key store in memory holding this key and certificate under alias "key". */
    KeyStore keyStore(char[] password) throws GeneralSecurityException, IOException {
      KeyStore ks = KeyStore.getInstance("PKCS12");
      ks.load(null, null);
      ks.setKeyEntry("key", key, password, new X509Certificate[] {certificate});
      return ks;
    }
  }

  /** The two files of an {@link Issued}. */
  record PemFiles(Path certificate, Path key) {}

  /** A certificate authority that issues certificates. */
  static final class Authority {
    final X509Certificate certificate;
    private final KeyPair keys;
    private final X500Name name;

    private Authority(String commonName) throws GeneralSecurityException, IOException {
      this.keys = ecKeys();
      this.name = new X500Name("CN=" + commonName);
      Instant now = Instant.now();
      X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(name, serial(),
          Date.from(now.minus(Duration.ofDays(1))), Date.from(now.plus(Duration.ofDays(365))), name,
          keys.getPublic());
      b.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
      b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
      b.addExtension(Extension.subjectKeyIdentifier, false,
          new JcaX509ExtensionUtils().createSubjectKeyIdentifier(keys.getPublic()));
      this.certificate = sign(b, keys.getPrivate());
    }

    static Authority create(String commonName) throws GeneralSecurityException, IOException {
      return new Authority(commonName);
    }

    /** A certificate valid from a day ago for a year, for server and client use, naming {@code hosts}. */
    Issued issue(String commonName, String... hosts) throws GeneralSecurityException, IOException {
      Instant now = Instant.now();
      return issue(commonName, now.minus(Duration.ofDays(1)), now.plus(Duration.ofDays(365)), hosts);
    }

    /** A certificate valid between the given times, naming {@code hosts} (DNS names or IPv4 addresses). */
    Issued issue(String commonName, Instant notBefore, Instant notAfter, String... hosts)
        throws GeneralSecurityException, IOException {
      KeyPair leaf = ecKeys();
      X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(name, serial(), Date.from(notBefore),
          Date.from(notAfter), new X500Name("CN=" + commonName), leaf.getPublic());
      JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
      b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
      b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature));
      b.addExtension(Extension.extendedKeyUsage, false,
          new ExtendedKeyUsage(new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}));
      b.addExtension(Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(leaf.getPublic()));
      b.addExtension(Extension.authorityKeyIdentifier, false, ext.createAuthorityKeyIdentifier(certificate));
      if (hosts.length > 0) {
        List<GeneralName> names = new ArrayList<>();
        for (String h : hosts) {
          names.add(new GeneralName(h.matches("[0-9.]+") ? GeneralName.iPAddress : GeneralName.dNSName, h));
        }
        b.addExtension(Extension.subjectAlternativeName, false,
            new GeneralNames(names.toArray(new GeneralName[0])));
      }
      return new Issued(sign(b, keys.getPrivate()), leaf.getPrivate());
    }

    /** Writes the CA certificate as PEM. */
    Path write(Path file) throws IOException {
      writeCertificates(file, certificate);
      return file;
    }

    /** A PKCS#12 trust store in memory holding the CA certificate. */
    KeyStore trustStore() throws GeneralSecurityException, IOException {
      KeyStore ks = KeyStore.getInstance("PKCS12");
      ks.load(null, null);
      ks.setCertificateEntry("ca", certificate);
      return ks;
    }
  }

  static void writeCertificates(Path file, X509Certificate... certs) throws IOException {
    StringBuilder sb = new StringBuilder();
    for (X509Certificate c : certs) {
      try {
        sb.append(pem("CERTIFICATE", c.getEncoded()));
      } catch (java.security.cert.CertificateEncodingException e) {
        throw new IOException(e);
      }
    }
    Files.writeString(file, sb.toString(), StandardCharsets.US_ASCII);
  }

  static void writeKey(Path file, PrivateKey key) throws IOException {
    Files.writeString(file, pem("PRIVATE KEY", key.getEncoded()), StandardCharsets.US_ASCII);
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
    return BigInteger.valueOf(SERIAL.incrementAndGet());
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
