package io.petrel.rpc.spi;

import io.petrel.rpc.Defaults;
import java.time.Duration;

/**
 * The server's protections against peers that misbehave or vanish, validated by
 * {@link io.petrel.rpc.RpcServerBuilder}; docs/configuration.md gives each default and what happens at the
 * limit. A duration of 0 turns that check off. Built by name ({@link #newBuilder()}); part of {@link ServerConfig}.
 */
public final class ServerLimits {
  /** Default handshakeTimeout: 10 s. */
  public static final Duration DEFAULT_HANDSHAKE_TIMEOUT = Defaults.HANDSHAKE_TIMEOUT;
  /** Default idleTimeout: 5 minutes. */
  public static final Duration DEFAULT_IDLE_TIMEOUT = Defaults.IDLE_TIMEOUT;
  /** Default keepAlive time: a PING after 60 s of silence. */
  public static final Duration DEFAULT_KEEP_ALIVE_TIME = Defaults.SERVER_KEEP_ALIVE_TIME;
  /** Default keepAlive timeout: closed 20 s after an unanswered PING. */
  public static final Duration DEFAULT_KEEP_ALIVE_TIMEOUT = Defaults.SERVER_KEEP_ALIVE_TIMEOUT;
  /** Default frameReceiveTimeout: 30 s. */
  public static final Duration DEFAULT_FRAME_RECEIVE_TIMEOUT = Defaults.FRAME_RECEIVE_TIMEOUT;
  /** Default unwritableTimeout: 30 s. */
  public static final Duration DEFAULT_UNWRITABLE_TIMEOUT = Defaults.UNWRITABLE_TIMEOUT;
  /** Default maxConnectionsPerAddress: 1000. */
  public static final int DEFAULT_MAX_CONNECTIONS_PER_ADDRESS = Defaults.MAX_CONNECTIONS_PER_ADDRESS;
  /** Default maxBufferedBytes: a quarter of the smaller of the heap maximum and the direct memory limit, at least 16 MiB. */
  public static final long DEFAULT_MAX_BUFFERED_BYTES = Defaults.MAX_BUFFERED_BYTES;

  /**
   * Default maxBufferedBytesPerConnection for a server-wide {@code maxBufferedBytes}: a sixteenth of it, within
   * 256 KiB and 8 MiB, so a few connections that do not read cannot take the whole budget from the others.
   */
  public static long defaultMaxBufferedBytesPerConnection(long maxBufferedBytes) {
    return Defaults.maxBufferedBytesPerConnection(maxBufferedBytes);
  }

  private final long handshakeTimeoutNanos;
  private final long idleTimeoutNanos;
  private final long keepAliveTimeNanos;
  private final long keepAliveTimeoutNanos;
  private final long frameReceiveTimeoutNanos;
  private final long maxConnectionAgeNanos;
  private final long unwritableTimeoutNanos;
  private final int maxConnectionsPerAddress;
  private final long maxBufferedBytes;
  private final long maxBufferedBytesPerConnection;

  private ServerLimits(Builder b) {
    this.handshakeTimeoutNanos = b.handshakeTimeoutNanos;
    this.idleTimeoutNanos = b.idleTimeoutNanos;
    this.keepAliveTimeNanos = b.keepAliveTimeNanos;
    this.keepAliveTimeoutNanos = b.keepAliveTimeoutNanos;
    this.frameReceiveTimeoutNanos = b.frameReceiveTimeoutNanos;
    this.maxConnectionAgeNanos = b.maxConnectionAgeNanos;
    this.unwritableTimeoutNanos = b.unwritableTimeoutNanos;
    this.maxConnectionsPerAddress = b.maxConnectionsPerAddress;
    this.maxBufferedBytes = b.maxBufferedBytes;
    this.maxBufferedBytesPerConnection = b.maxBufferedBytesPerConnection > 0 ? b.maxBufferedBytesPerConnection
        : defaultMaxBufferedBytesPerConnection(b.maxBufferedBytes);
  }

  /** A builder with every limit at its default. */
  public static Builder newBuilder() {
    return new Builder();
  }

  /** A new connection must deliver its first complete frame within this. */
  public long handshakeTimeoutNanos() {
    return handshakeTimeoutNanos;
  }

  /** A connection with no call in flight and none started for this long is drained (GOAWAY, PING, close); keepalive PINGs do not count as calls. */
  public long idleTimeoutNanos() {
    return idleTimeoutNanos;
  }

  /** After this long without receiving anything the server sends a PING. */
  public long keepAliveTimeNanos() {
    return keepAliveTimeNanos;
  }

  /** A PING unanswered (nothing received) for this long closes the connection. */
  public long keepAliveTimeoutNanos() {
    return keepAliveTimeoutNanos;
  }

  /** A frame whose first bytes arrived must be complete within this. */
  public long frameReceiveTimeoutNanos() {
    return frameReceiveTimeoutNanos;
  }

  /** A connection older than this (+-10% jitter) is drained; 0 = no maximum age. */
  public long maxConnectionAgeNanos() {
    return maxConnectionAgeNanos;
  }

  /** A peer that keeps the connection's unsent responses above the high water mark for this long (it does not read) is disconnected. */
  public long unwritableTimeoutNanos() {
    return unwritableTimeoutNanos;
  }

  /** Connections open at once from one remote IP address. */
  public int maxConnectionsPerAddress() {
    return maxConnectionsPerAddress;
  }

  /**
   * Server-wide cap on the memory held for peers beyond their sockets: partially received frames, requests of
   * 8 KiB or more waiting for the business pool, responses waiting for the event loop, and responses waiting
   * for a peer that does not read (heap or direct).
   */
  public long maxBufferedBytes() {
    return maxBufferedBytes;
  }

  /**
   * One connection's share of {@link #maxBufferedBytes}: responses waiting for its peer to read (and requests
   * of 8 KiB or more waiting for the business pool). Over it, once the peer has not read for a grace period, a
   * response is replaced by RESOURCE_EXHAUSTED and new requests are refused; a connection still not reading a
   * grace period later is closed.
   */
  public long maxBufferedBytesPerConnection() {
    return maxBufferedBytesPerConnection;
  }

  @Override
  public String toString() {
    return "ServerLimits{"
        + "handshakeTimeoutNanos=" + handshakeTimeoutNanos
        + ", idleTimeoutNanos=" + idleTimeoutNanos
        + ", keepAliveTimeNanos=" + keepAliveTimeNanos
        + ", keepAliveTimeoutNanos=" + keepAliveTimeoutNanos
        + ", frameReceiveTimeoutNanos=" + frameReceiveTimeoutNanos
        + ", maxConnectionAgeNanos=" + maxConnectionAgeNanos
        + ", unwritableTimeoutNanos=" + unwritableTimeoutNanos
        + ", maxConnectionsPerAddress=" + maxConnectionsPerAddress
        + ", maxBufferedBytes=" + maxBufferedBytes
        + ", maxBufferedBytesPerConnection=" + maxBufferedBytesPerConnection
        + "}";
  }

  /** Sets the limits by name; every one has a default. */
  public static final class Builder {
    private long handshakeTimeoutNanos = DEFAULT_HANDSHAKE_TIMEOUT.toNanos();
    private long idleTimeoutNanos = DEFAULT_IDLE_TIMEOUT.toNanos();
    private long keepAliveTimeNanos = DEFAULT_KEEP_ALIVE_TIME.toNanos();
    private long keepAliveTimeoutNanos = DEFAULT_KEEP_ALIVE_TIMEOUT.toNanos();
    private long frameReceiveTimeoutNanos = DEFAULT_FRAME_RECEIVE_TIMEOUT.toNanos();
    private long maxConnectionAgeNanos = 0;
    private long unwritableTimeoutNanos = DEFAULT_UNWRITABLE_TIMEOUT.toNanos();
    private int maxConnectionsPerAddress = DEFAULT_MAX_CONNECTIONS_PER_ADDRESS;
    private long maxBufferedBytes = DEFAULT_MAX_BUFFERED_BYTES;
    /** 0: derived from maxBufferedBytes ({@link RpcServerBuilder#defaultMaxBufferedBytesPerConnection}). */
    private long maxBufferedBytesPerConnection;

    private Builder() {}

    public Builder handshakeTimeoutNanos(long handshakeTimeoutNanos) {
      this.handshakeTimeoutNanos = handshakeTimeoutNanos;
      return this;
    }

    public Builder idleTimeoutNanos(long idleTimeoutNanos) {
      this.idleTimeoutNanos = idleTimeoutNanos;
      return this;
    }

    public Builder keepAliveTimeNanos(long keepAliveTimeNanos) {
      this.keepAliveTimeNanos = keepAliveTimeNanos;
      return this;
    }

    public Builder keepAliveTimeoutNanos(long keepAliveTimeoutNanos) {
      this.keepAliveTimeoutNanos = keepAliveTimeoutNanos;
      return this;
    }

    public Builder frameReceiveTimeoutNanos(long frameReceiveTimeoutNanos) {
      this.frameReceiveTimeoutNanos = frameReceiveTimeoutNanos;
      return this;
    }

    public Builder maxConnectionAgeNanos(long maxConnectionAgeNanos) {
      this.maxConnectionAgeNanos = maxConnectionAgeNanos;
      return this;
    }

    public Builder unwritableTimeoutNanos(long unwritableTimeoutNanos) {
      this.unwritableTimeoutNanos = unwritableTimeoutNanos;
      return this;
    }

    public Builder maxConnectionsPerAddress(int maxConnectionsPerAddress) {
      this.maxConnectionsPerAddress = maxConnectionsPerAddress;
      return this;
    }

    public Builder maxBufferedBytes(long maxBufferedBytes) {
      this.maxBufferedBytes = maxBufferedBytes;
      return this;
    }

    /** 0 (the default) derives it from maxBufferedBytes. */
    public Builder maxBufferedBytesPerConnection(long maxBufferedBytesPerConnection) {
      this.maxBufferedBytesPerConnection = maxBufferedBytesPerConnection;
      return this;
    }

    public ServerLimits build() {
      return new ServerLimits(this);
    }
  }
}
