package io.petrel.rpc;

import java.time.Duration;
import java.util.Objects;

/**
 * Options of one call: its deadline (absolute, or a timeout counted from when the call starts) and the
 * metadata sent with it. Immutable; the {@code with} methods return a copy. {@link #DEFAULT} has no deadline
 * of its own (the method's, then the client's default deadline applies) and no metadata.
 */
public final class CallOptions {
  public static final CallOptions DEFAULT = new CallOptions(null, 0, Metadata.EMPTY);

  private final Deadline deadline;
  private final long timeoutNanos;
  private final Metadata metadata;

  private CallOptions(Deadline deadline, long timeoutNanos, Metadata metadata) {
    this.deadline = deadline;
    this.timeoutNanos = timeoutNanos;
    this.metadata = metadata;
  }

  /** A copy whose calls must end by {@code deadline}. */
  public CallOptions withDeadline(Deadline deadline) {
    return new CallOptions(Objects.requireNonNull(deadline, "deadline"), timeoutNanos, metadata);
  }

  /** A copy whose calls must end {@code timeout} after each call starts. */
  public CallOptions withTimeout(Duration timeout) {
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("timeout must be > 0: " + timeout);
    }
    return new CallOptions(deadline, timeout.toNanos(), metadata);
  }

  /** A copy that also sends the given metadata. */
  public CallOptions withMetadata(Metadata more) {
    return new CallOptions(deadline, timeoutNanos, metadata.withAll(Objects.requireNonNull(more, "metadata")));
  }

  /** The absolute deadline, or null. */
  public Deadline deadline() {
    return deadline;
  }

  /** The per-call timeout in nanoseconds, or 0 for none. */
  public long timeoutNanos() {
    return timeoutNanos;
  }

  public Metadata metadata() {
    return metadata;
  }

  /**
   * The deadline of a call starting now: the earliest of this option's deadline, its timeout, and
   * {@code fallbackTimeoutNanos} when neither is set (0 for none). Null when there is no deadline at all.
   */
  public Deadline effectiveDeadline(long fallbackTimeoutNanos) {
    Deadline d = deadline;
    if (timeoutNanos > 0) {
      d = Deadline.afterNanos(timeoutNanos).minimum(d);
    } else if (d == null && fallbackTimeoutNanos > 0) {
      d = Deadline.afterNanos(fallbackTimeoutNanos);
    }
    return d;
  }

  @Override
  public String toString() {
    return "CallOptions{deadline=" + deadline + ", timeoutNanos=" + timeoutNanos + ", metadata=" + metadata + "}";
  }
}
