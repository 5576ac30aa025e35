package io.petrel.rpc.transport.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.security.Key;
import java.security.KeyStore;
import java.security.KeyStoreException;
import java.security.KeyStoreSpi;
import java.security.NoSuchAlgorithmException;
import java.security.ProviderException;
import java.security.UnrecoverableEntryException;
import java.security.UnrecoverableKeyException;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.Collections;
import java.util.Date;
import java.util.Enumeration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import javax.crypto.spec.SecretKeySpec;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.X509KeyManager;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
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

  /**
   * A store that answers each read from the material current at that read (as the starter's stores do, whose
   * update may be published between two reads of another thread's reloadTls(); as an application's store changed in
   * place does): here the update lands just after the entry's certificate chain was read. The copy pairs each key
   * with its own chain, read together; on the old code it paired the previous chain with the new key, and a context
   * built from it presented a certificate it had not the key of.
   */
  @Test
  void eachKeyIsCopiedWithItsOwnChainFromAStoreThatChangesBetweenReads() throws Exception {
    KeyStore previous = server.keyStore(PASSWORD);
    KeyStore next = other.keyStore(PASSWORD);
    AtomicBoolean published = new AtomicBoolean();
    KeyStore changing = Changing.over(() -> published.get() ? next : previous, () -> published.set(true));

    KeyStore copy = KeySnapshot.of(changing, PASSWORD);

    assertThat(published).as("the update landed during the copy").isTrue();
    Certificate[] chain = copy.getCertificateChain("key");
    Key key = copy.getKey("key", PASSWORD);
    assertThat(List.of(chain[0], key)).isIn(List.of(server.certificate(), server.key()),
        List.of(other.certificate(), other.key()));
  }

  /**
   * A key store answering each read from {@code current}'s store at that read, and calling {@code chainRead} after
   * each read of a certificate chain.
   */
  private static final class Changing extends KeyStoreSpi {
    private final Supplier<KeyStore> current;
    private final Runnable chainRead;

    private Changing(Supplier<KeyStore> current, Runnable chainRead) {
      this.current = current;
      this.chainRead = chainRead;
    }

    static KeyStore over(Supplier<KeyStore> current, Runnable chainRead) throws Exception {
      KeyStore ks = new KeyStore(new Changing(current, chainRead), null, "PKCS12") { };
      ks.load(null, null);
      return ks;
    }

    @Override
    public KeyStore.Entry engineGetEntry(String alias, KeyStore.ProtectionParameter protection)
        throws KeyStoreException, NoSuchAlgorithmException, UnrecoverableEntryException {
      return current.get().getEntry(alias, protection);
    }

    @Override
    public Key engineGetKey(String alias, char[] password)
        throws NoSuchAlgorithmException, UnrecoverableKeyException {
      try {
        return current.get().getKey(alias, password);
      } catch (KeyStoreException e) {
        throw new ProviderException(e);
      }
    }

    @Override
    public Certificate[] engineGetCertificateChain(String alias) {
      Certificate[] chain = read(s -> s.getCertificateChain(alias));
      chainRead.run();
      return chain;
    }

    @Override
    public Certificate engineGetCertificate(String alias) {
      return read(s -> s.getCertificate(alias));
    }

    @Override
    public Date engineGetCreationDate(String alias) {
      return read(s -> s.getCreationDate(alias));
    }

    @Override
    public void engineSetKeyEntry(String alias, Key key, char[] password, Certificate[] chain)
        throws KeyStoreException {
      throw new KeyStoreException("read-only");
    }

    @Override
    public void engineSetKeyEntry(String alias, byte[] key, Certificate[] chain) throws KeyStoreException {
      throw new KeyStoreException("read-only");
    }

    @Override
    public void engineSetCertificateEntry(String alias, Certificate cert) throws KeyStoreException {
      throw new KeyStoreException("read-only");
    }

    @Override
    public void engineDeleteEntry(String alias) throws KeyStoreException {
      throw new KeyStoreException("read-only");
    }

    @Override
    public Enumeration<String> engineAliases() {
      return read(KeyStore::aliases);
    }

    @Override
    public boolean engineContainsAlias(String alias) {
      return read(s -> s.containsAlias(alias));
    }

    @Override
    public int engineSize() {
      return read(KeyStore::size);
    }

    @Override
    public boolean engineIsKeyEntry(String alias) {
      return read(s -> s.isKeyEntry(alias));
    }

    @Override
    public boolean engineIsCertificateEntry(String alias) {
      return read(s -> s.isCertificateEntry(alias));
    }

    @Override
    public String engineGetCertificateAlias(Certificate cert) {
      return read(s -> s.getCertificateAlias(cert));
    }

    @Override
    public void engineStore(OutputStream stream, char[] password) throws IOException {
      throw new IOException("read-only");
    }

    @Override
    public void engineLoad(InputStream stream, char[] password) { }

    private interface Read<T> {
      T from(KeyStore store) throws KeyStoreException;
    }

    private <T> T read(Read<T> r) {
      try {
        return r.from(current.get());
      } catch (KeyStoreException e) {
        throw new ProviderException(e);
      }
    }
  }
}
