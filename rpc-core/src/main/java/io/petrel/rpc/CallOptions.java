package io.petrel.rpc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Options of one call: its deadline (absolute, or a timeout counted from when the call starts), the metadata
 * sent with it, interceptors of its own, where to deliver the response metadata, and the executor that decodes
 * the response and completes the future. Immutable; the
 * {@code with} methods return a copy. {@link #DEFAULT} has no deadline of its own (the method's, then the
 * client's default deadline applies) and nothing else.
 */
public final class CallOptions {
  public static final CallOptions DEFAULT = new CallOptions(null, 0, Metadata.EMPTY, List.of(), null, null, false,
      null, null, null);

  private final @Nullable Deadline deadline;
  private final long timeoutNanos;
  private final Metadata metadata;
  private final List<ClientInterceptor> interceptors;
  private final @Nullable Consumer<Metadata> responseMetadataListener;
  private final @Nullable Executor executor;
  private final boolean failFast;
  private final @Nullable String hashKey;
  private final @Nullable Consumer<Endpoint> endpointListener;
  /** The call's own hedging policy, or null for the client's. */
  private final @Nullable HedgingPolicy hedging;

  private CallOptions(@Nullable Deadline deadline, long timeoutNanos, Metadata metadata,
      List<ClientInterceptor> interceptors, @Nullable Consumer<Metadata> responseMetadataListener,
      @Nullable Executor executor, boolean failFast, @Nullable String hashKey,
      @Nullable Consumer<Endpoint> endpointListener, @Nullable HedgingPolicy hedging) {
    this.deadline = deadline;
    this.timeoutNanos = timeoutNanos;
    this.metadata = metadata;
    this.interceptors = interceptors;
    this.responseMetadataListener = responseMetadataListener;
    this.executor = executor;
    this.failFast = failFast;
    this.hashKey = hashKey;
    this.endpointListener = endpointListener;
    this.hedging = hedging;
  }

  /** A copy whose calls must end by {@code deadline}. */
  public CallOptions withDeadline(Deadline deadline) {
    return new CallOptions(Objects.requireNonNull(deadline, "deadline"), timeoutNanos, metadata, interceptors,
        responseMetadataListener, executor, failFast, hashKey, endpointListener, hedging);
  }

  /** A copy whose calls must end {@code timeout} after each call starts. */
  public CallOptions withTimeout(Duration timeout) {
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("timeout must be > 0: " + timeout);
    }
    return new CallOptions(deadline, timeout.toNanos(), metadata, interceptors, responseMetadataListener,
        executor, failFast, hashKey, endpointListener, hedging);
  }

  /** A copy that also sends the given metadata. */
  public CallOptions withMetadata(Metadata more) {
    return new CallOptions(deadline, timeoutNanos, metadata.withAll(Objects.requireNonNull(more, "metadata")),
        interceptors, responseMetadataListener, executor, failFast, hashKey, endpointListener, hedging);
  }

  /** A copy whose calls also pass through these interceptors (after the client's own). */
  public CallOptions withInterceptors(ClientInterceptor... more) {
    List<ClientInterceptor> list = new ArrayList<>(interceptors);
    for (ClientInterceptor i : more) {
      list.add(Objects.requireNonNull(i, "interceptor"));
    }
    return new CallOptions(deadline, timeoutNanos, metadata, List.copyOf(list), responseMetadataListener,
        executor, failFast, hashKey, endpointListener, hedging);
  }

  /**
   * A copy whose calls hand the server's response metadata to {@code listener} before the call's future
   * completes (on the thread that completes it).
   */
  public CallOptions withResponseMetadataListener(Consumer<Metadata> listener) {
    return new CallOptions(deadline, timeoutNanos, metadata, interceptors, Objects.requireNonNull(listener),
        executor, failFast, hashKey, endpointListener, hedging);
  }

  /**
   * A copy whose responses are decoded, and whose futures completed, on {@code executor} instead of the
   * client's {@code callbackExecutor} (by default the connection's event loop). Blocking calls
   * ({@link RpcClient#unaryCall}) set this themselves: their response is decoded on the calling thread.
   */
  public CallOptions withExecutor(Executor executor) {
    return new CallOptions(deadline, timeoutNanos, metadata, interceptors, responseMetadataListener,
        Objects.requireNonNull(executor, "executor"), failFast, hashKey, endpointListener, hedging);
  }

  /**
   * A copy whose calls fail at once with UNAVAILABLE when their endpoint cannot be reached now (the client backs
   * off after a failed connection attempt), instead of waiting for the next attempt. By default ({@code false}) a
   * call made during the backoff waits for the next attempt when it comes before the call's deadline, and fails
   * at once, naming the cause and when the next attempt is due, when it comes later. The inverse of grpc-java's
   * {@code withWaitForReady()}; see docs/configuration.md, "Calls while a server is unreachable".
   */
  public CallOptions withFailFast(boolean failFast) {
    return new CallOptions(deadline, timeoutNanos, metadata, interceptors, responseMetadataListener, executor,
        failFast, hashKey, endpointListener, hedging);
  }

  /**
   * A copy whose calls carry {@code key} to the load balancer (for example a user id, so that a hashing balancer
   * sends one user's calls to the same server). Not sent to the server. Of the built-in balancers only
   * {@code consistent_hash} reads it; {@code round_robin} and {@code least_pending} ignore it.
   */
  public CallOptions withHashKey(String key) {
    return new CallOptions(deadline, timeoutNanos, metadata, interceptors, responseMetadataListener, executor,
        failFast, Objects.requireNonNull(key, "hashKey"), endpointListener, hedging);
  }

  /**
   * A copy whose calls tell {@code listener} which endpoint each attempt is sent to, once the load balancer has
   * picked it: on the thread that routes the attempt (the caller's, or the client's event loop for a call that
   * waited for a connection), before the request is written. A call rerouted because its endpoint could not be
   * reached tells each endpoint it tried, in order. An in-process client has no endpoints and never calls it. The
   * listener must be quick and should not throw: an exception is logged and the call goes on. Several listeners
   * (an interceptor's and the caller's) are called in the order set, those after one that threw skipped for that
   * attempt. {@code rpc-observation} uses it for the peer of client spans.
   */
  public CallOptions withEndpointListener(Consumer<Endpoint> listener) {
    Objects.requireNonNull(listener, "listener");
    Consumer<Endpoint> before = endpointListener;
    return new CallOptions(deadline, timeoutNanos, metadata, interceptors, responseMetadataListener, executor,
        failFast, hashKey, before == null ? listener : before.andThen(listener), hedging);
  }

  /**
   * A copy whose calls are hedged under {@code policy} instead of the client's policy
   * ({@link RpcClientBuilder#hedging}): up to {@code policy.maxAttempts()} attempts, one more every
   * {@code policy.delay()} while none has answered; {@link HedgingPolicy#OFF} turns hedging off for these calls.
   * Only calls of idempotent methods ({@code @RpcMethod(idempotent = true)}) are ever hedged: for any other method
   * this option changes nothing. See docs/cluster.md, "Hedging".
   */
  public CallOptions withHedging(HedgingPolicy policy) {
    return new CallOptions(deadline, timeoutNanos, metadata, interceptors, responseMetadataListener, executor,
        failFast, hashKey, endpointListener, Objects.requireNonNull(policy, "hedging policy"));
  }

  /** As {@link #withHedging(HedgingPolicy)} with {@code HedgingPolicy.of(maxAttempts, delay)}. */
  public CallOptions withHedging(int maxAttempts, Duration delay) {
    return withHedging(HedgingPolicy.of(maxAttempts, delay));
  }

  /** A copy whose calls are never hedged, whatever the client's policy. */
  public CallOptions withoutHedging() {
    return withHedging(HedgingPolicy.OFF);
  }

  /** The policy set by {@link #withHedging}, or null: the client's applies. */
  public @Nullable HedgingPolicy hedging() {
    return hedging;
  }

  /** The listener set by {@link #withEndpointListener}, or null. */
  public @Nullable Consumer<Endpoint> endpointListener() {
    return endpointListener;
  }

  /** True when calls fail at once while their endpoint backs off ({@link #withFailFast}); false by default. */
  public boolean isFailFast() {
    return failFast;
  }

  /** The key set by {@link #withHashKey}, or null. */
  public @Nullable String hashKey() {
    return hashKey;
  }

  /** The absolute deadline, or null. */
  public @Nullable Deadline deadline() {
    return deadline;
  }

  /** The per-call timeout in nanoseconds, or 0 for none. */
  public long timeoutNanos() {
    return timeoutNanos;
  }

  public Metadata metadata() {
    return metadata;
  }

  public List<ClientInterceptor> interceptors() {
    return interceptors;
  }

  /** The response metadata listener, or null. */
  public @Nullable Consumer<Metadata> responseMetadataListener() {
    return responseMetadataListener;
  }

  /** The executor set by {@link #withExecutor}, or null. */
  public @Nullable Executor executor() {
    return executor;
  }

  /**
   * The deadline of a call starting now: the earliest of this option's deadline, its timeout, and
   * {@code fallbackTimeoutNanos} when neither is set (0 for none). Null when there is no deadline at all.
   */
  public @Nullable Deadline effectiveDeadline(long fallbackTimeoutNanos) {
    return effectiveDeadline(fallbackTimeoutNanos, System.nanoTime());
  }

  /**
   * As {@link #effectiveDeadline(long)}, for a call starting at {@code now} (a {@link System#nanoTime()} reading
   * the caller has just taken, so that the call's timeouts and its own clock start at the same instant).
   */
  public @Nullable Deadline effectiveDeadline(long fallbackTimeoutNanos, long now) {
    Deadline d = deadline;
    if (timeoutNanos > 0) {
      d = Deadline.afterNanos(timeoutNanos, now).minimum(d);
    } else if (d == null && fallbackTimeoutNanos > 0) {
      d = Deadline.afterNanos(fallbackTimeoutNanos, now);
    }
    return d;
  }

  @Override
  public String toString() {
    return "CallOptions{deadline=" + deadline + ", timeoutNanos=" + timeoutNanos + ", metadata=" + metadata
        + ", interceptors=" + interceptors.size() + (failFast ? ", failFast" : "")
        + (hashKey != null ? ", hashKey=" + hashKey : "") + (hedging != null ? ", " + hedging : "") + "}";
  }
}
