package io.petrel.rpc;

import java.time.Duration;
import java.util.Objects;

/**
 * How calls of idempotent methods are hedged (gRPC's hedging policy): the first attempt is sent at once; while no
 * attempt has ended the call, another is sent every {@link #delay()}, to an endpoint other than those already
 * working on it where the load balancer has one, up to {@link #maxAttempts()} in all. The first attempt that ends
 * the call (a response, or a status that is not UNAVAILABLE) wins and the others are cancelled. Hedges take tokens
 * from the client's retry budget and are sent only within the call's deadline. Set for a client with
 * {@link RpcClientBuilder#hedging} and for a call with {@link CallOptions#withHedging} or
 * {@link CallOptions#withoutHedging}; see docs/cluster.md, "Hedging". Immutable.
 */
public final class HedgingPolicy {
  /** No hedging: one attempt at a time. */
  public static final HedgingPolicy OFF = new HedgingPolicy(1, Duration.ZERO);

  private final int maxAttempts;
  private final Duration delay;
  private final long delayNanos;

  private HedgingPolicy(int maxAttempts, Duration delay) {
    this.maxAttempts = maxAttempts;
    this.delay = delay;
    this.delayNanos = delay.toNanos();
  }

  /**
   * A policy of up to {@code maxAttempts} attempts in all (1 to {@link Defaults#MAX_HEDGED_ATTEMPTS}; 1 is
   * {@link #OFF}), one more every {@code delay} (>= 0; 0 sends them all at once) while none has answered.
   *
   * @throws IllegalArgumentException naming the argument that is out of range
   */
  public static HedgingPolicy of(int maxAttempts, Duration delay) {
    Objects.requireNonNull(delay, "hedging delay");
    if (maxAttempts < 1 || maxAttempts > Defaults.MAX_HEDGED_ATTEMPTS) {
      throw new IllegalArgumentException("hedging maxAttempts must be between 1 and " + Defaults.MAX_HEDGED_ATTEMPTS
          + ": " + maxAttempts);
    }
    if (delay.isNegative()) {
      throw new IllegalArgumentException("hedging delay must be >= 0: " + delay);
    }
    return maxAttempts == 1 ? OFF : new HedgingPolicy(maxAttempts, delay);
  }

  /** Attempts of one call in all, the first included; 1 means no hedging. */
  public int maxAttempts() {
    return maxAttempts;
  }

  /** How long after an attempt starts without the call having ended the next one is sent. */
  public Duration delay() {
    return delay;
  }

  /** {@link #delay()} in nanoseconds. */
  public long delayNanos() {
    return delayNanos;
  }

  /** True when calls under this policy may have more than one attempt. */
  public boolean isOn() {
    return maxAttempts > 1;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof HedgingPolicy p && p.maxAttempts == maxAttempts && p.delayNanos == delayNanos;
  }

  @Override
  public int hashCode() {
    return 31 * maxAttempts + Long.hashCode(delayNanos);
  }

  @Override
  public String toString() {
    return isOn() ? "HedgingPolicy{maxAttempts=" + maxAttempts + ", delay=" + delay + "}" : "HedgingPolicy{off}";
  }
}
