package io.petrel.spring.boot;

import io.petrel.rpc.AbstractRpcBuilder;
import io.petrel.rpc.RpcClientBuilder;
import io.petrel.rpc.RpcServerBuilder;
import io.petrel.rpc.TlsConfig;
import java.time.Duration;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.springframework.util.unit.DataSize;

/** Copies the properties that are set onto the builders; an unset one keeps the builder's default. */
final class PetrelBuilders {
  private PetrelBuilders() {
  }

  static void applyServer(PetrelProperties.Server p, RpcServerBuilder b) {
    if (p.getAddress() != null) {
      b.bindAddress(p.getAddress(), p.getPort());
    } else {
      b.port(p.getPort());
    }
    set(p.getName(), b::name);
    set(p.getBusinessThreads(), b::businessThreads);
    set(p.getBusinessQueueSize(), b::businessQueueSize);
    if (p.isDirectExecutor() && p.getVirtualThreads() != null) {
      throw new IllegalStateException("petrel.server.direct-executor and petrel.server.virtual-threads both choose"
          + " where handlers run; set one of them");
    }
    if (p.isDirectExecutor()) {
      b.directExecutor();
    }
    set(p.getVirtualThreads(), b::virtualThreads);
    applyShared("petrel.server", p, b, b::tls);
    set(p.getMaxConcurrentCallsPerConnection(), b::maxConcurrentCallsPerConnection);
    set(p.getMaxConnections(), b::maxConnections);
    set(p.getMaxConnectionsPerAddress(), b::maxConnectionsPerAddress);
    set(p.getHandshakeTimeout(), b::handshakeTimeout);
    set(p.getFrameReceiveTimeout(), b::frameReceiveTimeout);
    set(p.getIdleTimeout(), b::idleTimeout);
    if (p.getKeepAliveTime() != null || p.getKeepAliveTimeout() != null) {
      b.keepAlive(orElse(p.getKeepAliveTime(), RpcServerBuilder.DEFAULT_KEEP_ALIVE_TIME),
          orElse(p.getKeepAliveTimeout(), RpcServerBuilder.DEFAULT_KEEP_ALIVE_TIMEOUT));
    }
    set(p.getMaxConnectionAge(), b::maxConnectionAge);
    set(p.getUnwritableTimeout(), b::unwritableTimeout);
    if (p.getMaxBufferedBytes() != null) {
      b.maxBufferedBytes(p.getMaxBufferedBytes().toBytes());
    }
    set(p.getShutdownGracePeriod(), b::shutdownGracePeriod);
  }

  static void applyClient(String name, PetrelProperties.Client p, RpcClientBuilder b) {
    String prefix = "petrel.clients." + name;
    if (p.getTarget() == null || p.getTarget().isBlank()) {
      throw new IllegalStateException(prefix + ".target is not set: say where client '" + name
          + "' calls, e.g. " + prefix + ".target=127.0.0.1:7000 (or static://h1:7000,h2:7000)");
    }
    b.target(p.getTarget()).name(name);
    set(p.getLoadBalancer(), b::loadBalancer);
    set(p.getConnectionsPerEndpoint(), b::connectionsPerEndpoint);
    set(p.getDefaultDeadline(), b::defaultDeadline);
    set(p.getConnectTimeout(), b::connectTimeout);
    set(p.getKeepAliveTime(), b::keepAliveTime);
    applyShared(prefix, p, b, b::tls);
    set(p.getMaxPendingCalls(), b::maxPendingCalls);
    if (p.getReconnectBackoffInitial() != null || p.getReconnectBackoffMax() != null) {
      b.reconnectBackoff(orElse(p.getReconnectBackoffInitial(), RpcClientBuilder.DEFAULT_RECONNECT_INITIAL),
          orElse(p.getReconnectBackoffMax(), RpcClientBuilder.DEFAULT_RECONNECT_MAX));
    }
  }

  /**
   * The options both builders have; {@code prefix} names the properties in error messages. TLS is set through
   * {@code tls} because each builder declares its own {@code tls(TlsConfig)}.
   */
  private static void applyShared(String prefix, PetrelProperties.Shared p, AbstractRpcBuilder<?> b,
      Consumer<TlsConfig> tls) {
    setBytes(prefix + ".max-frame-size", p.getMaxFrameSize(), b::maxFrameSize);
    setBytes(prefix + ".max-metadata-size", p.getMaxMetadataSize(), b::maxMetadataSize);
    set(p.getPercentileHistograms(), b::percentileHistograms);
    if (p.getTls().isEnabled()) {
      TlsConfig config = tls(prefix + ".tls", p.getTls());
      try {
        tls.accept(config);
      } catch (IllegalArgumentException e) {
        // A server-only option on a client, or the reverse: say which properties, not only which method.
        throw new IllegalStateException(prefix + ".tls: " + e.getMessage() + " (" + prefix + ".tls.*"
            + " properties: insecure-skip-hostname-verification is for clients, client-auth for the server)", e);
      }
    }
  }

  static TlsConfig tls(String prefix, PetrelProperties.Tls p) {
    TlsConfig.Builder t = TlsConfig.builder();
    if (p.getCertificateChain() != null || p.getPrivateKey() != null) {
      if (p.getCertificateChain() == null || p.getPrivateKey() == null) {
        throw new IllegalStateException(prefix + ".certificate-chain and " + prefix
            + ".private-key go together: set both or neither");
      }
      if (p.getPrivateKeyPassword() != null) {
        t.keyPair(p.getCertificateChain(), p.getPrivateKey(), p.getPrivateKeyPassword().toCharArray());
      } else {
        t.keyPair(p.getCertificateChain(), p.getPrivateKey());
      }
    }
    if (p.getTrustCertificates() != null) {
      t.trustCertificates(p.getTrustCertificates());
    }
    if (p.getClientAuth() != TlsConfig.ClientAuth.NONE) {
      t.clientAuth(p.getClientAuth());
    }
    if (p.isInsecureSkipHostnameVerification()) {
      t.insecureSkipHostnameVerification();
    }
    set(p.getReloadInterval(), t::reloadInterval);
    return t.build();
  }

  private static <T> void set(@Nullable T value, Consumer<T> option) {
    if (value != null) {
      option.accept(value);
    }
  }

  private static void setBytes(String property, @Nullable DataSize size, Consumer<Integer> option) {
    if (size != null) {
      long bytes = size.toBytes();
      if (bytes > Integer.MAX_VALUE) {
        throw new IllegalArgumentException(property + " must be at most " + Integer.MAX_VALUE + " bytes: " + size);
      }
      option.accept((int) bytes);
    }
  }

  private static Duration orElse(@Nullable Duration value, Duration fallback) {
    return value != null ? value : fallback;
  }
}
