package io.petrel.rpc.transport.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.security.KeyStore;
import java.security.KeyStoreException;
import java.security.UnrecoverableKeyException;
import java.security.cert.X509Certificate;
import java.util.Collections;
import javax.crypto.spec.SecretKeySpec;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.X509KeyManager;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** What {@link KeySnapshot} copies of an application's in-memory key store, as the JDK's key managers read it. */
class KeySnapshotTest {
  private static final char[] PASSWORD = "changeit".toCharArray();

  static TestCertificates.Authority ca;
  static TestCertificates.Issued server;
  static TestCertificates.Issued other;

  @BeforeAll
  static void makeCertificates() throws Exception {
    ca = TestCertificates.Authority.create("Petrel Test CA");
    server = ca.issue("server", "localhost");
    other = ca.issue("other", "localhost");
  }

  /**
   * Several key entries with their whole chains and a trusted certificate are copied as they are; the copy is
   * read-only, needs the store's password for its keys, and keeps them when the application changes its store; the
   * JDK's key managers (SunX509, the default, and PKIX) find the same keys and chains in it.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"SunX509", "PKIX"})
  void everyKeyWithItsChainAndTheTrustedCertificatesAreCopied(String algorithm) throws Exception {
    KeyStore store = KeyStore.getInstance("PKCS12");
    store.load(null, null);
    store.setKeyEntry("a", server.key(), PASSWORD, new X509Certificate[] {server.certificate(), ca.certificate});
    store.setKeyEntry("b", other.key(), PASSWORD, new X509Certificate[] {other.certificate()});
    store.setCertificateEntry("ca", ca.certificate);

    KeyStore copy = KeySnapshot.of(store, PASSWORD);
    store.deleteEntry("a");
    store.setKeyEntry("b", server.key(), PASSWORD, new X509Certificate[] {server.certificate()});

    assertThat(Collections.list(copy.aliases())).containsExactlyInAnyOrder("a", "b", "ca");
    assertThat(copy.getCertificateChain("a")).containsExactly(server.certificate(), ca.certificate);
    assertThat(copy.getKey("a", PASSWORD)).isEqualTo(server.key());
    assertThat(copy.getKey("b", PASSWORD)).as("as it was when copied").isEqualTo(other.key());
    assertThat(copy.isCertificateEntry("ca")).isTrue();
    assertThat(copy.getCertificateAlias(ca.certificate)).isEqualTo("ca");
    assertThat(copy.getCertificateAlias(other.certificate())).isEqualTo("b");
    assertThatThrownBy(() -> copy.getKey("a", "wrong".toCharArray())).isInstanceOf(UnrecoverableKeyException.class);
    assertThatThrownBy(() -> copy.deleteEntry("a")).isInstanceOf(KeyStoreException.class)
        .hasMessageContaining("read-only");

    KeyManagerFactory kmf = KeyManagerFactory.getInstance(algorithm);
    kmf.init(copy, PASSWORD);
    X509KeyManager keys = (X509KeyManager) kmf.getKeyManagers()[0];
    String[] aliases = keys.getServerAliases("EC", null);
    assertThat(aliases).hasSize(2);
    for (String alias : aliases) {
      X509Certificate leaf = keys.getCertificateChain(alias)[0];
      assertThat(keys.getPrivateKey(alias)).isEqualTo(leaf.equals(server.certificate()) ? server.key()
          : other.key());
    }
  }

  /**
   * A secret key the application keeps in the same store (for something else than TLS) is neither unlocked nor
   * held by the copy, which lives as long as a TLS context does; no key manager uses one. On the old code the copy
   * held it unlocked.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"SunX509", "PKIX"})
  void aSecretKeyInTheStoreIsNeitherUnlockedNorKept(String algorithm) throws Exception {
    KeyStore store = server.keyStore(PASSWORD);
    store.setKeyEntry("database", new SecretKeySpec(new byte[32], "AES"), PASSWORD, null);

    KeyStore copy = KeySnapshot.of(store, PASSWORD);

    assertThat(copy.containsAlias("database")).isFalse();
    assertThat(copy.getKey("database", PASSWORD)).isNull();
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(algorithm);
    kmf.init(copy, PASSWORD);
    X509KeyManager keys = (X509KeyManager) kmf.getKeyManagers()[0];
    String alias = keys.chooseServerAlias("EC", null, null);
    assertThat(keys.getCertificateChain(alias)).containsExactly(server.certificate());
  }
}
