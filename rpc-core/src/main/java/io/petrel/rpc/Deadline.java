package io.petrel.rpc;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * An absolute point in time by which a call must end, on the {@link System#nanoTime()} clock of this JVM.
 * Only the remaining time crosses the wire (in the request header), so clocks of different machines never
 * need to agree.
 */
public final class Deadline implements Comparable<Deadline> {
  private final long deadlineNanos;

  private Deadline(long deadlineNanos) {
    this.deadlineNanos = deadlineNanos;
  }

  /** A deadline {@code timeout} from now. */
  public static Deadline after(Duration timeout) {
    return afterNanos(timeout.toNanos());
  }

  /** A deadline {@code amount} {@code unit}s from now. */
  public static Deadline after(long amount, TimeUnit unit) {
    return afterNanos(unit.toNanos(amount));
  }

  /** A deadline the given number of nanoseconds from now (saturating). */
  public static Deadline afterNanos(long nanos) {
    return afterNanos(nanos, System.nanoTime());
  }

  /**
   * A deadline {@code nanos} after {@code now}, a {@link System#nanoTime()} reading the caller has just taken
   * (transports read the clock once per call and use it for the deadline and the call's duration).
   */
  public static Deadline afterNanos(long nanos, long now) {
    long at = now + nanos;
    if (nanos > 0 && at < now) {
      at = Long.MAX_VALUE; // overflow: as good as never
    }
    return new Deadline(at);
  }

  /** The {@link System#nanoTime()} reading at which this deadline passes. */
  public long nanoTime() {
    return deadlineNanos;
  }

  /** Nanoseconds left; zero or negative once passed. */
  public long remainingNanos() {
    return deadlineNanos - System.nanoTime();
  }

  /** Time left in {@code unit}, rounded down; zero or negative once passed. */
  public long remaining(TimeUnit unit) {
    return unit.convert(remainingNanos(), TimeUnit.NANOSECONDS);
  }

  /** Whether the deadline has passed (no time left). */
  public boolean isExpired() {
    return remainingNanos() <= 0;
  }

  /** The earlier of this and {@code other} (other may be null). */
  public Deadline minimum(@Nullable Deadline other) {
    if (other == null) {
      return this;
    }
    return deadlineNanos - other.deadlineNanos <= 0 ? this : other;
  }

  @Override
  public int compareTo(Deadline o) {
    return Long.compare(deadlineNanos - o.deadlineNanos, 0);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Deadline d && d.deadlineNanos == deadlineNanos;
  }

  @Override
  public int hashCode() {
    return Long.hashCode(deadlineNanos);
  }

  @Override
  public String toString() {
    long rem = remainingNanos();
    return rem > 0 ? "Deadline[" + TimeUnit.NANOSECONDS.toMillis(rem) + " ms left]"
        : "Deadline[expired " + TimeUnit.NANOSECONDS.toMillis(-rem) + " ms ago]";
  }
}
