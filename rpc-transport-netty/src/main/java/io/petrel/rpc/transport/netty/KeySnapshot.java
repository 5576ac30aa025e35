package io.petrel.rpc.transport.netty;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyStore;
import java.security.KeyStoreException;
import java.security.KeyStoreSpi;
import java.security.NoSuchAlgorithmException;
import java.security.UnrecoverableEntryException;
import java.security.UnrecoverableKeyException;
import java.security.cert.Certificate;
import java.util.Arrays;
import java.util.Collections;
import java.util.Date;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.security.auth.DestroyFailedException;
import org.jspecify.annotations.Nullable;

/**
 * A read-only copy of an in-memory key store's entries as they are when it is made, for the key managers of one
 * TLS context: changes the application makes to its store afterwards (before its next {@code reloadTls()}) reach
 * no context built before. Keys are read with the store's password once, when the copy is made, and kept as they
 * are (no re-encoding: a key that cannot be exported is copied too); a key the password does not unlock is copied
 * as that failure, which the key manager then meets as it would have in the store itself. Only the key entries
 * that have a certificate chain (the only ones a key manager uses) and the trusted certificates are copied: a
 * secret key the application keeps in the same store is neither unlocked nor held by the context.
 */
final class KeySnapshot extends KeyStoreSpi {
  private final Map<String, Entry> entries;
  private final char[] password;

  private KeySnapshot(Map<String, Entry> entries, char[] password) {
    this.entries = entries;
    this.password = password;
  }

  /** One entry: a key (or why it cannot be read) with its chain, or a trusted certificate. */
  private static final class Entry {
    final @Nullable Key key;
    final @Nullable GeneralSecurityException keyFailure;
    /** Only read through {@link #chain()}, a copy. */
    private final Certificate @Nullable [] chain;
    final @Nullable Certificate certificate;
    final @Nullable Date created;

    Entry(@Nullable Key key, @Nullable GeneralSecurityException keyFailure, Certificate @Nullable [] chain,
        @Nullable Certificate certificate, @Nullable Date created) {
      this.key = key;
      this.keyFailure = keyFailure;
      this.chain = chain == null ? null : chain.clone();
      this.certificate = certificate;
      this.created = created;
    }

    boolean isKey() {
      return key != null || keyFailure != null;
    }

    Certificate @Nullable [] chain() {
      return chain == null ? null : chain.clone();
    }
  }

  /** A copy of {@code store}'s entries, whose keys {@code password} unlocks (the key store password of TLS). */
  static KeyStore of(KeyStore store, char[] password) throws GeneralSecurityException {
    Map<String, Entry> entries = new LinkedHashMap<>();
    for (String alias : Collections.list(store.aliases())) {
      Date created = creationDate(store, alias);
      if (store.isKeyEntry(alias)) {
        Certificate[] chain = store.getCertificateChain(alias);
        if (chain == null || chain.length == 0) {
          continue; // a secret key (or a key without its certificate), which no key manager uses: not unlocked
        }
        Key key = null;
        GeneralSecurityException failure = null;
        KeyStore.PasswordProtection protection = new KeyStore.PasswordProtection(password);
        try {
          // The key and its chain in one read: a store that changes between reads (the application's, changed in
          // place; the starter's, publishing an update) does not pair the key of one entry with another's chain.
          KeyStore.Entry entry = store.getEntry(alias, protection);
          if (!(entry instanceof KeyStore.PrivateKeyEntry e)) {
            continue; // gone, or no longer a key with a chain, since the aliases were listed: a store changed
          }
          key = e.getPrivateKey();
          chain = e.getCertificateChain();
        } catch (UnrecoverableKeyException | NoSuchAlgorithmException e) {
          failure = e;
        } catch (UnrecoverableEntryException e) {
          failure = (GeneralSecurityException) new UnrecoverableKeyException(e.getMessage()).initCause(e);
        } finally {
          try {
            protection.destroy(); // its copy of the password
          } catch (DestroyFailedException e) {
            // the JDK's PasswordProtection clears its copy without failing
          }
        }
        entries.put(alias, new Entry(key, failure, chain, chain[0], created));
      } else if (store.isCertificateEntry(alias)) {
        entries.put(alias, new Entry(null, null, null, store.getCertificate(alias), created));
      }
    }
    KeyStore copy = new KeyStore(new KeySnapshot(entries, password.clone()), store.getProvider(),
        store.getType()) { };
    try {
      copy.load(null, null);
    } catch (IOException e) {
      throw new KeyStoreException("cannot open a copy of the key store: " + e, e);
    }
    return copy;
  }

  /**
   * When {@code alias} was made, or null where the store cannot say: SunPKCS11's key store (an HSM's) throws
   * {@code ProviderException(UnsupportedOperationException)} for every alias. No key manager reads it.
   */
  private static @Nullable Date creationDate(KeyStore store, String alias) throws KeyStoreException {
    try {
      return store.getCreationDate(alias);
    } catch (RuntimeException e) {
      return null;
    }
  }

  @Override
  public @Nullable Key engineGetKey(String alias, char[] password)
      throws NoSuchAlgorithmException, UnrecoverableKeyException {
    Entry e = entries.get(alias);
    if (e == null || !e.isKey()) {
      return null;
    }
    if (!Arrays.equals(password, this.password)) {
      throw new UnrecoverableKeyException("not the key store password the key of '" + alias + "' was read with");
    }
    GeneralSecurityException failure = e.keyFailure;
    if (failure instanceof NoSuchAlgorithmException) {
      throw (NoSuchAlgorithmException) new NoSuchAlgorithmException(failure.getMessage()).initCause(failure);
    }
    if (failure != null) {
      throw (UnrecoverableKeyException) new UnrecoverableKeyException(failure.getMessage()).initCause(failure);
    }
    return e.key;
  }

  @Override
  public Certificate @Nullable [] engineGetCertificateChain(String alias) {
    Entry e = entries.get(alias);
    return e == null ? null : e.chain();
  }

  @Override
  public @Nullable Certificate engineGetCertificate(String alias) {
    Entry e = entries.get(alias);
    return e == null ? null : e.certificate;
  }

  @Override
  public @Nullable Date engineGetCreationDate(String alias) {
    Entry e = entries.get(alias);
    return e == null || e.created == null ? null : (Date) e.created.clone();
  }

  @Override
  public Enumeration<String> engineAliases() {
    return Collections.enumeration(entries.keySet());
  }

  @Override
  public boolean engineContainsAlias(String alias) {
    return entries.containsKey(alias);
  }

  @Override
  public int engineSize() {
    return entries.size();
  }

  @Override
  public boolean engineIsKeyEntry(String alias) {
    Entry e = entries.get(alias);
    return e != null && e.isKey();
  }

  @Override
  public boolean engineIsCertificateEntry(String alias) {
    Entry e = entries.get(alias);
    return e != null && !e.isKey();
  }

  @Override
  public @Nullable String engineGetCertificateAlias(Certificate cert) {
    for (Map.Entry<String, Entry> e : entries.entrySet()) {
      if (cert.equals(e.getValue().certificate)) {
        return e.getKey();
      }
    }
    return null;
  }

  @Override
  public void engineSetKeyEntry(String alias, Key key, char[] password, Certificate[] chain)
      throws KeyStoreException {
    throw readOnly();
  }

  @Override
  public void engineSetKeyEntry(String alias, byte[] key, Certificate[] chain) throws KeyStoreException {
    throw readOnly();
  }

  @Override
  public void engineSetCertificateEntry(String alias, Certificate cert) throws KeyStoreException {
    throw readOnly();
  }

  @Override
  public void engineDeleteEntry(String alias) throws KeyStoreException {
    throw readOnly();
  }

  @Override
  public void engineStore(OutputStream stream, char[] password) throws IOException {
    throw new IOException(readOnly());
  }

  @Override
  public void engineLoad(@Nullable InputStream stream, char @Nullable [] password) throws IOException {
    if (stream != null) {
      throw new IOException(readOnly());
    }
  }

  private static KeyStoreException readOnly() {
    return new KeyStoreException("Petrel's copy of a key store for one TLS context is read-only: change the"
        + " application's own key store, then reloadTls()");
  }
}
