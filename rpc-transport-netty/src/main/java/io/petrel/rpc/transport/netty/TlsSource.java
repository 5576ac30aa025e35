package io.petrel.rpc.transport.netty;

import io.petrel.rpc.spi.RateLimitedLog;
import io.netty.handler.ssl.SslContext;
import io.petrel.rpc.TlsConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link SslContext} of a server or client, which new connections take with {@link #context()}, and its
 * reload: {@link #reload()} builds a new one from the {@link TlsConfig} (files read again); with a reload
 * interval, {@link #context()} also checks, at most once per interval, whether the files' contents changed and
 * reloads them if so. Connections keep the context they were made with.
 */
final class TlsSource {
  private static final Logger log = LoggerFactory.getLogger(TlsSource.class);

  private final TlsConfig config;
  private final boolean server;
  /** "server 'name'" or "client 'name'", for logs. */
  private final String owner;
  private final RateLimitedLog limitLog;
  private final long intervalNanos;
  private final AtomicBoolean checking = new AtomicBoolean();
  private volatile SslContext context;
  private volatile long nextCheck;
  /** SHA-256 of each file when the current context was built; guarded by this. */
  private Map<Path, String> digests;

  TlsSource(TlsConfig config, boolean server, String owner, RateLimitedLog limitLog) throws IOException {
    this.config = config;
    this.server = server;
    this.owner = owner;
    this.limitLog = limitLog;
    this.intervalNanos = config.reloadInterval().toNanos();
    synchronized (this) {
      this.digests = digests();
      this.context = build();
    }
    this.nextCheck = System.nanoTime() + intervalNanos;
  }

  /**
   * The name a client expects in the server's certificate and sends as SNI for a connection to {@code host}:
   * the configuration's {@code serverName}, else {@code host}.
   */
  String serverName(String host) {
    String name = config.serverName();
    return name != null ? name : host;
  }

  /** Whether the configuration names the server ({@code TlsConfig.Builder.serverName}) in place of the host. */
  boolean namesServer() {
    return config.serverName() != null;
  }

  /** The context for a new connection; may first reload changed files (see the class comment). */
  SslContext context() {
    if (intervalNanos > 0 && System.nanoTime() - nextCheck >= 0 && checking.compareAndSet(false, true)) {
      try {
        nextCheck = System.nanoTime() + intervalNanos;
        reloadIfChanged();
      } finally {
        checking.set(false);
      }
    }
    return context;
  }

  /** Builds a new context from the config now; on failure the current one stays and this throws. */
  synchronized void reload() throws IOException {
    Map<Path, String> d = digests();
    context = build();
    digests = d;
    log.info("TLS material of {} reloaded ({}); new connections use it", owner, config);
  }

  private synchronized void reloadIfChanged() {
    try {
      Map<Path, String> d = digests();
      if (d.equals(digests)) {
        return;
      }
      context = build();
      digests = d;
      log.info("TLS files of {} changed; reloaded ({}), new connections use them", owner, config);
    } catch (IOException | RuntimeException e) {
      limitLog.warn("TLS reload failed", "TLS files of " + owner + " changed but cannot be loaded, still using the"
          + " previous certificate and key (next check in " + TimeUnit.NANOSECONDS.toMillis(intervalNanos)
          + " ms): " + e.getMessage());
    }
  }

  private SslContext build() throws IOException {
    return server ? TlsContexts.server(config) : TlsContexts.client(config);
  }

  private Map<Path, String> digests() throws IOException {
    Map<Path, String> d = new HashMap<>();
    for (Path p : config.files()) {
      byte[] bytes;
      try {
        bytes = Files.readAllBytes(p);
      } catch (IOException e) {
        throw new IOException("cannot read " + p + ": " + e, e);
      }
      try {
        d.put(p, java.util.HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes)));
      } catch (NoSuchAlgorithmException e) {
        throw new IllegalStateException("SHA-256 is missing from this JVM", e);
      }
    }
    return d;
  }

  /** For the start log line: protocols, provider, and the options that matter. */
  String describe() {
    StringBuilder sb = new StringBuilder("TLSv1.3/TLSv1.2 by ").append(TlsContexts.describe(
        TlsContexts.provider()));
    if (server) {
      sb.append(", clientAuth ").append(config.clientAuth());
    } else if (!config.hostnameVerification()) {
      sb.append(", hostname verification OFF");
    }
    if (!server && config.serverName() != null) {
      sb.append(", server name '").append(config.serverName()).append("' expected of every endpoint");
    }
    if (intervalNanos > 0) {
      sb.append(", files checked for changes every ").append(config.reloadInterval().toMillis()).append(" ms");
    }
    return sb.toString();
  }
}
