package io.petrel.rpc;

import java.time.Duration;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * How calls of idempotent methods are hedged (gRPC's hedging policy): the first attempt is sent at once; while no
 * attempt has ended the call, another is sent every {@link #delay()}, to an endpoint other than those already
 * working on it where the load balancer has one, up to {@link #maxAttempts()} in all. The first attempt that ends
 * the call (a response, or a status that is not one of the {@link #nonFatalCodes()}, by default UNAVAILABLE only)
 * wins and the others are cancelled; an attempt that fails with a non-fatal code is replaced at once by another,
 * where the policy allows. Hedges take tokens
 * from the client's retry budget and are sent only within the call's deadline. Set for a client with
 * {@link RpcClientBuilder#hedging} and for a call with {@link CallOptions#withHedging} or
 * {@link CallOptions#withoutHedging}; see docs/cluster.md, "Hedging". Immutable.
 */
public final class HedgingPolicy {
  /** No hedging: one attempt at a time. */
  public static final HedgingPolicy OFF = new HedgingPolicy(1, Duration.ZERO, EnumSet.of(Status.Code.UNAVAILABLE));

  private final int maxAttempts;
  private final Duration delay;
  private final long delayNanos;
  /** Read on every failed attempt: an EnumSet (a bit test), never changed after construction. */
  private final EnumSet<Status.Code> nonFatal;

  private HedgingPolicy(int maxAttempts, Duration delay, EnumSet<Status.Code> nonFatal) {
    this.maxAttempts = maxAttempts;
    this.delay = delay;
    this.delayNanos = delay.toNanos();
    this.nonFatal = nonFatal;
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
    return maxAttempts == 1 ? OFF : new HedgingPolicy(maxAttempts, delay, EnumSet.of(Status.Code.UNAVAILABLE));
  }

  /**
   * This policy with other non-fatal codes (gRPC's {@code nonFatalStatusCodes}): an attempt that fails with one of
   * {@code codes} does not end the call; the others go on, and one more is sent at once in its place where
   * {@code maxAttempts}, the deadline and the retry budget allow. The call fails with such a code only when no
   * attempt is left and none may start. Any other status ends the call. The default is UNAVAILABLE alone; none at
   * all makes every failure end the call. Add codes your servers use for "try another one" (RESOURCE_EXHAUSTED from
   * a handler that sheds load), not ones that say the request is wrong (INVALID_ARGUMENT, NOT_FOUND).
   *
   * @throws IllegalArgumentException for OK (a response always ends the call) or DEADLINE_EXCEEDED (the attempts
   *     share the call's deadline, so none could go on)
   */
  public HedgingPolicy withNonFatalCodes(Status.Code... codes) {
    EnumSet<Status.Code> set = EnumSet.noneOf(Status.Code.class);
    for (Status.Code c : codes) {
      Objects.requireNonNull(c, "hedging non-fatal code");
      if (c == Status.Code.OK || c == Status.Code.DEADLINE_EXCEEDED) {
        throw new IllegalArgumentException("hedging non-fatal codes cannot include " + c + ": "
            + (c == Status.Code.OK ? "a response always ends the call"
                : "the attempts share the call's deadline, so when one's passes the call's has"));
      }
      set.add(c);
    }
    return new HedgingPolicy(maxAttempts, delay, set);
  }

  /** The codes an attempt may fail with without ending the call (by default UNAVAILABLE); a copy. */
  public Set<Status.Code> nonFatalCodes() {
    return Collections.unmodifiableSet(EnumSet.copyOf(nonFatal));
  }

  /** Whether an attempt that failed with {@code code} leaves the call to the other attempts. */
  public boolean isNonFatal(Status.Code code) {
    return nonFatal.contains(code);
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
    return o instanceof HedgingPolicy p && p.maxAttempts == maxAttempts && p.delayNanos == delayNanos
        && p.nonFatal.equals(nonFatal);
  }

  @Override
  public int hashCode() {
    return (31 * maxAttempts + Long.hashCode(delayNanos)) * 31 + nonFatal.hashCode();
  }

  @Override
  public String toString() {
    return isOn() ? "HedgingPolicy{maxAttempts=" + maxAttempts + ", delay=" + delay + ", nonFatalCodes=" + nonFatal
        + "}" : "HedgingPolicy{off}";
  }
}
