package io.petrel.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.petrel.rpc.RpcClient;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** Mutual TLS set up with properties only, on both sides, over 127.0.0.1. */
class TlsPropertiesTest {
  @TempDir
  Path dir;

  private static KeyPair ecKeys() throws Exception {
    KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
    g.initialize(new ECGenParameterSpec("secp256r1"));
    return g.generateKeyPair();
  }

  private static X509Certificate certificate(String subject, KeyPair subjectKeys, String issuer, PrivateKey issuerKey,
      boolean ca) throws Exception {
    Instant now = Instant.now();
    X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(new X500Name("CN=" + issuer),
        BigInteger.valueOf(System.nanoTime()), Date.from(now.minus(Duration.ofDays(1))),
        Date.from(now.plus(Duration.ofDays(30))), new X500Name("CN=" + subject), subjectKeys.getPublic());
    b.addExtension(Extension.basicConstraints, true, new BasicConstraints(ca));
    if (!ca) {
      b.addExtension(Extension.subjectAlternativeName, false,
          new GeneralNames(new GeneralName(GeneralName.iPAddress, "127.0.0.1")));
    }
    return new JcaX509CertificateConverter().getCertificate(
        b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(issuerKey)));
  }

  private Path pem(String file, String type, byte[] der) throws Exception {
    Path p = dir.resolve(file);
    Files.writeString(p, "-----BEGIN " + type + "-----\n"
        + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der) + "\n-----END " + type + "-----\n",
        StandardCharsets.US_ASCII);
    return p;
  }

  @Test
  void serverAndClientSpeakMutualTlsConfiguredByProperties() throws Exception {
    KeyPair caKeys = ecKeys();
    Path ca = pem("ca.pem", "CERTIFICATE", certificate("test-ca", caKeys, "test-ca", caKeys.getPrivate(), true)
        .getEncoded());
    KeyPair serverKeys = ecKeys();
    Path serverCert = pem("server.pem", "CERTIFICATE",
        certificate("server", serverKeys, "test-ca", caKeys.getPrivate(), false).getEncoded());
    Path serverKey = pem("server.key", "PRIVATE KEY", serverKeys.getPrivate().getEncoded());
    KeyPair clientKeys = ecKeys();
    Path clientCert = pem("client.pem", "CERTIFICATE",
        certificate("client", clientKeys, "test-ca", caKeys.getPrivate(), false).getEncoded());
    Path clientKey = pem("client.key", "PRIVATE KEY", clientKeys.getPrivate().getEncoded());

    new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(PetrelAutoConfiguration.class))
        .withUserConfiguration(PetrelAutoConfigurationTest.Echo.class)
        .withPropertyValues("petrel.server.port=0", "petrel.server.address=127.0.0.1",
            "petrel.server.tls.enabled=true", "petrel.server.tls.certificate-chain=" + serverCert,
            "petrel.server.tls.private-key=" + serverKey, "petrel.server.tls.trust-certificates=" + ca,
            "petrel.server.tls.client-auth=REQUIRE")
        .run(server -> {
          assertThat(server).hasNotFailed();
          int port = server.getBean(PetrelServerLifecycle.class).port();
          new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(PetrelAutoConfiguration.class))
              .withPropertyValues("petrel.server.enabled=false", "petrel.clients.secure.target=127.0.0.1:" + port,
                  "petrel.clients.secure.tls.enabled=true", "petrel.clients.secure.tls.trust-certificates=" + ca,
                  "petrel.clients.secure.tls.certificate-chain=" + clientCert,
                  "petrel.clients.secure.tls.private-key=" + clientKey,
                  "petrel.clients.named.target=localhost:" + port, "petrel.clients.named.tls.enabled=true",
                  "petrel.clients.named.tls.trust-certificates=" + ca,
                  "petrel.clients.named.tls.certificate-chain=" + clientCert,
                  "petrel.clients.named.tls.private-key=" + clientKey,
                  "petrel.clients.named.tls.server-name=127.0.0.1",
                  "petrel.clients.misnamed.target=127.0.0.1:" + port, "petrel.clients.misnamed.tls.enabled=true",
                  "petrel.clients.misnamed.tls.trust-certificates=" + ca,
                  "petrel.clients.misnamed.tls.server-name=greeter.example",
                  "petrel.clients.misnamed.default-deadline=5s",
                  "petrel.clients.plain.target=127.0.0.1:" + port,
                  "petrel.clients.plain.default-deadline=5s")
              .run(client -> {
                PetrelClients clients = client.getBean(PetrelClients.class);
                assertThat(clients.client("secure").isSecure()).isTrue();
                assertThat(clients.client("secure").unaryCall(EchoService.ECHO, "tls")).isEqualTo("tls");
                // Dialled as localhost, which the certificate does not name: server-name says what to expect.
                assertThat(clients.client("named").unaryCall(EchoService.ECHO, "named")).isEqualTo("named");
                assertThatThrownBy(() -> clients.client("misnamed").unaryCall(EchoService.ECHO, "misnamed"))
                    .isInstanceOfSatisfying(StatusException.class, e -> assertThat(e.getMessage())
                        .contains("does not match the name 'greeter.example' the client expects"));
                assertThatThrownBy(() -> clients.client("plain").unaryCall(EchoService.ECHO, "plain"))
                    .isInstanceOfSatisfying(StatusException.class,
                        e -> assertThat(e.code()).isEqualTo(Status.Code.UNAVAILABLE));
              });
        });
  }

  /**
   * Mutual TLS from Spring Boot SSL bundles (spring.ssl.bundle.pem.*) named by petrel.*.tls.bundle, which turns TLS
   * on; a bundle that does not exist, or one beside the file properties, fails the start saying so.
   */
  @Test
  void sslBundlesGiveTheCertificatesOfBothSides() throws Exception {
    KeyPair caKeys = ecKeys();
    Path ca = pem("b-ca.pem", "CERTIFICATE", certificate("test-ca", caKeys, "test-ca", caKeys.getPrivate(), true)
        .getEncoded());
    KeyPair serverKeys = ecKeys();
    Path serverCert = pem("b-server.pem", "CERTIFICATE",
        certificate("server", serverKeys, "test-ca", caKeys.getPrivate(), false).getEncoded());
    Path serverKey = pem("b-server.key", "PRIVATE KEY", serverKeys.getPrivate().getEncoded());
    KeyPair clientKeys = ecKeys();
    Path clientCert = pem("b-client.pem", "CERTIFICATE",
        certificate("client", clientKeys, "test-ca", caKeys.getPrivate(), false).getEncoded());
    Path clientKey = pem("b-client.key", "PRIVATE KEY", clientKeys.getPrivate().getEncoded());
    AutoConfigurations withSsl = AutoConfigurations.of(PetrelAutoConfiguration.class,
        org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration.class);
    new ApplicationContextRunner().withConfiguration(withSsl)
        .withUserConfiguration(PetrelAutoConfigurationTest.Echo.class)
        .withPropertyValues("petrel.server.port=0", "petrel.server.address=127.0.0.1",
            "spring.ssl.bundle.pem.server.keystore.certificate=file:" + serverCert,
            "spring.ssl.bundle.pem.server.keystore.private-key=file:" + serverKey,
            "spring.ssl.bundle.pem.server.truststore.certificate=file:" + ca,
            "petrel.server.tls.bundle=server", "petrel.server.tls.client-auth=REQUIRE")
        .run(server -> {
          assertThat(server).hasNotFailed();
          int port = server.getBean(PetrelServerLifecycle.class).port();
          new ApplicationContextRunner().withConfiguration(withSsl)
              .withPropertyValues("petrel.server.enabled=false",
                  "spring.ssl.bundle.pem.client.keystore.certificate=file:" + clientCert,
                  "spring.ssl.bundle.pem.client.keystore.private-key=file:" + clientKey,
                  "spring.ssl.bundle.pem.client.truststore.certificate=file:" + ca,
                  "spring.ssl.bundle.pem.trust-only.truststore.certificate=file:" + ca,
                  "petrel.clients.secure.target=127.0.0.1:" + port, "petrel.clients.secure.tls.bundle=client",
                  "petrel.clients.anonymous.target=127.0.0.1:" + port,
                  "petrel.clients.anonymous.tls.bundle=trust-only",
                  "petrel.clients.anonymous.default-deadline=5s")
              .run(client -> {
                PetrelClients clients = client.getBean(PetrelClients.class);
                assertThat(clients.client("secure").isSecure()).isTrue();
                assertThat(clients.client("secure").unaryCall(EchoService.ECHO, "bundled")).isEqualTo("bundled");
                // Trusting the server without a certificate of its own: the server requires one.
                assertThatThrownBy(() -> clients.client("anonymous").unaryCall(EchoService.ECHO, "x"))
                    .isInstanceOfSatisfying(StatusException.class,
                        e -> assertThat(e.code()).isEqualTo(Status.Code.UNAVAILABLE));
              });
        });
    new ApplicationContextRunner().withConfiguration(withSsl)
        .withUserConfiguration(PetrelAutoConfigurationTest.Echo.class)
        .withPropertyValues("petrel.server.port=0", "petrel.server.address=127.0.0.1",
            "petrel.server.tls.bundle=nope")
        .run(context -> assertThat(context.getStartupFailure()).hasStackTraceContaining(
            "petrel.server.tls.bundle=nope: there is no SSL bundle named 'nope'"));
    new ApplicationContextRunner().withConfiguration(withSsl)
        .withUserConfiguration(PetrelAutoConfigurationTest.Echo.class)
        .withPropertyValues("petrel.server.port=0", "petrel.server.address=127.0.0.1",
            "spring.ssl.bundle.pem.server.keystore.certificate=file:" + serverCert,
            "spring.ssl.bundle.pem.server.keystore.private-key=file:" + serverKey,
            "petrel.server.tls.bundle=server", "petrel.server.tls.trust-certificates=" + ca)
        .run(context -> assertThat(context.getStartupFailure()).hasStackTraceContaining(
            "are two sources of the same material"));
    new ApplicationContextRunner().withConfiguration(withSsl)
        .withUserConfiguration(PetrelAutoConfigurationTest.Echo.class)
        .withPropertyValues("petrel.server.port=0", "petrel.server.address=127.0.0.1",
            "spring.ssl.bundle.pem.trust-only.truststore.certificate=file:" + ca,
            "petrel.server.tls.bundle=trust-only")
        .run(context -> assertThat(context.getStartupFailure()).hasStackTraceContaining(
            "petrel.server.tls.bundle=trust-only: the bundle has no key store, and a server needs its certificate"));
  }

  /**
   * {@code tls.enabled=false} beside {@code tls.bundle}: serving TLS would ignore the one, plaintext the other, so
   * the start fails naming both and what to do, on the server and on a client; {@code enabled=true} beside a bundle
   * is TLS, and an empty bundle (a profile turning the bundle off) is none: plaintext.
   */
  @Test
  void enabledFalseBesideABundleFailsTheStartNamingBoth() throws Exception {
    KeyPair keys = ecKeys();
    X509Certificate self = certificate("self", keys, "self", keys.getPrivate(), false);
    Path cert = pem("off.pem", "CERTIFICATE", self.getEncoded());
    Path key = pem("off.key", "PRIVATE KEY", keys.getPrivate().getEncoded());
    ApplicationContextRunner withBundle = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(PetrelAutoConfiguration.class,
            org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration.class))
        .withPropertyValues("spring.ssl.bundle.pem.petrel.keystore.certificate=file:" + cert,
            "spring.ssl.bundle.pem.petrel.keystore.private-key=file:" + key,
            "spring.ssl.bundle.pem.petrel.truststore.certificate=file:" + cert);
    ApplicationContextRunner server = withBundle.withUserConfiguration(PetrelAutoConfigurationTest.Echo.class)
        .withPropertyValues("petrel.server.port=0", "petrel.server.address=127.0.0.1");
    server.withPropertyValues("petrel.server.tls.bundle=petrel", "petrel.server.tls.enabled=false")
        .run(context -> assertThat(context.getStartupFailure()).hasStackTraceContaining(
            "petrel.server.tls.enabled=false and petrel.server.tls.bundle=petrel contradict each other: the bundle"
                + " turns TLS on, enabled=false turns it off. To serve TLS with the bundle, remove"
                + " petrel.server.tls.enabled (or set it to true); to serve plaintext, remove"
                + " petrel.server.tls.bundle (or set it empty, e.g. in a profile)"));
    ApplicationContextRunner client = withBundle.withPropertyValues("petrel.server.enabled=false");
    client.withPropertyValues("petrel.clients.x.target=127.0.0.1:1", "petrel.clients.x.tls.bundle=petrel",
        "petrel.clients.x.tls.enabled=false").run(context -> assertThat(context.getStartupFailure())
            .hasStackTraceContaining("petrel.clients.x.tls.enabled=false and petrel.clients.x.tls.bundle=petrel"
                + " contradict each other")
            .hasStackTraceContaining("To call over TLS with the bundle, remove petrel.clients.x.tls.enabled (or set"
                + " it to true); to call in plaintext, remove petrel.clients.x.tls.bundle"));
    server.withPropertyValues("petrel.server.tls.bundle=petrel", "petrel.server.tls.enabled=true").run(secure -> {
      assertThat(secure).hasNotFailed();
      int port = secure.getBean(PetrelServerLifecycle.class).port();
      client.withPropertyValues("petrel.clients.tls.target=127.0.0.1:" + port, "petrel.clients.tls.tls.bundle=petrel",
          "petrel.clients.tls.tls.enabled=true", "petrel.clients.plain.target=127.0.0.1:" + port,
          "petrel.clients.plain.tls.bundle=", "petrel.clients.plain.default-deadline=5s").run(c -> {
            PetrelClients clients = c.getBean(PetrelClients.class);
            assertThat(clients.client("tls").unaryCall(EchoService.ECHO, "on")).isEqualTo("on");
            assertThat(clients.client("plain").isSecure()).as("an empty bundle is no bundle").isFalse();
            assertThatThrownBy(() -> clients.client("plain").unaryCall(EchoService.ECHO, "plain"))
                .isInstanceOfSatisfying(StatusException.class,
                    e -> assertThat(e.code()).isEqualTo(Status.Code.UNAVAILABLE));
          });
    });
    server.withPropertyValues("petrel.server.tls.bundle=").run(plain -> {
      assertThat(plain).hasNotFailed();
      int port = plain.getBean(PetrelServerLifecycle.class).port();
      client.withPropertyValues("petrel.clients.plain.target=127.0.0.1:" + port).run(c -> assertThat(
          c.getBean(PetrelClients.class).client("plain").unaryCall(EchoService.ECHO, "plaintext"))
          .isEqualTo("plaintext"));
    });
  }

  /** A client-only TLS property set on the server (or the reverse) fails the start naming the property. */
  @Test
  void aTlsPropertyOfTheOtherSideFailsTheStartNamingIt() throws Exception {
    KeyPair keys = ecKeys();
    Path cert = pem("self.pem", "CERTIFICATE", certificate("self", keys, "self", keys.getPrivate(), true)
        .getEncoded());
    Path key = pem("self.key", "PRIVATE KEY", keys.getPrivate().getEncoded());
    new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(PetrelAutoConfiguration.class))
        .withUserConfiguration(PetrelAutoConfigurationTest.Echo.class)
        .withPropertyValues("petrel.server.port=0", "petrel.server.address=127.0.0.1",
            "petrel.server.tls.enabled=true", "petrel.server.tls.certificate-chain=" + cert,
            "petrel.server.tls.private-key=" + key, "petrel.server.tls.insecure-skip-hostname-verification=true")
        .run(context -> assertThat(context.getStartupFailure()).hasStackTraceContaining(
            "petrel.server.tls.insecure-skip-hostname-verification=true is a client option"));
    new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(PetrelAutoConfiguration.class))
        .withPropertyValues("petrel.server.enabled=false", "petrel.clients.x.target=127.0.0.1:1",
            "petrel.clients.x.tls.enabled=true", "petrel.clients.x.tls.client-auth=REQUIRE")
        .run(context -> assertThat(context.getStartupFailure()).hasStackTraceContaining(
            "petrel.clients.x.tls.client-auth=REQUIRE is a server option"));
    new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(PetrelAutoConfiguration.class))
        .withUserConfiguration(PetrelAutoConfigurationTest.Echo.class)
        .withPropertyValues("petrel.server.port=0", "petrel.server.address=127.0.0.1",
            "petrel.server.tls.enabled=true", "petrel.server.tls.certificate-chain=" + cert,
            "petrel.server.tls.private-key=" + key, "petrel.server.tls.server-name=greeter.example")
        .run(context -> assertThat(context.getStartupFailure()).hasStackTraceContaining(
            "petrel.server.tls.server-name=greeter.example is a client option"));
    new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(PetrelAutoConfiguration.class))
        .withPropertyValues("petrel.server.enabled=false", "petrel.clients.x.target=127.0.0.1:1",
            "petrel.clients.x.tls.enabled=true", "petrel.clients.x.tls.server-name=greeter.example:7000")
        .run(context -> assertThat(context.getStartupFailure()).hasStackTraceContaining(
            "petrel.clients.x.tls.server-name=greeter.example:7000 is refused: serverName is the name"));
    // A server name with TLS off: on a server a mistake whatever TLS is; on a client it would mean plaintext.
    new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(PetrelAutoConfiguration.class))
        .withUserConfiguration(PetrelAutoConfigurationTest.Echo.class)
        .withPropertyValues("petrel.server.port=0", "petrel.server.address=127.0.0.1",
            "petrel.server.tls.server-name=greeter.example")
        .run(context -> assertThat(context.getStartupFailure()).hasStackTraceContaining(
            "petrel.server.tls.server-name=greeter.example is a client option"));
    new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(PetrelAutoConfiguration.class))
        .withPropertyValues("petrel.server.enabled=false", "petrel.clients.x.target=127.0.0.1:1",
            "petrel.clients.x.tls.server-name=greeter.example")
        .run(context -> assertThat(context.getStartupFailure()).hasStackTraceContaining(
            "petrel.clients.x.tls.server-name=greeter.example is set, but TLS is off for client 'x'"));
  }
}
