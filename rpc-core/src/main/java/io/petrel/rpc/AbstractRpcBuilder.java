package io.petrel.rpc;

import io.micrometer.core.instrument.MeterRegistry;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The options {@link RpcServerBuilder} and {@link RpcClientBuilder} share: a name, the transport, frame and
 * metadata limits, metrics, TLS, and transport options. Each setter returns the builder it was called on.
 * Defaults ({@link Defaults}) and what happens at each limit: docs/configuration.md. The fields and protected
 * methods are for rpc-core's implementation of the builders ({@link RpcProvider}).
 *
 * @param <B> the concrete builder
 */
public abstract class AbstractRpcBuilder<B extends AbstractRpcBuilder<B>> {
  /** Default {@link #maxFrameSize}: 8 MiB, header included. */
  public static final int DEFAULT_MAX_FRAME_SIZE = Defaults.MAX_FRAME_SIZE;
  /** Default {@link #maxMetadataSize}: 8 KiB of encoded metadata per frame. */
  public static final int DEFAULT_MAX_METADATA_SIZE = Defaults.MAX_METADATA_SIZE;

  protected String name;
  protected @Nullable String transport;
  protected int maxFrameSize = DEFAULT_MAX_FRAME_SIZE;
  protected int maxMetadataSize = DEFAULT_MAX_METADATA_SIZE;
  protected @Nullable MeterRegistry meterRegistry;
  protected boolean percentileHistograms;
  protected @Nullable TlsConfig tls;
  protected final Map<TransportOption<?>, Object> options = new LinkedHashMap<>();

  AbstractRpcBuilder(String defaultName) {
    this.name = defaultName;
  }

  @SuppressWarnings("unchecked")
  private B self() {
    return (B) this;
  }

  /** A name used in thread names, logs and metric tags (default {@code petrel-server} / {@code petrel-client}). */
  public B name(String name) {
    this.name = Objects.requireNonNull(name, "name");
    return self();
  }

  /**
   * Selects a transport by name, e.g. {@code "netty"} (default: the highest-priority one on the class path).
   * Cannot be combined with {@code inProcess(name)}, which selects the in-process transport.
   */
  public B transport(String name) {
    this.transport = Objects.requireNonNull(name, "transport");
    return self();
  }

  /**
   * Largest frame sent or accepted, header included (default 8 MiB, at least 64). A request over it fails before
   * it is sent; a frame over it from the peer is skipped unread and answered (or failed) with RESOURCE_EXHAUSTED
   * naming this option.
   */
  public B maxFrameSize(int bytes) {
    this.maxFrameSize = checkAtLeast("maxFrameSize", bytes, 64);
    return self();
  }

  /** Largest encoded metadata of one frame (default 8 KiB); over it, as for {@link #maxFrameSize}. */
  public B maxMetadataSize(int bytes) {
    this.maxMetadataSize = checkNonNegative("maxMetadataSize", bytes);
    return self();
  }

  /**
   * Records metrics in the given registry (calls by method and status, sizes, and the transport's own: see
   * docs/observability.md). Without a registry nothing is recorded and no meter is created.
   */
  public B meterRegistry(MeterRegistry registry) {
    this.meterRegistry = Objects.requireNonNull(registry, "meterRegistry");
    return self();
  }

  /** Publishes percentile histograms for the call timers (for Prometheus-style quantiles; default off). */
  public B percentileHistograms(boolean enabled) {
    this.percentileHistograms = enabled;
    return self();
  }

  /**
   * Sets an option of a transport ({@link TransportOption}), e.g.
   * {@code option(NettyOptions.IO_MODE, IoMode.NIO)}. The value is checked now ({@link IllegalArgumentException}
   * naming the option); a transport ignores options that are not its own.
   */
  public <T extends @Nullable Object> B option(TransportOption<T> key, T value) {
    Objects.requireNonNull(key, "key");
    options.put(key, key.validate(value));
    return self();
  }

  /** The transport options set so far (for the configs). */
  protected Map<TransportOption<?>, Object> options() {
    return Collections.unmodifiableMap(new LinkedHashMap<>(options));
  }

  static void checkPort(int port) {
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("port must be 0..65535: " + port);
    }
  }

  static java.time.Duration checkTimeout(String what, java.time.Duration d) {
    Objects.requireNonNull(d, what);
    if (d.isNegative()) {
      throw new IllegalArgumentException(what + " must be >= 0 (0 = off): " + d);
    }
    return d;
  }

  static int checkPositive(String what, int n) {
    if (n <= 0) {
      throw new IllegalArgumentException(what + " must be > 0: " + n);
    }
    return n;
  }

  static int checkNonNegative(String what, int n) {
    if (n < 0) {
      throw new IllegalArgumentException(what + " must be >= 0: " + n);
    }
    return n;
  }

  static int checkAtLeast(String what, int n, int min) {
    if (n < min) {
      throw new IllegalArgumentException(what + " must be >= " + min + ": " + n);
    }
    return n;
  }
}
