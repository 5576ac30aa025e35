package io.petrel.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcClientBuilder;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.RpcServerBuilder;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.TlsConfig;
import java.io.IOException;
import java.lang.ref.WeakReference;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Key;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.Date;
import java.util.Enumeration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509KeyManager;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.ssl.DefaultSslBundleRegistry;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundleRegistry;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.boot.ssl.SslStoreBundle;
import org.springframework.boot.ssl.pem.PemSslStoreBundle;
import org.springframework.boot.ssl.pem.PemSslStoreDetails;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * An SSL bundle named by {@code petrel.*.tls.bundle}, with {@code reload-on-update=true}, whose PEM files are
 * rewritten (a certificate renewed): Boot's file watcher reloads the bundle, and new connections of the server and
 * of the clients present the new certificate, with no restart; an update that cannot be used (a certificate
 * without its key) leaves the previous one in use. Real files, Boot's real watcher, real sockets on 127.0.0.1.
 */
class SslBundleReloadTest {
  /** How long Boot's watcher and the reload may take, at most, on a slow machine. */
  private static final long DEADLINE_SECONDS = 30;

  @TempDir
  Path dir;
  private Path tls;
  private Path staging;
  private KeyPair caKeys;
  private X509Certificate ca;

  @BeforeEach
  void ca() throws Exception {
    tls = Files.createDirectory(dir.resolve("tls"));
    staging = Files.createDirectory(dir.resolve("staging"));
    caKeys = ecKeys();
    ca = certificate("test-ca", caKeys, caKeys.getPrivate(), true, BigInteger.ONE);
    write("ca.pem", pem("CERTIFICATE", ca.getEncoded()));
  }

  private static KeyPair ecKeys() throws Exception {
    KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
    g.initialize(new ECGenParameterSpec("secp256r1"));
    return g.generateKeyPair();
  }

  private static X509Certificate certificate(String subject, KeyPair subjectKeys, PrivateKey issuerKey, boolean ca,
      BigInteger serial) throws Exception {
    Instant now = Instant.now();
    X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(new X500Name("CN=test-ca"), serial,
        Date.from(now.minus(Duration.ofDays(1))), Date.from(now.plus(Duration.ofDays(30))),
        new X500Name("CN=" + subject), subjectKeys.getPublic());
    b.addExtension(Extension.basicConstraints, true, new BasicConstraints(ca));
    if (!ca) {
      b.addExtension(Extension.subjectAlternativeName, false,
          new GeneralNames(new GeneralName(GeneralName.iPAddress, "127.0.0.1")));
    }
    return new JcaX509CertificateConverter().getCertificate(
        b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(issuerKey)));
  }

  private static String pem(String type, byte[] der) {
    return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
        + "\n-----END " + type + "-----\n";
  }

  /**
   * Puts {@code text} in place as {@code tls/name} in one step (written aside, then renamed), as a certificate
   * manager does: the watcher never sees half a file.
   */
  private Path write(String name, String text) throws IOException {
    Path aside = Files.writeString(staging.resolve(name + "." + System.nanoTime()), text, StandardCharsets.US_ASCII);
    return Files.move(aside, tls.resolve(name), StandardCopyOption.ATOMIC_MOVE,
        StandardCopyOption.REPLACE_EXISTING);
  }

  /** A certificate of {@code subject} with serial {@code serial}, signed by the CA, and its key, as PEM files. */
  private void issue(String subject, long serial) throws Exception {
    KeyPair keys = ecKeys();
    // The key first: a certificate written alone would not match the key in place.
    write(subject + ".key", pem("PRIVATE KEY", keys.getPrivate().getEncoded()));
    write(subject + ".pem", pem("CERTIFICATE",
        certificate(subject, keys, caKeys.getPrivate(), false, BigInteger.valueOf(serial)).getEncoded()));
  }

  /** The serial of the certificate a new TLS connection to the server presents (a bare handshake). */
  private BigInteger presented(int port) throws Exception {
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    trust.setCertificateEntry("ca", ca);
    TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, tmf.getTrustManagers(), null);
    try (SSLSocket s = (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", port)) {
      s.setSoTimeout(10_000);
      s.startHandshake();
      return ((X509Certificate) s.getSession().getPeerCertificates()[0]).getSerialNumber();
    }
  }

  /** test.Echo/echo answers the serial (hex) of the certificate the calling client presented, or "none". */
  @Configuration(proxyBeanMethods = false)
  static class PeerSerial {
    @Bean
    ServiceDefinition peerSerial() {
      return ServiceDefinition.builder(EchoService.NAME).unary(EchoService.ECHO, request -> {
        ServerContext c = ServerContext.current();
        List<X509Certificate> peer = c != null ? c.peerCertificates() : List.of();
        return peer.isEmpty() ? "none" : peer.get(0).getSerialNumber().toString(16);
      }).build();
    }
  }

  private ApplicationContextRunner runner(String bundle, String subject) {
    return new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(SslAutoConfiguration.class, PetrelAutoConfiguration.class))
        .withPropertyValues("spring.ssl.bundle.watch.file.quiet-period=200ms",
            "spring.ssl.bundle.pem." + bundle + ".reload-on-update=true",
            "spring.ssl.bundle.pem." + bundle + ".keystore.certificate=file:" + tls.resolve(subject + ".pem"),
            "spring.ssl.bundle.pem." + bundle + ".keystore.private-key=file:" + tls.resolve(subject + ".key"),
            "spring.ssl.bundle.pem." + bundle + ".truststore.certificate=file:" + tls.resolve("ca.pem"));
  }

  /** Boot's updates of bundle {@code name}, seen after Petrel's handler (registered first) has run. */
  private static BlockingQueue<SslBundle> updates(SslBundles bundles, String name) {
    BlockingQueue<SslBundle> updates = new LinkedBlockingQueue<>();
    bundles.addBundleUpdateHandler(name, updates::add);
    return updates;
  }

  private static void awaitUpdate(BlockingQueue<SslBundle> updates) throws InterruptedException {
    assertThat(updates.poll(DEADLINE_SECONDS, TimeUnit.SECONDS)).as("Boot reloaded the bundle").isNotNull();
  }

  @Test
  void theServerPresentsTheRenewedCertificateOnNewConnections() throws Exception {
    issue("server", 0x51);
    runner("server", "server").withUserConfiguration(PeerSerial.class)
        .withPropertyValues("petrel.server.port=0", "petrel.server.address=127.0.0.1",
            "petrel.server.tls.bundle=server", "petrel.server.tls.client-auth=OPTIONAL")
        .run(context -> {
          assertThat(context).hasNotFailed();
          int port = context.getBean(PetrelServerLifecycle.class).port();
          BlockingQueue<SslBundle> updates = updates(context.getBean(SslBundles.class), "server");
          assertThat(presented(port)).isEqualTo(0x51);

          // A renewed certificate written without its key: Boot reloads the bundle, Petrel refuses it.
          KeyPair other = ecKeys();
          write("server.pem", pem("CERTIFICATE",
              certificate("server", other, caKeys.getPrivate(), false, BigInteger.valueOf(0x52)).getEncoded()));
          awaitUpdate(updates);
          assertThat(presented(port)).as("the previous certificate, still whole, stays in use").isEqualTo(0x51);

          // Its key follows: the next update is used, by the next connection.
          write("server.key", pem("PRIVATE KEY", other.getPrivate().getEncoded()));
          awaitUpdate(updates);
          assertThat(presented(port)).isEqualTo(0x52);

          issue("server", 0x53); // key and certificate at once: one update, or two of which the first is refused
          BigInteger seen = BigInteger.ZERO;
          long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(DEADLINE_SECONDS);
          while (!seen.equals(BigInteger.valueOf(0x53)) && System.nanoTime() - deadline < 0) {
            awaitUpdate(updates); // each update is the event to look again at
            seen = presented(port);
          }
          assertThat(seen).isEqualTo(0x53);
        });
  }

  /**
   * Clients follow their bundle too: a client connected before the renewal keeps its connection (and the certificate
   * it presented), a client that connects after it presents the new one, to a server that asks for it.
   */
  @Test
  void clientsPresentTheRenewedCertificateOnNewConnections() throws Exception {
    issue("server", 0x51);
    issue("client", 0xc1);
    runner("server", "server").withUserConfiguration(PeerSerial.class)
        .withPropertyValues("petrel.server.port=0", "petrel.server.address=127.0.0.1",
            "petrel.server.tls.bundle=server", "petrel.server.tls.client-auth=REQUIRE")
        .run(server -> {
          assertThat(server).hasNotFailed();
          int port = server.getBean(PetrelServerLifecycle.class).port();
          List<String> clients = List.of("early", "late1", "late2", "late3");
          List<String> properties = new ArrayList<>();
          for (String name : clients) {
            properties.add("petrel.clients." + name + ".target=127.0.0.1:" + port);
            properties.add("petrel.clients." + name + ".tls.bundle=client");
          }
          runner("client", "client").withPropertyValues("petrel.server.enabled=false")
              .withPropertyValues(properties.toArray(String[]::new)).run(client -> {
                assertThat(client).hasNotFailed();
                PetrelClients petrel = client.getBean(PetrelClients.class);
                BlockingQueue<SslBundle> updates = updates(client.getBean(SslBundles.class), "client");
                assertThat(petrel.client("early").unaryCall(EchoService.ECHO, "who")).isEqualTo("c1");

                issue("client", 0xc2);
                // Each update, a client that has not connected yet connects: the first one after the renewal is
                // applied presents c2 (an update of the key alone, before its certificate, is refused).
                awaitUpdate(updates);
                String seen = "c1";
                for (String late : clients.subList(1, clients.size())) {
                  seen = petrel.client(late).unaryCall(EchoService.ECHO, "who");
                  if (seen.equals("c2") || updates.poll(DEADLINE_SECONDS, TimeUnit.SECONDS) == null) {
                    break;
                  }
                }
                assertThat(seen).as("the certificate a client connecting after the renewal presents")
                    .isEqualTo("c2");
                assertThat(petrel.client("early").unaryCall(EchoService.ECHO, "who"))
                    .as("an open connection keeps the certificate it was made with").isEqualTo("c1");
              });
        });
  }

  /**
   * Contexts whose clients follow a bundle of their parent context's SslBundles, each closed in turn (a child
   * context refreshed, tests starting many contexts under one parent): Boot's registry has no way to remove an
   * update handler, so the handlers stay with the parent; they must hold nothing of the closed contexts' clients
   * (on the old code each closed client stayed reachable from the parent's bundles, with all it holds: its
   * interceptors, meters, customizers' objects), and the bundle's next update is not followed by them.
   */
  @Test
  void aClosedContextsClientsAreNotHeldByItsParentsBundles() throws Exception {
    issue("client", 0xc1);
    new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(SslAutoConfiguration.class))
        .withPropertyValues(
            "spring.ssl.bundle.pem.client.keystore.certificate=file:" + tls.resolve("client.pem"),
            "spring.ssl.bundle.pem.client.keystore.private-key=file:" + tls.resolve("client.key"),
            "spring.ssl.bundle.pem.client.truststore.certificate=file:" + tls.resolve("ca.pem"))
        .run(parent -> {
          assertThat(parent).hasNotFailed();
          java.lang.ref.ReferenceQueue<RpcClient> collected = new java.lang.ref.ReferenceQueue<>();
          List<WeakReference<RpcClient>> closed = new ArrayList<>();
          for (int i = 0; i < 3; i++) {
            new ApplicationContextRunner().withParent(parent)
                .withConfiguration(AutoConfigurations.of(PetrelAutoConfiguration.class))
                .withPropertyValues("petrel.server.enabled=false", "petrel.clients.c.target=127.0.0.1:1",
                    "petrel.clients.c.tls.bundle=client")
                .run(child -> {
                  assertThat(child).hasNotFailed();
                  closed.add(new WeakReference<>(child.getBean(PetrelClients.class).client("c"), collected));
                });
          }
          SslBundles bundles = parent.getBean(SslBundles.class);
          ((SslBundleRegistry) bundles).updateBundle("client", bundles.getBundle("client"));
          int gone = 0;
          long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(DEADLINE_SECONDS);
          while (gone < closed.size() && System.nanoTime() < deadline) {
            System.gc();
            if (collected.remove(100) != null) { // the event: a closed client was collected
              gone++;
            }
          }
          assertThat(closed.size() - gone)
              .as("closed clients still reachable (from the parent's SSL bundles)").isZero();
        });
  }

  private SslBundle bundle(X509Certificate certificate, PrivateKey key) throws Exception {
    return SslBundle.of(new PemSslStoreBundle(
        PemSslStoreDetails.forCertificate(pem("CERTIFICATE", certificate.getEncoded()))
            .withPrivateKey(pem("PRIVATE KEY", key.getEncoded())),
        PemSslStoreDetails.forCertificate(pem("CERTIFICATE", ca.getEncoded()))));
  }

  /** The serial of the certificate in {@code config}'s key store, as the transport would read it now. */
  private static BigInteger serial(TlsConfig config) throws java.security.GeneralSecurityException {
    KeyStore keys = config.keyStore();
    assertThat(keys).isNotNull();
    String alias = Collections.list(keys.aliases()).get(0);
    return ((X509Certificate) keys.getCertificateChain(alias)[0]).getSerialNumber();
  }

  /**
   * What an update that cannot be used does: nothing reloaded, the stores as before (so that an explicit
   * reloadTls() does not take it either), and a WARN saying what failed and what to do.
   */
  @Test
  void anUpdateThatCannotBeUsedKeepsThePreviousMaterialAndSaysWhy() throws Exception {
    KeyPair keys = ecKeys();
    KeyPair stranger = ecKeys();
    assertThatThrownBy(() -> SslBundleTls.of("petrel.server.tls", "server", bundle(certificate("server", keys,
        caKeys.getPrivate(), false, BigInteger.valueOf(1)), stranger.getPrivate()), true))
        .as("at start too").isInstanceOf(IllegalStateException.class).hasMessageStartingWith(
            "petrel.server.tls.bundle=server: the private key does not belong to the certificate CN=server (serial 1)");
    SslBundleTls material = SslBundleTls.of("petrel.server.tls", "server",
        bundle(certificate("server", keys, caKeys.getPrivate(), false, BigInteger.valueOf(1)), keys.getPrivate()),
        true);
    TlsConfig.Builder t = TlsConfig.builder();
    material.configure(t);
    TlsConfig config = t.build();
    List<BigInteger> reloads = new ArrayList<>();
    List<IOException> failures = new ArrayList<>();
    material.follow(() -> {
      if (!failures.isEmpty()) {
        throw failures.remove(0);
      }
      try {
        reloads.add(serial(config));
      } catch (java.security.GeneralSecurityException e) {
        throw new IOException(e);
      }
    });

    KeyPair other = ecKeys();
    material.update(bundle(certificate("server", other, caKeys.getPrivate(), false, BigInteger.valueOf(2)),
        keys.getPrivate()));
    assertThat(material.lastWarning()).isEqualTo("SSL bundle 'server' was updated, but petrel.server.tls keeps its"
        + " previous certificate, key and trust for new connections: the private key does not belong to the"
        + " certificate CN=server (serial 2): were they replaced one at a time? write both (a bundle with"
        + " reload-on-update is read again; one without it at the next start). Fix the bundle's files"
        + " (spring.ssl.bundle.*.server.*): the next update is applied");
    assertThat(reloads).isEmpty();
    assertThat(serial(config)).isEqualTo(1);

    material.update(bundle(certificate("server", other, caKeys.getPrivate(), false, BigInteger.valueOf(2)),
        other.getPrivate()));
    assertThat(reloads).containsExactly(BigInteger.valueOf(2));

    failures.add(new IOException("cannot load TLS material (...): refused by the transport"));
    material.update(bundle(certificate("server", other, caKeys.getPrivate(), false, BigInteger.valueOf(3)),
        other.getPrivate()));
    assertThat(material.lastWarning()).contains("petrel.server.tls keeps its previous certificate, key and trust"
        + " for new connections: the Petrel server could not load it: cannot load TLS material (...): refused by the"
        + " transport");
    assertThat(serial(config)).as("the stores as the transport still uses them").isEqualTo(2);

    material.update(SslBundle.of(new PemSslStoreBundle(
        PemSslStoreDetails.forCertificate(pem("CERTIFICATE", ca.getEncoded()))
            .withPrivateKey("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"),
        PemSslStoreDetails.forCertificate(pem("CERTIFICATE", ca.getEncoded())))));
    assertThat(material.lastWarning()).contains("petrel.server.tls keeps its previous certificate, key and trust"
        + " for new connections: its stores cannot be loaded: ");
    assertThat(serial(config)).isEqualTo(2);

    material.update(SslBundle.of(new PemSslStoreBundle(
        PemSslStoreDetails.forCertificate(pem("CERTIFICATE", ca.getEncoded())).withPrivateKey(
            pem("PRIVATE KEY", caKeys.getPrivate().getEncoded())), null)));
    assertThat(material.lastWarning()).contains("it now has a key store and no trust store, it had one and one at"
        + " start (the JDK's CAs are trusted without one): restart the application to change which stores it has");
    assertThat(serial(config)).isEqualTo(2);
    assertThat(reloads).containsExactly(BigInteger.valueOf(2));
  }

  /**
   * A key manager that reads its key store on each handshake (PKIX's, the JDK's with
   * {@code ssl.KeyManagerFactory.algorithm=PKIX}; the default SunX509 copies the store when it is made), as the
   * transport makes one from the stores the starter gives it: while the transport builds its TLS with an update,
   * and after it refused one, the running context presents what it was built with (on the old code the update was
   * written into the very store the running context reads, before the transport had even seen it). The Netty
   * transport no longer makes one over the stores (it copies the key material of each context it builds); a
   * transport that did would still be right. A handshake that reads the stores while an update is loaded is
   * counted as a read of the previous material, as a reloadTls() on another thread is, so the transport loads an
   * update it took once more.
   */
  @Test
  void aKeyManagerReadingItsStoreOnEachHandshakeKeepsItsMaterialUntilTheTransportTookTheNext() throws Exception {
    KeyPair keys = ecKeys();
    SslBundleTls material = SslBundleTls.of("petrel.server.tls", "server",
        bundle(certificate("server", keys, caKeys.getPrivate(), false, BigInteger.valueOf(1)), keys.getPrivate()),
        true);
    TlsConfig.Builder t = TlsConfig.builder();
    material.configure(t);
    TlsConfig config = t.build();
    KeyManagerFactory pkix = KeyManagerFactory.getInstance("PKIX");
    pkix.init(config.keyStore(), config.keyStorePassword());
    X509KeyManager running = (X509KeyManager) pkix.getKeyManagers()[0];
    ExecutorService handshakes = Executors.newSingleThreadExecutor();
    try {
      List<String> reloads = new ArrayList<>();
      List<IOException> refusals = new ArrayList<>();
      material.follow(() -> {
        try {
          reloads.add("built with " + serial(config) + ", the running context presents "
              + handshakes.submit(() -> presents(running)).get(DEADLINE_SECONDS, TimeUnit.SECONDS));
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
        if (!refusals.isEmpty()) {
          throw refusals.remove(0);
        }
      });
      KeyPair other = ecKeys();
      refusals.add(new IOException("cannot load TLS material (...): refused by the transport"));
      material.update(bundle(certificate("server", other, caKeys.getPrivate(), false, BigInteger.valueOf(2)),
          other.getPrivate()));
      assertThat(handshakes.submit(() -> presents(running)).get(DEADLINE_SECONDS, TimeUnit.SECONDS))
          .as("after the transport refused the update").isEqualTo(1);
      material.update(bundle(certificate("server", other, caKeys.getPrivate(), false, BigInteger.valueOf(3)),
          other.getPrivate()));
      assertThat(reloads).containsExactly("built with 2, the running context presents 1",
          "built with 3, the running context presents 1", "built with 3, the running context presents 3");
      assertThat(handshakes.submit(() -> presents(running)).get(DEADLINE_SECONDS, TimeUnit.SECONDS))
          .as("once the transport took the update").isEqualTo(3);
    } finally {
      handshakes.shutdownNow();
    }
  }

  /**
   * The application calls the server's reloadTls() itself, on a thread of its own, just after the transport took an
   * update of the bundle and before the starter published it (until then the stores show the update to the
   * starter's reloading thread only): that reload builds from the previous material. The latest material still
   * wins: new connections present the update (on the old code, the previous certificate until the bundle's next
   * update).
   */
  @Test
  void anApplicationsReloadRacingThePublicationOfAnUpdateDoesNotBringBackThePreviousMaterial() throws Exception {
    KeyPair keys = ecKeys();
    SslBundleTls material = SslBundleTls.of("petrel.server.tls", "server",
        bundle(certificate("server", keys, caKeys.getPrivate(), false, BigInteger.valueOf(1)), keys.getPrivate()),
        true);
    TlsConfig.Builder t = TlsConfig.builder();
    material.configure(t);
    RpcServer server = RpcServer.builder().bindAddress("127.0.0.1", 0).tls(t.build())
        .addService(new EchoService().definition()).build().start();
    ExecutorService application = Executors.newSingleThreadExecutor();
    try {
      CountDownLatch taken = new CountDownLatch(1);
      CountDownLatch applicationReloaded = new CountDownLatch(1);
      material.follow(() -> {
        server.reloadTls(); // the starter's: the transport takes the update
        if (taken.getCount() > 0) {
          taken.countDown();
          try { // the application's reloadTls() runs now, before the starter publishes the update
            assertThat(applicationReloaded.await(DEADLINE_SECONDS, TimeUnit.SECONDS))
                .as("the application's reloadTls() ended").isTrue();
          } catch (InterruptedException e) {
            throw new IOException(e);
          }
        }
      });
      Future<?> applications = application.submit(() -> {
        assertThat(taken.await(DEADLINE_SECONDS, TimeUnit.SECONDS)).as("the transport took the update").isTrue();
        server.reloadTls();
        applicationReloaded.countDown();
        return null;
      });
      KeyPair renewed = ecKeys();
      material.update(bundle(certificate("server", renewed, caKeys.getPrivate(), false, BigInteger.valueOf(2)),
          renewed.getPrivate()));
      applications.get(DEADLINE_SECONDS, TimeUnit.SECONDS);
      assertThat(material.lastWarning()).isNull();
      assertThat(presented(server.port())).as("a new connection, once both reloads ended").isEqualTo(2);
      server.reloadTls();
      assertThat(presented(server.port())).as("after the application's next reloadTls()").isEqualTo(2);
    } finally {
      application.shutdownNow();
      server.shutdownNow();
      assertThat(server.awaitTermination(DEADLINE_SECONDS, TimeUnit.SECONDS)).as("the server stopped").isTrue();
    }
  }

  /**
   * The transport took an update while another thread read the stores, and loading it once more (for that thread's
   * reloadTls(), which may have built from the previous material) fails: one WARN says what happened and what to do,
   * and no INFO says the update is on new connections. On the old code the WARN said the previous certificate was
   * kept and to fix the bundle's files (which the transport had just loaded), and the INFO that followed said the
   * update was on new connections.
   */
  @Test
  void aFailedLoadOnceMoreIsReportedAsSuchAndNotAsAnUpdateApplied() throws Exception {
    KeyPair keys = ecKeys();
    SslBundleTls material = SslBundleTls.of("petrel.server.tls", "server",
        bundle(certificate("server", keys, caKeys.getPrivate(), false, BigInteger.valueOf(1)), keys.getPrivate()),
        true);
    TlsConfig.Builder t = TlsConfig.builder();
    material.configure(t);
    TlsConfig config = t.build();
    ExecutorService application = Executors.newSingleThreadExecutor();
    List<String> reloads = new ArrayList<>();
    material.follow(() -> {
      if (!reloads.isEmpty()) {
        throw new IOException("server 'petrel-server' is shutting down");
      }
      try {
        reloads.add("built with " + serial(config) + ", another thread read "
            + application.submit(() -> serial(config)).get(DEADLINE_SECONDS, TimeUnit.SECONDS));
      } catch (Exception e) {
        throw new IOException(e);
      }
    });
    Logger log = (Logger) LoggerFactory.getLogger(SslBundleTls.class);
    ListAppender<ILoggingEvent> seen = new ListAppender<>();
    seen.start();
    Level level = log.getLevel();
    log.setLevel(Level.INFO);
    log.addAppender(seen);
    try {
      KeyPair renewed = ecKeys();
      material.update(bundle(certificate("server", renewed, caKeys.getPrivate(), false, BigInteger.valueOf(2)),
          renewed.getPrivate()));
    } finally {
      log.detachAppender(seen);
      log.setLevel(level);
      application.shutdownNow();
    }
    assertThat(reloads).containsExactly("built with 2, another thread read 1");
    String warning = "SSL bundle 'server' was updated and the Petrel server took it, but a reloadTls() on another"
        + " thread during the update may have rebuilt its TLS from the previous material, and loading the update"
        + " once more failed: server 'petrel-server' is shutting down. New connections may get the previous"
        + " certificate, key and trust until the next reloadTls() of the Petrel server (its stores show the update:"
        + " call it once that is fixed) or the bundle's next update";
    assertThat(seen.list.stream().map(e -> e.getLevel() + " " + e.getFormattedMessage()).toList())
        .containsExactly("WARN " + warning);
    assertThat(material.lastWarning()).isEqualTo(warning);
    assertThat(serial(config)).as("what the stores show every thread now").isEqualTo(2);
  }

  /** The serial of the certificate a handshake with {@code keys} presents (as a server of EC keys chooses). */
  private static BigInteger presents(X509KeyManager keys) {
    String alias = keys.chooseServerAlias("EC", null, null);
    assertThat(alias).as("the key manager's choice").isNotNull();
    return keys.getCertificateChain(alias)[0].getSerialNumber();
  }

  /**
   * A bundle of key and trust stores (as {@code spring.ssl.bundle.jks.*} makes): {@code count} entries of one
   * certificate of {@code keys} with serial {@code serial}, under the aliases {@code prefix-0...}, and the CA.
   */
  private SslBundle storeBundle(String prefix, int count, KeyPair keys, long serial) throws Exception {
    X509Certificate certificate = certificate("server", keys, caKeys.getPrivate(), false, BigInteger.valueOf(serial));
    KeyStore keyStore = KeyStore.getInstance("PKCS12");
    keyStore.load(null, null);
    for (int i = 0; i < count; i++) {
      keyStore.setKeyEntry(prefix + "-" + i, keys.getPrivate(), "secret".toCharArray(),
          new X509Certificate[] {certificate});
    }
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    for (int i = 0; i < count; i++) {
      trust.setCertificateEntry(prefix + "-ca-" + i, ca);
    }
    return SslBundle.of(SslStoreBundle.of(keyStore, "secret", trust));
  }

  /**
   * The transport reads the stores a server's start (a client's build) got outside the material's lock, and Boot may
   * update the bundle in the middle of that read: here the read's steps, as the JDK's key and trust managers take
   * them (the aliases, then each one's key, then its certificate chain), with a real update of the bundle between
   * them, on one thread. The read sees one material throughout, and the client built then takes the update as soon
   * as it follows the bundle. On the old code the update rewrote those very stores under the read: the key came
   * from one material and the certificate from the other, and the aliases' enumeration failed with a
   * ConcurrentModificationException.
   */
  @Test
  void anUpdateInTheMiddleOfABuildsReadOfItsStoresIsNotSeenByThatRead() throws Exception {
    KeyPair keysA = ecKeys();
    KeyPair keysB = ecKeys();
    DefaultSslBundleRegistry registry = new DefaultSslBundleRegistry();
    registry.registerBundle("c", storeBundle("a", 2, keysA, 0xa));
    SslBundleTls material = new SslBundleTls.Registry(registry).material("petrel.clients.c.tls", "c", false);
    TlsConfig.Builder t = TlsConfig.builder();
    material.configure(t); // the client's builder gets its stores; the transport reads them when it is built
    TlsConfig config = t.build();
    KeyStore keys = Objects.requireNonNull(config.keyStore());
    KeyStore trust = Objects.requireNonNull(config.trustStore());
    // A certificate under the same key alias, as a renewed PEM bundle has; trusted certificates under other aliases.
    SslBundle renewed = SslBundle.of(SslStoreBundle.of(storeKeys("a-0", keysB, 0xb), "secret",
        storeBundle("b", 2, keysB, 0xb).getStores().getTrustStore()));

    Enumeration<String> trusted = trust.aliases();
    String firstTrusted = trusted.nextElement();
    Key key = keys.getKey("a-0", config.keyStorePassword());
    registry.updateBundle("c", renewed); // Boot's file watcher, meanwhile
    X509Certificate certificate = (X509Certificate) keys.getCertificateChain("a-0")[0];
    List<String> aliases = new ArrayList<>(List.of(firstTrusted));
    while (trusted.hasMoreElements()) {
      aliases.add(trusted.nextElement());
    }
    assertThat(certificate.getSerialNumber()).isEqualTo(0xa);
    assertThat(io.petrel.rpc.spi.KeyPairCheck.check((PrivateKey) key, certificate))
        .as("the key read before the update, with the certificate read after it")
        .isEqualTo(io.petrel.rpc.spi.KeyPairCheck.Result.MATCHES);
    assertThat(aliases).containsExactly("a-ca-0", "a-ca-1");

    List<BigInteger> reloads = new ArrayList<>();
    material.follow(() -> {
      try {
        reloads.add(serial(config));
      } catch (java.security.GeneralSecurityException e) {
        throw new IOException(e);
      }
    });
    assertThat(reloads).as("the client, once built, follows the update").containsExactly(BigInteger.valueOf(0xb));
    assertThat(serial(config)).isEqualTo(0xb);
  }

  /** A key store with one key entry {@code alias}: a certificate of {@code keys} with serial {@code serial}. */
  private KeyStore storeKeys(String alias, KeyPair keys, long serial) throws Exception {
    KeyStore keyStore = KeyStore.getInstance("PKCS12");
    keyStore.load(null, null);
    keyStore.setKeyEntry(alias, keys.getPrivate(), "secret".toCharArray(), new X509Certificate[] {
        certificate("server", keys, caKeys.getPrivate(), false, BigInteger.valueOf(serial))});
    return keyStore;
  }

  /**
   * A bundle updated over and over, by Boot's registry as its file watcher does, while the server is started again
   * and clients are built and call it: every start, build and handshake works with one material whole (the aliases
   * of the one material, then the other's, as a certificate renewed under a new alias), and once the updates stop,
   * the running server presents the last one. On the old code, which rewrote in place the stores a start or build
   * was reading, the window was narrow here (the update copied the stores before it rewrote them) and this passed;
   * {@link #anUpdateInTheMiddleOfABuildsReadOfItsStoresIsNotSeenByThatRead} puts an update inside that read.
   */
  @Test
  void bundleUpdatesRacingServerRestartsAndClientBuildsAreReadWhole() throws Exception {
    SslBundle a = storeBundle("a", 6, ecKeys(), 0xa);
    SslBundle b = storeBundle("b", 6, ecKeys(), 0xb);
    DefaultSslBundleRegistry registry = new DefaultSslBundleRegistry();
    registry.registerBundle("race", a);

    PetrelProperties.Server server = new PetrelProperties().getServer();
    server.setPort(0);
    server.setAddress("127.0.0.1");
    server.setShutdownGracePeriod(Duration.ofSeconds(1));
    server.getTls().setBundle("race");
    server.getTls().setClientAuth(TlsConfig.ClientAuth.OPTIONAL); // the clients' key and certificate are checked
    SslBundleTls.Registry serverBundles = new SslBundleTls.Registry(registry); // one for every start, as the bean's
    PetrelServerLifecycle lifecycle = new PetrelServerLifecycle(() -> {
      RpcServerBuilder builder = RpcServer.builder();
      PetrelBuilders.applyServer(server, builder, PetrelBuilders.AsSet.BOUND, serverBundles);
      builder.addService(new EchoService().definition());
      return builder;
    });

    AtomicBoolean stop = new AtomicBoolean();
    AtomicReference<SslBundle> last = new AtomicReference<>(a);
    AtomicReference<Throwable> updaterFailed = new AtomicReference<>();
    Thread updater = new Thread(() -> {
      try {
        for (int i = 0; !stop.get(); i++) {
          SslBundle next = i % 2 == 0 ? b : a;
          last.set(next);
          registry.updateBundle("race", next); // Boot calls the handlers on this thread
        }
      } catch (Throwable e) {
        updaterFailed.set(e);
      }
    }, "ssl-bundle-updates");
    List<String> failures = new ArrayList<>();
    int rounds = 4;
    updater.start();
    try {
      for (int round = 0; round < rounds; round++) {
        try {
          lifecycle.start();
        } catch (RuntimeException e) {
          failures.add("start " + round + ": " + e);
          continue;
        }
        int port = lifecycle.port();
        try {
          presented(port);
        } catch (Exception e) {
          failures.add("a handshake with start " + round + ": " + e);
        }
        for (int i = 0; i < 2; i++) {
          PetrelProperties.Client properties = new PetrelProperties.Client();
          properties.setTarget("127.0.0.1:" + port);
          properties.setDefaultDeadline(Duration.ofSeconds(10));
          properties.getTls().setBundle("race");
          SslBundleTls.Registry clientBundles = new SslBundleTls.Registry(registry); // one per context, as the bean's
          RpcClient client = null;
          try {
            RpcClientBuilder builder = RpcClient.builder();
            PetrelBuilders.applyClient("c", properties, builder, PetrelBuilders.AsSet.BOUND, clientBundles);
            client = builder.build();
            Objects.requireNonNull(clientBundles.material("petrel.clients.c.tls")).follow(client);
            client.unaryCall(EchoService.ECHO, "x");
          } catch (RuntimeException e) {
            failures.add("client " + i + " of start " + round + ": " + e);
          } finally {
            if (client != null) {
              client.shutdownNow();
            }
            clientBundles.close();
          }
        }
        if (round < rounds - 1) {
          lifecycle.stop();
        }
      }
    } finally {
      stop.set(true);
      updater.join(TimeUnit.SECONDS.toMillis(DEADLINE_SECONDS));
    }
    try {
      assertThat(updater.isAlive()).as("the updates ended").isFalse();
      assertThat(updaterFailed.get()).as("an update that failed").isNull();
      assertThat(failures).as("starts, builds and handshakes that read an update half made").isEmpty();
      assertThat(presented(lifecycle.port())).as("the running server, once the updates stopped")
          .isEqualTo(last.get() == a ? 0xa : 0xb);
    } finally {
      lifecycle.stop();
    }
  }

  /**
   * Boot updates the bundle between the starter's read of it and the registration of its update handler (the
   * handlers Boot calls are those registered when it updates): the material made then is the update's, not the
   * bundle's before it until the next change of its files.
   */
  @Test
  void anUpdateWhileTheMaterialIsMadeIsNotLost() throws Exception {
    KeyPair first = ecKeys();
    KeyPair renewed = ecKeys();
    SslBundle update = bundle(certificate("server", renewed, caKeys.getPrivate(), false, BigInteger.valueOf(2)),
        renewed.getPrivate());
    DefaultSslBundleRegistry registry = new DefaultSslBundleRegistry() {
      private boolean updated;

      @Override
      public void addBundleUpdateHandler(String name, Consumer<SslBundle> handler) {
        if (!updated) {
          updated = true;
          updateBundle(name, update); // Boot's file watcher, just before the handler is there
        }
        super.addBundleUpdateHandler(name, handler);
      }
    };
    registry.registerBundle("server", bundle(certificate("server", first, caKeys.getPrivate(), false,
        BigInteger.valueOf(1)), first.getPrivate()));
    SslBundleTls material = new SslBundleTls.Registry(registry).material("petrel.server.tls", "server", true);
    TlsConfig.Builder t = TlsConfig.builder();
    material.configure(t);
    assertThat(serial(t.build())).isEqualTo(2);
  }

  /**
   * A context whose server followed a bundle of its parent context's SslBundles, closed: Boot keeps the update
   * handler, and the bundle's next update neither reloads the closed server nor logs anything about it (on the old
   * code the server's material, never ended, took the update and logged INFO "... once the Petrel server starts"
   * on every update, for every closed context).
   */
  @Test
  void aClosedContextsServerNeitherReloadsNorLogsOnUpdates() throws Exception {
    issue("server", 0x51);
    new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(SslAutoConfiguration.class))
        .withPropertyValues(
            "spring.ssl.bundle.pem.server.keystore.certificate=file:" + tls.resolve("server.pem"),
            "spring.ssl.bundle.pem.server.keystore.private-key=file:" + tls.resolve("server.key"),
            "spring.ssl.bundle.pem.server.truststore.certificate=file:" + tls.resolve("ca.pem"))
        .run(parent -> {
          assertThat(parent).hasNotFailed();
          List<RpcServer> closed = new ArrayList<>();
          new ApplicationContextRunner().withParent(parent)
              .withConfiguration(AutoConfigurations.of(PetrelAutoConfiguration.class))
              .withUserConfiguration(PeerSerial.class)
              .withPropertyValues("petrel.server.port=0", "petrel.server.address=127.0.0.1",
                  "petrel.server.tls.bundle=server")
              .run(child -> {
                assertThat(child).hasNotFailed();
                closed.add(Objects.requireNonNull(child.getBean(PetrelServerLifecycle.class).server()));
              });
          assertThat(closed.get(0).isShutdown()).as("the closed context's server").isTrue();
          KeyPair renewed = ecKeys();
          Logger petrel = (Logger) LoggerFactory.getLogger("io.petrel");
          ListAppender<ILoggingEvent> seen = new ListAppender<>();
          seen.start();
          Level level = petrel.getLevel();
          petrel.setLevel(Level.INFO);
          petrel.addAppender(seen);
          try {
            ((SslBundleRegistry) parent.getBean(SslBundles.class)).updateBundle("server", bundle(certificate(
                "server", renewed, caKeys.getPrivate(), false, BigInteger.valueOf(0x52)), renewed.getPrivate()));
          } finally {
            petrel.detachAppender(seen);
            petrel.setLevel(level);
          }
          String updating = Thread.currentThread().getName(); // Boot calls the handlers on it
          assertThat(seen.list.stream().filter(e -> e.getThreadName().equals(updating))
              .map(e -> e.getLevel() + " " + e.getLoggerName() + ": " + e.getFormattedMessage()).toList())
              .as("what Petrel logged on the update").isEmpty();
        });
  }
}
