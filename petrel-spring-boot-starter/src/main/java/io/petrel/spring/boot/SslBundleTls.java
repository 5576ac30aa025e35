package io.petrel.spring.boot;

import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServerLifecycleListener;
import io.petrel.rpc.TlsConfig;
import io.petrel.rpc.spi.KeyPairCheck;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyStore;
import java.security.KeyStoreException;
import java.security.KeyStoreSpi;
import java.security.NoSuchAlgorithmException;
import java.security.PrivateKey;
import java.security.ProviderException;
import java.security.UnrecoverableEntryException;
import java.security.UnrecoverableKeyException;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Date;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import javax.net.ssl.KeyManagerFactory;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.ssl.NoSuchSslBundleException;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundles;

/**
 * The TLS material of one {@code petrel.*.tls.bundle}: the server's, or one client's. Each server start (client
 * build) gets read-only key and trust stores of its own, views of one immutable copy of the bundle's material at a
 * time, so that the transport reads either the whole previous material or the whole new one, never an update half
 * made. When Spring Boot updates the bundle ({@code spring.ssl.bundle.*.<name>.reload-on-update=true}: its files
 * changed), the new material is checked, and the server or client told to {@code reloadTls()}: on the thread that
 * reloads, its stores show the new material, and once the transport has taken it, everyone else sees it there too
 * (a key manager that reads its store on each handshake, as PKIX's does, keeps the previous material until then;
 * a reloadTls() that the application calls on another thread meanwhile reads the previous material, so the
 * transport then loads the update once more: the latest material wins).
 * New connections use the new certificate, key and trust, open ones keep theirs (as the core's
 * {@code reload-interval} does for files). An update that cannot be used (the key store does not load, the key does
 * not belong to its certificate, a store the bundle had is gone, the transport refuses it) is not applied: the
 * previous material stays in use and a WARN says what failed; the next update is tried again.
 */
final class SslBundleTls implements ServerLifecycleListener {
  private static final Logger log = LoggerFactory.getLogger(SslBundleTls.class);

  /** Reloads the TLS of a server or client that uses this material. */
  @FunctionalInterface
  interface Reload {
    void reloadTls() throws IOException;
  }

  /** {@code petrel.server.tls} or {@code petrel.clients.<name>.tls}. */
  private final String prefix;
  private final String name;
  private final boolean server;
  /** The password of every key in the material's key stores: ours, whatever the bundle's is. */
  private final char[] password;
  /** Whether the bundle had a key store, a trust store, at start (fixed: an update that changes it is refused). */
  private final boolean hasKeys;
  private final boolean hasTrust;
  /** The material of the last usable update (at first, the bundle's at start); guarded by this. */
  private Material current;
  /** The bundle read last (used or refused), so that the same update is not read twice; guarded by this. */
  private @Nullable SslBundle read;
  /** The stores {@link #configure} gave last, which the next {@link #follow} binds to; guarded by this. */
  private @Nullable Stores configured;
  /** Guarded by this. */
  private @Nullable Reload target;
  /** The stores the target was built with, or null when it has no stores of ours; guarded by this. */
  private @Nullable Stores followed;
  private volatile @Nullable String lastWarning;
  /**
   * Set when the context whose server or client this material served closed ({@link Registry#close}): Boot's
   * registry keeps the update handler (it has no way to remove one), and it must hold neither a closed server or
   * client nor say it updated one. Guarded by this.
   */
  private boolean ended;

  private SslBundleTls(String prefix, String name, boolean server, char[] password, Material first,
      SslBundle read) {
    this.prefix = prefix;
    this.name = name;
    this.server = server;
    this.password = password;
    this.hasKeys = first.keys != null;
    this.hasTrust = first.trust != null;
    this.current = first;
    this.read = read;
  }

  /**
   * The material of bundle {@code name} as it is now, for {@code prefix}'s TLS.
   *
   * @throws IllegalStateException naming {@code prefix}'s bundle property and what to do, for a bundle the
   *     starter cannot use
   */
  static SslBundleTls of(String prefix, String name, SslBundle bundle, boolean server) {
    char[] password = UUID.randomUUID().toString().toCharArray();
    Material m;
    try {
      m = Material.of(bundle, server, password);
    } catch (GeneralSecurityException | RuntimeException e) {
      throw new IllegalStateException(prefix + ".bundle=" + name + ": " + e.getMessage(), e);
    }
    return new SslBundleTls(prefix, name, server, password, m, bundle);
  }

  /**
   * Gives {@code t} stores of its own showing the current material: our key store (when the bundle has one) and our
   * trust store (else the JDK's). The server's start (the client's build) reads them outside our lock: nothing
   * changes them until {@link #follow} has bound them to that server (client), after it read them.
   */
  synchronized void configure(TlsConfig.Builder t) {
    Stores s = new Stores(current);
    if (s.keys != null) {
      t.keyStore(s.keys, password);
    }
    if (s.trust != null) {
      t.trustStore(s.trust);
    }
    configured = s;
  }

  /** Updates go to {@code client} from now on (it read the stores when it was built). */
  void follow(RpcClient client) {
    follow(() -> {
      if (!client.isShutdown()) {
        client.reloadTls();
      }
    });
  }

  @Override
  public void onServing(RpcServer s) {
    follow(s::reloadTls);
  }

  @Override
  public synchronized void onDraining(RpcServer s) {
    target = null; // a server started again (context.stop() and start()) calls onServing with the new one
    followed = null;
  }

  /**
   * Updates go to {@code r} from now on, which was built with the stores {@link #configure} gave last; an update
   * since then, which those stores do not show, is reloaded at once.
   */
  synchronized void follow(Reload r) {
    if (ended) {
      return;
    }
    Stores s = configured;
    target = r;
    followed = s;
    if (s != null && s.published != current && !reload(r, s, current,
        "an update of SSL bundle '" + name + "' while " + side() + " started")) {
      current = s.published; // as the transport still uses: a server started again would otherwise take it
    }
  }

  /**
   * Boot's update handler of the bundle: checks the new material, and uses it for new connections if it can. Holds
   * this throughout, so that updates are applied in the order they come.
   */
  synchronized void update(SslBundle bundle) {
    if (ended) {
      log.debug("SSL bundle '{}' updated: not followed by {} any more, its context closed", name, prefix);
      return;
    }
    if (bundle == read) {
      return; // applied already (read again at start, see Registry#material)
    }
    read = bundle;
    Material m;
    try {
      m = Material.of(bundle, server, password);
      if ((m.keys == null) == hasKeys || (m.trust == null) == hasTrust) {
        throw new IllegalStateException("it now has " + (m.keys == null ? "no key store" : "a key store") + " and "
            + (m.trust == null ? "no trust store" : "a trust store") + ", it had " + (hasKeys ? "one" : "none")
            + " and " + (hasTrust ? "one" : "none") + " at start (the JDK's CAs are trusted without one):"
            + " restart the application to change which stores it has");
      }
    } catch (GeneralSecurityException | RuntimeException e) {
      warn(e.getMessage());
      return;
    }
    Reload r = target;
    Stores s = followed;
    if (r == null) {
      current = m;
      log.info("SSL bundle '{}' updated: {} {} once {} starts", name, prefix, m.describe(), side());
      return;
    }
    if (reload(r, s, m, null)) {
      current = m;
    } // else the previous material stays current: a server started again takes what the transport still uses
  }

  /** The context closed: updates are no longer followed, and the server or client is no longer held. */
  synchronized void end() {
    ended = true;
    target = null;
    followed = null;
    configured = null;
    read = null;
  }

  /**
   * Has the target load {@code m}: its stores {@code s} show {@code m} to the reloading thread (the transport builds
   * its TLS on the thread that calls reloadTls()) and, once it took it, to every thread. False, with a WARN, when it
   * refused it: the stores show the previous material still. True when it took it, with an INFO (started by
   * {@code why}, an update otherwise), or with a WARN when it must load it once more and that failed. Holds this.
   */
  private boolean reload(Reload r, @Nullable Stores s, Material m, @Nullable String why) {
    boolean loaded = false;
    try {
      if (s != null) {
        s.load(m);
      }
      r.reloadTls();
      loaded = true;
    } catch (IOException | RuntimeException e) {
      warn(side() + " could not load it: " + e.getMessage());
      return false;
    } finally {
      if (s != null) {
        s.done(loaded ? m : s.published);
      }
    }
    if (s != null && s.readAside()) {
      // Another thread read the stores while the transport loaded m: a reloadTls() of the application's, which read
      // the previous material and may have built the transport's TLS from it after the transport took m. Now that
      // every thread reads m, the transport loads it again: the latest material wins.
      try {
        r.reloadTls();
      } catch (IOException | RuntimeException e) {
        // Not warn(): the update was good and the transport took it; what failed is the load made for another
        // thread's reloadTls(), and fixing the bundle's files is not what to do.
        String warning = "SSL bundle '" + name + "' was updated and " + side() + " took it, but a reloadTls() on"
            + " another thread during the update may have rebuilt its TLS from the previous material, and loading"
            + " the update once more failed: " + (e.getMessage() != null ? e.getMessage() : e) + ". New connections"
            + " may get the previous certificate, key and trust until the next reloadTls() of " + side() + " (its"
            + " stores show the update: call it once that is fixed) or the bundle's next update";
        lastWarning = warning;
        log.warn(warning);
        return true; // the stores show m: the next reloadTls() takes it
      }
      log.debug("SSL bundle '{}': loaded again by {}, whose TLS a reloadTls() on another thread may have built"
          + " from the previous material while the update was loaded", name, side());
    }
    if (why != null) {
      log.info("{}: {} reloaded its TLS from the bundle", why, side());
    } else {
      log.info("SSL bundle '{}' updated: {} {} on new connections; open connections keep theirs", name, prefix,
          m.describe());
    }
    return true;
  }

  private void warn(@Nullable String what) {
    String warning = "SSL bundle '" + name + "' was updated, but " + prefix + " keeps its previous certificate, key"
        + " and trust for new connections: " + what + ". Fix the bundle's files (spring.ssl.bundle.*." + name
        + ".*): the next update is applied";
    lastWarning = warning;
    log.warn(warning);
  }

  /** The WARN of the last update that was not applied (or not loaded once more, see {@link #reload}), or null. */
  @Nullable String lastWarning() {
    return lastWarning;
  }

  private String side() {
    return server ? "the Petrel server" : "Petrel client '" + prefix.substring("petrel.clients.".length(),
        prefix.length() - ".tls".length()) + "'";
  }

  private static KeyStore store() {
    try {
      KeyStore s = KeyStore.getInstance("PKCS12");
      s.load(null, null);
      return s;
    } catch (GeneralSecurityException | IOException e) {
      throw new IllegalStateException("cannot make an in-memory PKCS12 key store: " + e, e);
    }
  }

  /**
   * The key and trust stores of one TlsConfig (one server start, one client): views of {@link #published}, the
   * material the transport last built its TLS with, or, on the thread reloading it, of the material it loads.
   */
  private static final class Stores {
    volatile Material published;
    /** The material being reloaded, and the thread that reloads it (which alone sees it); set under our lock. */
    private volatile @Nullable Material loading;
    private volatile @Nullable Thread loader;
    final @Nullable KeyStore keys;
    final @Nullable KeyStore trust;

    Stores(Material m) {
      this.published = m;
      this.keys = m.keys != null ? view(true, m.keys) : null;
      this.trust = m.trust != null ? view(false, m.trust) : null;
    }

    /**
     * Set when a thread other than the loader read the stores while a load was under way: it read
     * {@link #published}, the previous material (a reloadTls() of the application's, which the transport may have
     * built its TLS from after it took the material loaded). Cleared when a load starts.
     */
    private volatile boolean readAside;

    /** The material a read on this thread sees. */
    Material read() {
      Material m = loading;
      if (m != null) {
        if (loader == Thread.currentThread()) {
          return m;
        }
        readAside = true; // before published is read: a load that checks readAside() after done() misses no read
      }
      return published;
    }

    /** {@code m} is what this thread reads from now on, until {@link #done}. */
    void load(Material m) {
      readAside = false;
      loader = Thread.currentThread();
      loading = m;
    }

    /** The reload is over; {@code m}, what everyone reads from now on. */
    void done(Material m) {
      published = m;
      loading = null;
      loader = null;
    }

    /**
     * After {@link #done}: whether a thread other than the loader read the stores during the load (and may have
     * read the previous material); a read that starts after done() reads the new one.
     */
    boolean readAside() {
      return readAside;
    }

    private KeyStore view(boolean keys, KeyStore like) {
      KeyStore view = new KeyStore(new View(this, keys), like.getProvider(), like.getType()) { };
      try {
        view.load(null, null);
      } catch (GeneralSecurityException | IOException e) {
        throw new IllegalStateException("cannot open a view of an in-memory key store: " + e, e);
      }
      return view;
    }
  }

  /**
   * A read-only key store whose every read answers from the immutable store of one {@link Material}: a reader never
   * sees an update half made, nor a store changed under its iteration of the aliases.
   */
  private static final class View extends KeyStoreSpi {
    private final Stores stores;
    private final boolean keys;

    View(Stores stores, boolean keys) {
      this.stores = stores;
      this.keys = keys;
    }

    private KeyStore store() {
      Material m = stores.read();
      return Objects.requireNonNull(keys ? m.keys : m.trust, "a store the bundle had at start");
    }

    private static KeyStoreException readOnly() {
      return new KeyStoreException("the starter's copy of an SSL bundle is read-only: change the bundle's files,"
          + " or give the builder a KeyStore of your own in a customizer");
    }

    @Override
    public @Nullable Key engineGetKey(String alias, char[] password)
        throws NoSuchAlgorithmException, UnrecoverableKeyException {
      try {
        return store().getKey(alias, password);
      } catch (KeyStoreException e) {
        throw new ProviderException(e);
      }
    }

    @Override
    public Certificate @Nullable [] engineGetCertificateChain(String alias) {
      try {
        return store().getCertificateChain(alias);
      } catch (KeyStoreException e) {
        throw new ProviderException(e);
      }
    }

    @Override
    public @Nullable Certificate engineGetCertificate(String alias) {
      try {
        return store().getCertificate(alias);
      } catch (KeyStoreException e) {
        throw new ProviderException(e);
      }
    }

    @Override
    public @Nullable Date engineGetCreationDate(String alias) {
      try {
        return store().getCreationDate(alias);
      } catch (KeyStoreException e) {
        throw new ProviderException(e);
      }
    }

    @Override
    public KeyStore.@Nullable Entry engineGetEntry(String alias, KeyStore.@Nullable ProtectionParameter protection)
        throws KeyStoreException, NoSuchAlgorithmException, UnrecoverableEntryException {
      return store().getEntry(alias, protection);
    }

    @Override
    public boolean engineEntryInstanceOf(String alias, Class<? extends KeyStore.Entry> entryClass) {
      try {
        return store().entryInstanceOf(alias, entryClass);
      } catch (KeyStoreException e) {
        throw new ProviderException(e);
      }
    }

    @Override
    public Enumeration<String> engineAliases() {
      try {
        return store().aliases();
      } catch (KeyStoreException e) {
        throw new ProviderException(e);
      }
    }

    @Override
    public boolean engineContainsAlias(String alias) {
      try {
        return store().containsAlias(alias);
      } catch (KeyStoreException e) {
        throw new ProviderException(e);
      }
    }

    @Override
    public int engineSize() {
      try {
        return store().size();
      } catch (KeyStoreException e) {
        throw new ProviderException(e);
      }
    }

    @Override
    public boolean engineIsKeyEntry(String alias) {
      try {
        return store().isKeyEntry(alias);
      } catch (KeyStoreException e) {
        throw new ProviderException(e);
      }
    }

    @Override
    public boolean engineIsCertificateEntry(String alias) {
      try {
        return store().isCertificateEntry(alias);
      } catch (KeyStoreException e) {
        throw new ProviderException(e);
      }
    }

    @Override
    public @Nullable String engineGetCertificateAlias(Certificate cert) {
      try {
        return store().getCertificateAlias(cert);
      } catch (KeyStoreException e) {
        throw new ProviderException(e);
      }
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
    public void engineStore(OutputStream stream, char[] password)
        throws IOException, NoSuchAlgorithmException, CertificateException {
      try {
        store().store(stream, password);
      } catch (KeyStoreException e) {
        throw new IOException(e);
      }
    }

    @Override
    public void engineLoad(@Nullable InputStream stream, char @Nullable [] password) throws IOException {
      if (stream != null) {
        throw new IOException(readOnly());
      }
    }
  }

  /**
   * A bundle's key and trust material, checked and copied into stores of our own (keys under our password): what
   * the bundle's stores held when it was read. Never changed once made.
   */
  private static final class Material {
    final @Nullable KeyStore keys;
    final @Nullable KeyStore trust;

    private Material(@Nullable KeyStore keys, @Nullable KeyStore trust) {
      this.keys = keys;
      this.trust = trust;
    }

    /**
     * Reads, checks and copies the bundle's stores.
     *
     * @throws IllegalStateException or GeneralSecurityException saying what cannot be used, and what to do
     */
    static Material of(SslBundle bundle, boolean server, char[] password) throws GeneralSecurityException {
      if (bundle.getKey().getAlias() != null) {
        throw new IllegalStateException("the bundle names a key alias ('" + bundle.getKey().getAlias() + "'),"
            + " which Petrel does not choose by: give the bundle a key store with that one key, and no alias");
      }
      KeyStore bundleKeys;
      KeyStore bundleTrust;
      try {
        bundleKeys = bundle.getStores().getKeyStore();
        bundleTrust = bundle.getStores().getTrustStore();
      } catch (RuntimeException e) {
        throw new IllegalStateException("its stores cannot be loaded: " + e.getMessage(), e);
      }
      if (bundleKeys == null && server) {
        throw new IllegalStateException("the bundle has no key store, and a server needs its certificate and key:"
            + " give the bundle a keystore (certificate and private-key for PEM)");
      }
      KeyStore keys = null;
      if (bundleKeys != null) {
        String keyPassword = bundle.getKey().getPassword();
        String storePassword = bundle.getStores().getKeyStorePassword();
        char[] from = (keyPassword != null ? keyPassword : storePassword != null ? storePassword : "").toCharArray();
        keys = store();
        int found = 0;
        for (String alias : Collections.list(bundleKeys.aliases())) {
          if (bundleKeys.isKeyEntry(alias)) {
            Key key = bundleKeys.getKey(alias, from);
            Certificate[] chain = bundleKeys.getCertificateChain(alias);
            if (!(key instanceof PrivateKey pk) || chain == null || chain.length == 0
                || !(chain[0] instanceof X509Certificate cert)) {
              throw new IllegalStateException("its key store's entry '" + alias + "' is not a private key with an"
                  + " X.509 certificate chain");
            }
            checkMatches(pk, cert);
            keys.setKeyEntry(alias, pk, password, chain);
            found++;
          }
        }
        if (found == 0) {
          throw new IllegalStateException("its key store has no private key (PEM: set the bundle's"
              + " keystore.private-key beside keystore.certificate)");
        }
        KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm()).init(keys, password);
      }
      KeyStore trust = null;
      if (bundleTrust != null) {
        trust = store();
        for (String alias : Collections.list(bundleTrust.aliases())) {
          Certificate c = bundleTrust.getCertificate(alias);
          if (c != null) {
            trust.setCertificateEntry(alias, c);
          }
        }
      }
      return new Material(keys, trust);
    }

    /** "now presents CN=server (serial 1a2b, valid until ...)" or "now trusts 2 certificates", for the log. */
    String describe() {
      List<String> parts = new ArrayList<>();
      try {
        if (keys != null) {
          for (String alias : Collections.list(keys.aliases())) {
            if (keys.getCertificate(alias) instanceof X509Certificate c) {
              parts.add("presents " + c.getSubjectX500Principal() + " (serial " + c.getSerialNumber().toString(16)
                  + ", valid until " + c.getNotAfter().toInstant() + ")");
            }
          }
        }
        if (trust != null) {
          parts.add("trusts " + trust.size() + " certificate" + (trust.size() == 1 ? "" : "s"));
        }
      } catch (GeneralSecurityException e) {
        parts.add("(" + e + ")");
      }
      return "now " + String.join(" and ", parts);
    }
  }

  /**
   * Refuses a private key that does not belong to its certificate, as the core does for PEM files: a certificate
   * and key replaced one at a time, with which every handshake would fail.
   */
  private static void checkMatches(PrivateKey key, X509Certificate cert) {
    if (KeyPairCheck.check(key, cert) == KeyPairCheck.Result.DIFFERENT) {
      throw new IllegalStateException("the private key does not belong to the certificate "
          + cert.getSubjectX500Principal() + " (serial " + cert.getSerialNumber().toString(16) + "): were they"
          + " replaced one at a time? write both (a bundle with reload-on-update is read again; one without it"
          + " at the next start)");
    }
  }

  /**
   * The bundle material of one context's server or clients, by property prefix: made once (its update handler
   * registered with Boot once), and reused by a server started again.
   */
  static final class Registry {
    private final @Nullable SslBundles bundles;
    private final Map<String, SslBundleTls> byPrefix = new HashMap<>();

    Registry(@Nullable SslBundles bundles) {
      this.bundles = bundles;
    }

    /**
     * The material of bundle {@code name} for {@code prefix}, following its updates.
     *
     * @throws IllegalStateException naming {@code prefix}'s bundle property, for a bundle that does not exist or
     *     cannot be used
     */
    synchronized SslBundleTls material(String prefix, String name, boolean server) {
      SslBundleTls existing = byPrefix.get(prefix);
      if (existing != null) {
        return existing;
      }
      String property = prefix + ".bundle=" + name;
      if (bundles == null) {
        throw new IllegalStateException(property + " needs Spring Boot's SSL bundles (spring.ssl.bundle.*), and"
            + " this context has none (is SslAutoConfiguration excluded?)");
      }
      SslBundle bundle;
      try {
        bundle = bundles.getBundle(name);
      } catch (NoSuchSslBundleException e) {
        throw new IllegalStateException(property + ": there is no SSL bundle named '" + name + "' (defined: "
            + bundles.getBundleNames() + "); define spring.ssl.bundle.pem." + name + ".* or spring.ssl.bundle.jks."
            + name + ".*, or fix the name", e);
      }
      SslBundleTls material = of(prefix, name, bundle, server);
      bundles.addBundleUpdateHandler(name, updated -> update(material, updated));
      // An update between getBundle() and now reached no handler of ours (Boot calls those registered when it
      // updates): the bundle is read again. Under the material's lock, so that an update that reaches the handler
      // meanwhile is applied in its order (Boot updates the bundle before it calls the handlers).
      synchronized (material) {
        SslBundle now = bundles.getBundle(name);
        if (now != bundle) {
          update(material, now);
        }
      }
      byPrefix.put(prefix, material);
      return material;
    }

    private static void update(SslBundleTls material, SslBundle updated) {
      try {
        material.update(updated);
      } catch (RuntimeException e) {
        material.warn(e.toString()); // never into Boot's file watcher
      }
    }

    /**
     * The context closed: its materials stop following their bundles. Boot's SslBundles has no way to remove an
     * update handler, and may outlive the context (a parent context's); the handlers then hold nothing of it but
     * the material, and neither touch its server or clients nor log at INFO on updates.
     */
    synchronized void close() {
      byPrefix.values().forEach(SslBundleTls::end);
    }

    /** The material of {@code prefix}, or null when it has none (no bundle, or not made yet). */
    synchronized @Nullable SslBundleTls material(String prefix) {
      return byPrefix.get(prefix);
    }
  }
}
