package io.petrel.rpc;

import java.time.Duration;

/**
 * The default of every option the builders take, in one place: the builders ({@link RpcClientBuilder},
 * {@link RpcServerBuilder}) start from these, and so do the configs a transport receives. docs/configuration.md
 * gives each with what happens at its limit.
 */
public final class Defaults {
  private Defaults() {}

  // ---- both ----

  /** maxFrameSize: 8 MiB, header included. */
  public static final int MAX_FRAME_SIZE = 8 * 1024 * 1024;
  /** maxMetadataSize: 8 KiB of encoded metadata per frame. */
  public static final int MAX_METADATA_SIZE = 8 * 1024;

  // ---- client ----

  /** defaultDeadline: 30 s. A call never waits longer than this unless told to. */
  public static final Duration DEADLINE = Duration.ofSeconds(30);
  /** connectTimeout: 5 s. */
  public static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
  /** maxPendingCalls: 16384 calls pending (awaiting a response or waiting to be sent), per client. */
  public static final int MAX_PENDING_CALLS = 16384;
  /** reconnectBackoff: 100 ms doubling up to 10 s, with +-20% jitter. */
  public static final Duration RECONNECT_INITIAL = Duration.ofMillis(100);
  public static final Duration RECONNECT_MAX = Duration.ofSeconds(10);
  /** The client's keepAliveTime: 30 s. */
  public static final Duration CLIENT_KEEP_ALIVE = Duration.ofSeconds(30);
  /** The client's livenessTimeout: 2 s. */
  public static final Duration LIVENESS_TIMEOUT = Duration.ofSeconds(2);
  /** maxRetries: an idempotent call may be tried twice more after its first attempt. */
  public static final int MAX_RETRIES = 2;
  /**
   * retryBudget tokens: 100, so that the burst of one server dying with tens of calls in flight is retried
   * (retries stop after about 50 in an outage; gRPC's example of 10 tokens allowed only 5).
   */
  public static final int RETRY_BUDGET_TOKENS = 100;
  /** retryBudget ratio: each successful call gives back a tenth of a token. */
  public static final double RETRY_BUDGET_RATIO = 0.1;
  /**
   * hedging: off ({@link HedgingPolicy#OFF}, one attempt at a time). {@code RpcClientBuilder.hedging} and
   * {@code CallOptions.withHedging} turn it on for calls of idempotent methods.
   */
  public static final HedgingPolicy HEDGING = HedgingPolicy.OFF;
  /** The most attempts a hedged call may make in all (gRPC caps its hedging and retry policies at 5 too). */
  public static final int MAX_HEDGED_ATTEMPTS = 5;

  // ---- server ----

  /** businessThreads: max(16, 4 x available processors). */
  public static final int BUSINESS_THREADS = Math.max(16, 4 * Runtime.getRuntime().availableProcessors());
  /** businessQueueSize: 2048 waiting calls. */
  public static final int BUSINESS_QUEUE_SIZE = 2048;
  /** maxConcurrentCallsPerConnection: 1000. */
  public static final int MAX_CONCURRENT_CALLS_PER_CONNECTION = 1000;
  /** maxConnections: 10000. */
  public static final int MAX_CONNECTIONS = 10_000;
  /** shutdownGracePeriod: 10 s. */
  public static final Duration SHUTDOWN_GRACE = Duration.ofSeconds(10);
  /** handshakeTimeout: 10 s. */
  public static final Duration HANDSHAKE_TIMEOUT = Duration.ofSeconds(10);
  /** idleTimeout: 5 minutes. */
  public static final Duration IDLE_TIMEOUT = Duration.ofMinutes(5);
  /** The server's keepAlive time: a PING after 60 s of silence. */
  public static final Duration SERVER_KEEP_ALIVE_TIME = Duration.ofSeconds(60);
  /** The server's keepAlive timeout: closed 20 s after an unanswered PING. */
  public static final Duration SERVER_KEEP_ALIVE_TIMEOUT = Duration.ofSeconds(20);
  /** frameReceiveTimeout: 30 s. */
  public static final Duration FRAME_RECEIVE_TIMEOUT = Duration.ofSeconds(30);
  /** unwritableTimeout: 30 s. */
  public static final Duration UNWRITABLE_TIMEOUT = Duration.ofSeconds(30);
  /** maxConnectionsPerAddress: 1000. */
  public static final int MAX_CONNECTIONS_PER_ADDRESS = 1000;
  /**
   * maxBufferedBytes: a quarter of the smaller of the JVM's heap maximum ({@code -Xmx}) and its direct memory
   * limit ({@code -XX:MaxDirectMemorySize}, by default the heap's maximum), at least 16 MiB.
   */
  public static final long MAX_BUFFERED_BYTES = Math.max(16L << 20,
      Math.min(io.netty.util.internal.PlatformDependent.maxDirectMemory(), Runtime.getRuntime().maxMemory()) / 4);

  /**
   * maxBufferedBytesPerConnection for a server-wide {@code maxBufferedBytes}: a sixteenth of it, within 256 KiB
   * and 8 MiB, so a few connections that do not read cannot take the whole budget from the others.
   */
  public static long maxBufferedBytesPerConnection(long maxBufferedBytes) {
    return Math.max(256L << 10, Math.min(8L << 20, maxBufferedBytes / 16));
  }
}
