package io.petrel.spring.boot;

import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServerLifecycleListener;
import io.petrel.rpc.TlsConfig;
import io.petrel.rpc.spi.KeyPairCheck;
import java.io.IOException;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.net.ssl.KeyManagerFactory;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.ssl.NoSuchSslBundleException;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundles;

/**
 * The TLS material of one {@code petrel.*.tls.bundle}: the server's, or one client's. The {@link TlsConfig} gets
 * key and trust stores of this object's own, in memory, filled from the bundle; when Spring Boot updates the bundle
 * ({@code spring.ssl.bundle.*.<name>.reload-on-update=true}: its files changed), the new material is checked, put
 * in those stores, and the server or client told to {@code reloadTls()}, which reads the stores' current entries
 * again: new connections use the new certificate, key and trust, open ones keep theirs (as the core's
 * {@code reload-interval} does for files). An update that cannot be used (the key store does not load, the key
 * does not belong to its certificate, a store the bundle had is gone) is not applied: the previous material stays in
 * use and a WARN says what failed; the next update is tried again.
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
  /** Our own stores, whose entries are replaced on an update; null when the bundle has none (fixed at start). */
  private final @Nullable KeyStore keys;
  private final @Nullable KeyStore trust;
  /** The password of every key in {@link #keys}: ours, whatever the bundle's is. */
  private final char[] password;
  /** Guarded by this. */
  private @Nullable Reload target;
  /** Bumped on each change of the stores; guarded by this. */
  private long generation;
  /** The generation the target's TLS was last loaded with; guarded by this. */
  private long loaded;
  private volatile @Nullable String lastWarning;
  /**
   * Set when the context whose server or client this material served closed ({@link Registry#close}): Boot's
   * registry keeps the update handler (it has no way to remove one), and it must hold neither a closed client nor
   * say it updated one. Guarded by this.
   */
  private boolean ended;

  private SslBundleTls(String prefix, String name, boolean server, char[] password, Material first) {
    this.prefix = prefix;
    this.name = name;
    this.server = server;
    this.password = password;
    this.keys = first.keys != null ? store() : null;
    this.trust = first.trust != null ? store() : null;
    replace(first);
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
    return new SslBundleTls(prefix, name, server, password, m);
  }

  /** Gives {@code t} this material: our key store (when the bundle has one) and our trust store (else the JDK's). */
  synchronized void configure(TlsConfig.Builder t) {
    if (keys != null) {
      t.keyStore(keys, password);
    }
    if (trust != null) {
      t.trustStore(trust);
    }
    loaded = generation; // read when the server starts (the client is built): checked then by follow()
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
  }

  /**
   * Updates go to {@code r} from now on; an update between {@link #configure} and now, put in the stores after the
   * transport read them, is reloaded at once.
   */
  synchronized void follow(Reload r) {
    if (ended) {
      return;
    }
    target = r;
    if (loaded != generation) {
      reload(r, "an update of SSL bundle '" + name + "' while " + side() + " started");
    }
  }

  /** Boot's update handler of the bundle: checks the new material, and uses it for new connections if it can. */
  void update(SslBundle bundle) {
    synchronized (this) {
      if (ended) {
        log.debug("SSL bundle '{}' updated: not followed by {} any more, its context closed", name, prefix);
        return;
      }
    }
    Material m;
    try {
      m = Material.of(bundle, server, password);
      if ((m.keys == null) != (keys == null) || (m.trust == null) != (trust == null)) {
        throw new IllegalStateException("it now has " + (m.keys == null ? "no key store" : "a key store") + " and "
            + (m.trust == null ? "no trust store" : "a trust store") + ", it had " + (keys == null ? "none" : "one")
            + " and " + (trust == null ? "none" : "one") + " at start (the JDK's CAs are trusted without one):"
            + " restart the application to change which stores it has");
      }
    } catch (GeneralSecurityException | RuntimeException e) {
      warn(e.getMessage());
      return;
    }
    synchronized (this) {
      if (ended) {
        return; // the context closed while the update was read
      }
      Material previous;
      try {
        previous = Material.copy(keys, trust, password);
      } catch (GeneralSecurityException | RuntimeException e) {
        warn("its previous material cannot be kept to fall back on: " + e);
        return;
      }
      replace(m);
      Reload r = target;
      if (r == null) {
        log.info("SSL bundle '{}' updated: {} {} once {} starts", name, prefix, m.describe(), side());
        return;
      }
      if (!reload(r, null)) {
        replace(previous); // as the transport still uses: an explicit reloadTls() would otherwise take the bad one
        return;
      }
      log.info("SSL bundle '{}' updated: {} {} on new connections; open connections keep theirs", name, prefix,
          m.describe());
    }
  }

  /** The context closed: updates are no longer followed, and the server or client is no longer held. */
  synchronized void end() {
    ended = true;
    target = null;
  }

  /** Reloads the target's TLS from the stores; false, with a WARN, when it refused them. Holds this. */
  private boolean reload(Reload r, @Nullable String why) {
    try {
      r.reloadTls();
      loaded = generation;
      if (why != null) {
        log.info("{}: {} reloaded its TLS from the bundle", why, side());
      }
      return true;
    } catch (IOException | RuntimeException e) {
      warn(side() + " could not load it: " + e.getMessage());
      return false;
    }
  }

  private void warn(@Nullable String what) {
    String warning = "SSL bundle '" + name + "' was updated, but " + prefix + " keeps its previous certificate, key"
        + " and trust for new connections: " + what + ". Fix the bundle's files (spring.ssl.bundle.*." + name
        + ".*): the next update is applied";
    lastWarning = warning;
    log.warn(warning);
  }

  /** The WARN of the last update that was not applied, or null. */
  @Nullable String lastWarning() {
    return lastWarning;
  }

  private String side() {
    return server ? "the Petrel server" : "Petrel client '" + prefix.substring("petrel.clients.".length(),
        prefix.length() - ".tls".length()) + "'";
  }

  /** Puts {@code m}'s entries in our stores in place of theirs (the same aliases replaced one at a time). */
  private void replace(Material m) {
    try {
      if (keys != null && m.keys != null) {
        replaceEntries(keys, m.keys, password);
      }
      if (trust != null && m.trust != null) {
        replaceEntries(trust, m.trust, password);
      }
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(prefix + ".bundle=" + name + ": cannot copy the bundle's stores: " + e, e);
    }
    generation++;
  }

  private static void replaceEntries(KeyStore to, KeyStore from, char[] password) throws GeneralSecurityException {
    List<String> aliases = Collections.list(from.aliases());
    for (String alias : aliases) {
      if (from.isKeyEntry(alias)) {
        to.setKeyEntry(alias, from.getKey(alias, password), password, from.getCertificateChain(alias));
      } else {
        to.setCertificateEntry(alias, from.getCertificate(alias));
      }
    }
    for (String alias : Collections.list(to.aliases())) {
      if (!aliases.contains(alias)) {
        to.deleteEntry(alias);
      }
    }
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
   * A bundle's key and trust material, checked and copied into stores of our own (keys under our password): what
   * the bundle's stores held when it was read.
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

    /** A copy of our stores (keys under {@code password}), to go back to. */
    static Material copy(@Nullable KeyStore keys, @Nullable KeyStore trust, char[] password)
        throws GeneralSecurityException {
      KeyStore k = null;
      if (keys != null) {
        k = store();
        replaceEntries(k, keys, password);
      }
      KeyStore t = null;
      if (trust != null) {
        t = store();
        replaceEntries(t, trust, password);
      }
      return new Material(k, t);
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
      bundles.addBundleUpdateHandler(name, updated -> {
        try {
          material.update(updated);
        } catch (RuntimeException e) {
          material.warn(e.toString()); // never into Boot's file watcher
        }
      });
      byPrefix.put(prefix, material);
      return material;
    }

    /**
     * The context closed: its materials stop following their bundles. Boot's SslBundles has no way to remove an
     * update handler, and may outlive the context (a parent context's); the handlers then hold nothing of it but
     * the stores.
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
