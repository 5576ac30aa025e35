package io.petrel.rpc.spi;

import io.petrel.rpc.Defaults;
import io.micrometer.core.instrument.MeterRegistry;
import io.petrel.rpc.TlsConfig;
import io.petrel.rpc.TransportOption;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What a {@link ServerConfig} and a {@link ClientConfig} share, as their builders ({@code AbstractRpcBuilder})
 * share it: the name, frame and metadata limits, metrics, TLS, and the transport options
 * ({@link #option(TransportOption)}). Immutable.
 */
public abstract class TransportConfig {
  /** Default maxFrameSize: 8 MiB. */
  public static final int DEFAULT_MAX_FRAME_SIZE = Defaults.MAX_FRAME_SIZE;
  /** Default maxMetadataSize: 8 KiB. */
  public static final int DEFAULT_MAX_METADATA_SIZE = Defaults.MAX_METADATA_SIZE;

  private final String name;
  private final int maxFrameSize;
  private final int maxMetadataSize;
  private final @Nullable MeterRegistry meterRegistry;
  private final boolean percentileHistograms;
  private final @Nullable TlsConfig tls;
  private final Map<TransportOption<?>, Object> options;

  TransportConfig(Builder<?> b) {
    this.name = b.name;
    this.maxFrameSize = b.maxFrameSize;
    this.maxMetadataSize = b.maxMetadataSize;
    this.meterRegistry = b.meterRegistry;
    this.percentileHistograms = b.percentileHistograms;
    this.tls = b.tls;
    this.options = Map.copyOf(b.options);
  }

  /** The server's or client's name, in thread names, logs and metric tags. */
  public final String name() {
    return name;
  }

  /** Largest frame sent or accepted, header included. */
  public final int maxFrameSize() {
    return maxFrameSize;
  }

  /** Largest encoded metadata of one frame. */
  public final int maxMetadataSize() {
    return maxMetadataSize;
  }

  /** Where metrics go, or null for none. */
  public final @Nullable MeterRegistry meterRegistry() {
    return meterRegistry;
  }

  /** Publish percentile histograms for the call timers. */
  public final boolean percentileHistograms() {
    return percentileHistograms;
  }

  /** TLS settings, or null for plaintext. */
  public final @Nullable TlsConfig tls() {
    return tls;
  }

  /** The value of a transport option: the one set on the builder, else the option's default. */
  @SuppressWarnings("unchecked")
  public final <T extends @Nullable Object> T option(TransportOption<T> key) {
    Object v = options.get(key);
    return v != null ? (T) v : key.defaultValue();
  }

  /** Every transport option set on the builder (read-only). */
  public final Map<TransportOption<?>, Object> options() {
    return options;
  }

  /** The shared part of {@code toString()}. */
  final String commonToString() {
    return "name=" + name + ", maxFrameSize=" + maxFrameSize + ", maxMetadataSize=" + maxMetadataSize
        + ", meterRegistry=" + meterRegistry + ", percentileHistograms=" + percentileHistograms + ", tls=" + tls
        + ", options=" + options;
  }

  /**
   * The shared setters of the configs' builders.
   *
   * @param <B> the concrete builder
   */
  public abstract static class Builder<B extends Builder<B>> {
    private String name;
    private int maxFrameSize = DEFAULT_MAX_FRAME_SIZE;
    private int maxMetadataSize = DEFAULT_MAX_METADATA_SIZE;
    private @Nullable MeterRegistry meterRegistry;
    private boolean percentileHistograms;
    private @Nullable TlsConfig tls;
    private final Map<TransportOption<?>, Object> options = new LinkedHashMap<>();

    Builder(String defaultName) {
      this.name = defaultName;
    }

    @SuppressWarnings("unchecked")
    private B self() {
      return (B) this;
    }

    public B name(String name) {
      this.name = Objects.requireNonNull(name, "name");
      return self();
    }

    public B maxFrameSize(int maxFrameSize) {
      this.maxFrameSize = maxFrameSize;
      return self();
    }

    public B maxMetadataSize(int maxMetadataSize) {
      this.maxMetadataSize = maxMetadataSize;
      return self();
    }

    public B meterRegistry(@Nullable MeterRegistry meterRegistry) {
      this.meterRegistry = meterRegistry;
      return self();
    }

    public B percentileHistograms(boolean percentileHistograms) {
      this.percentileHistograms = percentileHistograms;
      return self();
    }

    public B tls(@Nullable TlsConfig tls) {
      this.tls = tls;
      return self();
    }

    /** Transport options, as checked by the user-facing builder. */
    public B options(Map<TransportOption<?>, Object> options) {
      this.options.clear();
      this.options.putAll(options);
      return self();
    }
  }
}
