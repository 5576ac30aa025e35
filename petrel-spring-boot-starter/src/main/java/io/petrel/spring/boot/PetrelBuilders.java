package io.petrel.spring.boot;

import io.petrel.rpc.AbstractRpcBuilder;
import io.petrel.rpc.RpcClientBuilder;
import io.petrel.rpc.RpcServerBuilder;
import io.petrel.rpc.TlsConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.springframework.util.unit.DataSize;

/**
 * Copies the properties that are set onto the builders; an unset one keeps the builder's default. A value the
 * builder refuses fails with the property and its value named, and what to do, the builder's exception as the
 * cause: the builder's own message names its Java method, which a Boot user never called.
 */
final class PetrelBuilders {
  private PetrelBuilders() {
  }

  /**
   * A property's value as the application set it (its text in the environment, e.g. {@code -1} rather than the
   * bound {@code -1B}), or null when it is not known; only asked when a value is refused.
   */
  @FunctionalInterface
  interface AsSet {
    AsSet BOUND = property -> null;

    @Nullable String text(String property);
  }

  /** A client target naming an in-process server: {@code inprocess:NAME}, as the meters and logs name it. */
  static final String INPROCESS = "inprocess:";

  static void applyServer(PetrelProperties.Server p, RpcServerBuilder b) {
    applyServer(p, b, AsSet.BOUND);
  }

  static void applyServer(PetrelProperties.Server p, RpcServerBuilder b, AsSet asSet) {
    applyServer(p, b, asSet, new SslBundleTls.Registry(null));
  }

  /**
   * {@code bundles}: the material of Spring Boot's SSL bundles, for {@code tls.bundle} (followed as they are
   * updated: the server is told to reload when it serves).
   */
  static void applyServer(PetrelProperties.Server p, RpcServerBuilder b, AsSet asSet, SslBundleTls.Registry bundles) {
    Setter s = new Setter("petrel.server", asSet);
    String inProcessName = p.getInProcessName();
    if (inProcessName != null) {
      // In place of a socket: port and address do not apply.
      s.set(inProcessName, b::inProcess, s.named("in-process-name", inProcessName));
    } else {
      s.set(p.getPort(), b::port, s.named("port", p.getPort())); // a bad port is the port's fault alone
      if (p.getAddress() != null) {
        s.set(p.getAddress(), address -> b.bindAddress(address, p.getPort()), s.named("address", p.getAddress()));
      }
    }
    s.set("name", p.getName(), b::name);
    s.set("business-threads", p.getBusinessThreads(), b::businessThreads);
    s.set("business-queue-size", p.getBusinessQueueSize(), b::businessQueueSize);
    if (p.isDirectExecutor() && p.getVirtualThreads() != null) {
      throw new IllegalStateException("petrel.server.direct-executor and petrel.server.virtual-threads both choose"
          + " where handlers run; set one of them");
    }
    if (p.isDirectExecutor()) {
      b.directExecutor();
    }
    s.set("virtual-threads", p.getVirtualThreads(), b::virtualThreads);
    applyShared(s, p, b);
    PetrelProperties.Tls tls = p.getTls();
    // Checked with TLS off too: a client option here is a mistake either way.
    if (tls.getServerName() != null) {
      throw new IllegalStateException("petrel.server.tls.server-name=" + tls.getServerName() + " is a client"
          + " option: the name a client expects in the server's certificate; remove it from the petrel.server.tls"
          + " properties (it belongs under petrel.clients.<name>.tls)");
    }
    if (tlsOn("petrel.server.tls", tls, "serve TLS", "serve plaintext")) {
      if (tls.getCertificateChain() == null && tls.getPrivateKey() == null && bundleName(tls) == null) {
        throw new IllegalStateException("petrel.server.tls.enabled=true needs the server's certificate and key:"
            + " set petrel.server.tls.certificate-chain and petrel.server.tls.private-key (PEM files), or set"
            + " petrel.server.tls.enabled=false to serve plaintext");
      }
      if (tls.isInsecureSkipHostnameVerification()) {
        throw new IllegalStateException("petrel.server.tls.insecure-skip-hostname-verification=true is a client"
            + " option: a server does not check the host names of its clients; remove it from the petrel.server.tls"
            + " properties (it belongs under petrel.clients.<name>.tls)");
      }
      s.tls(tls("petrel.server.tls", tls, bundles), b::tls);
      SslBundleTls material = bundleName(tls) != null ? bundles.material("petrel.server.tls") : null;
      if (material != null) {
        b.addLifecycleListener(material); // the server it serves with follows the bundle's updates
      }
    }
    s.set("max-concurrent-calls-per-connection", p.getMaxConcurrentCallsPerConnection(),
        b::maxConcurrentCallsPerConnection);
    s.set("max-connections", p.getMaxConnections(), b::maxConnections);
    s.set("max-connections-per-address", p.getMaxConnectionsPerAddress(), b::maxConnectionsPerAddress);
    s.set("handshake-timeout", p.getHandshakeTimeout(), b::handshakeTimeout);
    s.set("frame-receive-timeout", p.getFrameReceiveTimeout(), b::frameReceiveTimeout);
    s.set("idle-timeout", p.getIdleTimeout(), b::idleTimeout);
    if (p.getKeepAliveTime() != null || p.getKeepAliveTimeout() != null) {
      Duration time = orElse(p.getKeepAliveTime(), RpcServerBuilder.DEFAULT_KEEP_ALIVE_TIME);
      Duration timeout = orElse(p.getKeepAliveTimeout(), RpcServerBuilder.DEFAULT_KEEP_ALIVE_TIMEOUT);
      s.set(time, t -> b.keepAlive(t, timeout), s.named("keep-alive-time", p.getKeepAliveTime()),
          s.named("keep-alive-timeout", p.getKeepAliveTimeout()));
    }
    s.set("max-connection-age", p.getMaxConnectionAge(), b::maxConnectionAge);
    s.set("unwritable-timeout", p.getUnwritableTimeout(), b::unwritableTimeout);
    if (p.getMaxBufferedBytes() != null) {
      s.set(p.getMaxBufferedBytes().toBytes(), b::maxBufferedBytes,
          s.named("max-buffered-bytes", p.getMaxBufferedBytes()));
    }
    s.set("shutdown-grace-period", p.getShutdownGracePeriod(), b::shutdownGracePeriod);
    s.set("exception-details", p.getExceptionDetails(), b::exceptionDetails);
  }

  static void applyClient(String name, PetrelProperties.Client p, RpcClientBuilder b) {
    applyClient(name, p, b, AsSet.BOUND);
  }

  static void applyClient(String name, PetrelProperties.Client p, RpcClientBuilder b, AsSet asSet) {
    applyClient(name, p, b, asSet, new SslBundleTls.Registry(null));
  }

  /**
   * {@code bundles}: the material of Spring Boot's SSL bundles, for {@code tls.bundle}; the client built is to
   * follow it ({@link SslBundleTls#follow(io.petrel.rpc.RpcClient)}, material {@code petrel.clients.<name>.tls}).
   */
  static void applyClient(String name, PetrelProperties.Client p, RpcClientBuilder b, AsSet asSet,
      SslBundleTls.Registry bundles) {
    String prefix = "petrel.clients." + name;
    Setter s = new Setter(prefix, asSet);
    String target = p.getTarget();
    if (target == null || target.isBlank()) {
      throw new IllegalStateException(prefix + ".target is not set: say where client '" + name
          + "' calls, e.g. " + prefix + ".target=127.0.0.1:7000 (or static://h1:7000,h2:7000)");
    }
    try {
      if (target.startsWith(INPROCESS)) {
        b.inProcess(target.substring(INPROCESS.length())); // the in-process server of that name, in this JVM
      } else {
        b.target(target);
      }
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(prefix + ".target=" + s.text(s.named("target", target)) + " is refused: "
          + e.getMessage() + "; set " + prefix + ".target to host:port, static://h1:7000,h2:7000 or a name"
          + " resolver's scheme://... (or inprocess:NAME for the in-process server NAME of this JVM)", e);
    }
    b.name(name);
    s.set("load-balancer", p.getLoadBalancer(), b::loadBalancer);
    s.set("connections-per-endpoint", p.getConnectionsPerEndpoint(), b::connectionsPerEndpoint);
    s.set("default-deadline", p.getDefaultDeadline(), b::defaultDeadline);
    s.set("connect-timeout", p.getConnectTimeout(), b::connectTimeout);
    s.set("keep-alive-time", p.getKeepAliveTime(), b::keepAliveTime);
    s.set("liveness-timeout", p.getLivenessTimeout(), b::livenessTimeout);
    applyShared(s, p, b);
    PetrelProperties.Tls tls = p.getTls();
    boolean tlsOn = tlsOn(prefix + ".tls", tls, "call over TLS", "call in plaintext");
    if (tls.getServerName() != null && !tlsOn) {
      // The name to check in the server's certificate, over plaintext: the user expects TLS and would not get it.
      throw new IllegalStateException(prefix + ".tls.server-name=" + tls.getServerName() + " is set, but TLS is"
          + " off for client '" + name + "': set " + prefix + ".tls.enabled=true (or " + prefix + ".tls.bundle), or"
          + " remove " + prefix + ".tls.server-name");
    }
    if (tlsOn) {
      if (tls.getClientAuth() != TlsConfig.ClientAuth.NONE) {
        throw new IllegalStateException(prefix + ".tls.client-auth=" + tls.getClientAuth() + " is a server option:"
            + " a client presents its certificate when " + prefix + ".tls.certificate-chain and .private-key are"
            + " set; remove " + prefix + ".tls.client-auth (it belongs under petrel.server.tls)");
      }
      s.tls(tls(prefix + ".tls", tls, bundles), b::tls);
    }
    s.set("max-pending-calls", p.getMaxPendingCalls(), b::maxPendingCalls);
    if (p.getReconnectBackoffInitial() != null || p.getReconnectBackoffMax() != null) {
      Duration initial = orElse(p.getReconnectBackoffInitial(), RpcClientBuilder.DEFAULT_RECONNECT_INITIAL);
      Duration max = orElse(p.getReconnectBackoffMax(), RpcClientBuilder.DEFAULT_RECONNECT_MAX);
      s.set(initial, i -> b.reconnectBackoff(i, max),
          s.named("reconnect-backoff-initial", p.getReconnectBackoffInitial()),
          s.named("reconnect-backoff-max", p.getReconnectBackoffMax()));
    }
    PropertiesEndpointFilter filter = endpointFilter(prefix + ".endpoint-filter", p.getEndpointFilter());
    if (filter != null) {
      b.endpointFilter(filter); // a PetrelClientCustomizer's endpointFilter, set after this, replaces it
    }
  }

  /**
   * The filter the {@code endpoint-filter.*} properties under {@code prefix} make, or null when none is set (every
   * endpoint is called). A blank value, or one with spaces around it, fails naming its property: it would leave out
   * every endpoint. So does an attribute named version or zone, which are endpoints' own fields, never attributes.
   */
  static @Nullable PropertiesEndpointFilter endpointFilter(String prefix, PetrelProperties.EndpointFilter p) {
    String version = p.getVersion();
    String zone = p.getZone();
    if (version != null) {
      checkValue(prefix + ".version", version, "the version to call, e.g. 2.3.0", "every version");
    }
    if (zone != null) {
      checkValue(prefix + ".zone", zone, "the zone to call, e.g. eu-west-1a", "every zone");
    }
    p.getAttributes().forEach((name, value) -> {
      String property = prefix + ".attributes." + name;
      if (name.equals("version") || name.equals("zone")) {
        throw new IllegalStateException(property + "=" + value + " names no attribute: an endpoint's " + name
            + " is a field of its own (static://h:7000;" + name + "=" + value + ", a registrar's " + name + "(...)),"
            + " never among its attributes, so it would leave out every endpoint; set " + prefix + "." + name + "="
            + value + " instead");
      }
      checkValue(property, value, "the value the endpoints' attribute " + name + " must have, e.g. blue",
          "any value of " + name);
    });
    if (version == null && zone == null && p.getAttributes().isEmpty()) {
      return null;
    }
    return new PropertiesEndpointFilter(prefix, version, zone, p.getAttributes());
  }

  /** A filter's value that no endpoint would have by mistake: blank, or with spaces around it. */
  private static void checkValue(String property, String value, String expected, String otherwise) {
    if (value.isBlank()) {
      throw new IllegalStateException(property + " is blank, which no endpoint matches: set it to " + expected
          + ", or remove it to call " + otherwise);
    }
    if (!value.strip().equals(value)) {
      throw new IllegalStateException(property + "='" + value + "' has spaces around it, and would call only"
          + " endpoints whose value has the same spaces: set " + property + "=" + value.strip() + ", or remove it to"
          + " call " + otherwise);
    }
  }

  /** The options both builders have (TLS aside: each builder declares its own {@code tls(TlsConfig)}). */
  private static void applyShared(Setter s, PetrelProperties.Shared p, AbstractRpcBuilder<?> b) {
    s.setBytes("max-frame-size", p.getMaxFrameSize(), b::maxFrameSize);
    s.setBytes("max-metadata-size", p.getMaxMetadataSize(), b::maxMetadataSize);
    s.set("percentile-histograms", p.getPercentileHistograms(), b::percentileHistograms);
  }

  /**
   * Whether the {@code tls.*} properties under {@code prefix} turn TLS on: {@code enabled=true}, or a bundle with
   * {@code enabled} unset. {@code enabled=false} beside a bundle fails, naming both and what to do: serving TLS
   * would ignore the one, plaintext the other.
   *
   * @param secure what TLS with the bundle means for this side ("serve TLS"), for the message
   * @param plain what plaintext means for this side ("serve plaintext")
   */
  static boolean tlsOn(String prefix, PetrelProperties.Tls tls, String secure, String plain) {
    String bundle = bundleName(tls);
    Boolean enabled = tls.getEnabled();
    if (bundle != null && Boolean.FALSE.equals(enabled)) {
      throw new IllegalStateException(prefix + ".enabled=false and " + prefix + ".bundle=" + bundle + " contradict"
          + " each other: the bundle turns TLS on, enabled=false turns it off. To " + secure + " with the bundle,"
          + " remove " + prefix + ".enabled (or set it to true); to " + plain + ", remove " + prefix + ".bundle (or"
          + " set it empty, e.g. in a profile)");
    }
    return Boolean.TRUE.equals(enabled) || bundle != null;
  }

  /** The SSL bundle {@code tls.bundle} names, or null when it is unset or empty (as Boot's server.ssl.bundle). */
  static @Nullable String bundleName(PetrelProperties.Tls tls) {
    String bundle = tls.getBundle();
    return bundle == null || bundle.isBlank() ? null : bundle;
  }

  static TlsConfig tls(String prefix, PetrelProperties.Tls p) {
    return tls(prefix, p, new SslBundleTls.Registry(null));
  }

  static TlsConfig tls(String prefix, PetrelProperties.Tls p, SslBundleTls.Registry bundles) {
    TlsConfig.Builder t = TlsConfig.builder();
    String bundleName = bundleName(p);
    if (bundleName != null) {
      fromBundle(prefix, bundleName, p, bundles, t);
    } else if (p.getCertificateChain() != null || p.getPrivateKey() != null) {
      if (p.getCertificateChain() == null || p.getPrivateKey() == null) {
        throw new IllegalStateException(prefix + ".certificate-chain and " + prefix
            + ".private-key go together: set both or neither");
      }
      Path chain = p.getCertificateChain();
      Path key = p.getPrivateKey();
      String password = p.getPrivateKeyPassword();
      try {
        t.keyPair(chain, key, password != null ? password.toCharArray() : null);
      } catch (IllegalArgumentException e) {
        throw fileRefused(e, prefix + ".certificate-chain=" + chain + ", " + prefix + ".private-key=" + key,
            prefix + ".certificate-chain and " + prefix + ".private-key");
      }
    }
    Path trust = p.getTrustCertificates();
    if (trust != null) {
      try {
        t.trustCertificates(trust);
      } catch (IllegalArgumentException e) {
        throw fileRefused(e, prefix + ".trust-certificates=" + trust, prefix + ".trust-certificates");
      }
    }
    if (p.getClientAuth() != TlsConfig.ClientAuth.NONE) {
      t.clientAuth(p.getClientAuth());
    }
    if (p.isInsecureSkipHostnameVerification()) {
      t.insecureSkipHostnameVerification();
    }
    String serverName = p.getServerName();
    if (serverName != null) {
      try {
        t.serverName(serverName);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(prefix + ".server-name=" + serverName + " is refused: " + e.getMessage()
            + "; change " + prefix + ".server-name, or remove it to check each endpoint's own host", e);
      }
    }
    if (p.getReloadInterval() != null) {
      Duration interval = p.getReloadInterval();
      try {
        t.reloadInterval(interval);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(prefix + ".reload-interval=" + interval + " is refused: " + e.getMessage()
            + "; change " + prefix + ".reload-interval, or remove it to keep the default", e);
      }
    }
    return t.build();
  }

  /**
   * The own certificate and key and the trust of SSL bundle {@code name} ({@code spring.ssl.bundle.*}): its key
   * store (with the key's password, else the store's) and its trust store (none: the JDK's CAs), copied into stores
   * that follow the bundle's updates ({@link SslBundleTls}).
   */
  private static void fromBundle(String prefix, String name, PetrelProperties.Tls p, SslBundleTls.Registry bundles,
      TlsConfig.Builder t) {
    String property = prefix + ".bundle=" + name;
    if (p.getCertificateChain() != null || p.getPrivateKey() != null || p.getTrustCertificates() != null
        || p.getPrivateKeyPassword() != null) {
      throw new IllegalStateException(property + " and the " + prefix + ".certificate-chain / .private-key /"
          + " .private-key-password / .trust-certificates properties are two sources of the same material: use the"
          + " bundle (its key password is spring.ssl.bundle.*." + name + ".key.password) or the files");
    }
    if (p.getReloadInterval() != null) {
      throw new IllegalStateException(property + " is reloaded when Spring Boot reloads the bundle (spring.ssl.bundle"
          + ".*." + name + ".reload-on-update=true), and " + prefix + ".reload-interval watches the file properties:"
          + " remove " + prefix + ".reload-interval");
    }
    bundles.material(prefix, name, prefix.startsWith("petrel.server.")).configure(t);
  }

  /** A TLS file property TlsConfig refused (a file that does not exist or cannot be read). */
  private static IllegalArgumentException fileRefused(IllegalArgumentException e, String set, String properties) {
    return new IllegalArgumentException(set + ": " + e.getMessage() + "; set " + properties + " to PEM files this"
        + " process can read (a relative path is taken from the working directory)", e);
  }

  private static Duration orElse(@Nullable Duration value, Duration fallback) {
    return value != null ? value : fallback;
  }

  /** A property's full name and its value as bound (null when unset, e.g. one of two properties of an option). */
  record Named(String property, @Nullable Object value) {
  }

  /** Sets options from the properties under one prefix, naming the property when the builder refuses a value. */
  private static final class Setter {
    private final String prefix;
    private final AsSet asSet;

    Setter(String prefix, AsSet asSet) {
      this.prefix = prefix;
      this.asSet = asSet;
    }

    Named named(String key, @Nullable Object value) {
      return new Named(prefix + "." + key, value);
    }

    <T> void set(String key, @Nullable T value, Consumer<T> option) {
      if (value != null) {
        set(value, option, named(key, value));
      }
    }

    /** {@code option(value)}; a refusal names those of {@code properties} that are set, with their values. */
    <T> void set(T value, Consumer<T> option, Named... properties) {
      try {
        option.accept(value);
      } catch (IllegalArgumentException e) {
        throw refused(e, properties);
      }
    }

    void setBytes(String key, @Nullable DataSize size, Consumer<Integer> option) {
      if (size != null) {
        long bytes = size.toBytes();
        if (bytes > Integer.MAX_VALUE) {
          Named n = named(key, size);
          throw new IllegalArgumentException(n.property() + "=" + text(n) + " is refused: at most "
              + Integer.MAX_VALUE + " bytes (2GB - 1); change " + n.property() + ", or remove it to keep the default",
              new IllegalArgumentException(key + " above Integer.MAX_VALUE: " + size));
        }
        set((int) bytes, option, named(key, size));
      }
    }

    /** The TLS the {@code tls.*} properties make, which the builder may still refuse as a whole. */
    void tls(TlsConfig config, Consumer<TlsConfig> option) {
      try {
        option.accept(config);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("the " + prefix + ".tls.* properties are refused: " + e.getMessage()
            + "; change them as docs/spring-boot.md says", e);
      }
    }

    private IllegalArgumentException refused(IllegalArgumentException e, Named... properties) {
      List<String> set = new ArrayList<>();
      List<String> names = new ArrayList<>();
      for (Named n : properties) {
        if (n.value() != null) {
          set.add(n.property() + "=" + text(n));
          names.add(n.property());
        }
      }
      String which = String.join(" and ", names);
      return new IllegalArgumentException(String.join(", ", set) + (set.size() == 1 ? " is" : " are") + " refused: "
          + e.getMessage() + "; change " + which + ", or remove " + (names.size() == 1 ? "it" : "them")
          + " to keep the default" + (names.size() == 1 ? "" : "s") + " (docs/configuration.md gives each"
          + " option's limits)", e);
    }

    String text(Named n) {
      @Nullable String asWritten;
      try {
        asWritten = asSet.text(n.property());
      } catch (RuntimeException e) {
        asWritten = null; // the value as bound is said instead
      }
      return asWritten != null ? asWritten : String.valueOf(n.value());
    }
  }
}
