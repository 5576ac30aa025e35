package io.petrel.rpc.spi;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;

/**
 * Logs at most one line per cause per period, so that a flood of refused connections or failing calls costs a
 * few lines, not one per event. The line logged after a quiet spell says how many like it were left out:
 * "... (and 9905 more like it in the last 10 s)". A cause is a short fixed key ("refused: maxConnections",
 * "handler threw: svc/method"); the number of causes is bounded by the caller.
 */
public final class RateLimitedLog {
  /** One line per cause per this period. */
  public static final long PERIOD_NANOS = TimeUnit.SECONDS.toNanos(10);
  /** Causes remembered at most; past this, every cause is logged with no counting (a bug in the caller). */
  private static final int MAX_CAUSES = 1024;

  private final Logger log;
  private final long periodNanos;
  private final ConcurrentHashMap<String, Cause> causes = new ConcurrentHashMap<>();

  public RateLimitedLog(Logger log) {
    this(log, PERIOD_NANOS);
  }

  public RateLimitedLog(Logger log, long periodNanos) {
    this.log = log;
    this.periodNanos = periodNanos;
  }

  private static final class Cause {
    /** nanoTime of the last line logged; guarded by this. */
    long lastLogged;
    boolean logged;
    final AtomicLong suppressed = new AtomicLong();
  }

  /** Logs {@code message} at WARN unless a line of this cause was logged within the period. */
  public void warn(String cause, String message, @Nullable Throwable t) {
    if (!log.isWarnEnabled()) {
      return;
    }
    long left = admit(cause);
    if (left < 0) {
      return;
    }
    String line = left == 0 ? message : message + " (and " + left + " more like it in the last "
        + TimeUnit.NANOSECONDS.toSeconds(periodNanos) + " s)";
    if (t == null) {
      log.warn(line);
    } else {
      log.warn(line, t);
    }
  }

  public void warn(String cause, String message) {
    warn(cause, message, null);
  }

  /** -1 to stay silent, else how many lines of this cause were left out since the last one. */
  private long admit(String cause) {
    Cause c = causes.get(cause);
    if (c == null) {
      if (causes.size() >= MAX_CAUSES) {
        return 0;
      }
      c = causes.computeIfAbsent(cause, k -> new Cause());
    }
    long now = System.nanoTime();
    synchronized (c) {
      if (c.logged && now - c.lastLogged < periodNanos) {
        c.suppressed.incrementAndGet();
        return -1;
      }
      c.logged = true;
      c.lastLogged = now;
      return c.suppressed.getAndSet(0);
    }
  }

  /** Logs at DEBUG, unlimited (DEBUG is off in production). */
  public void debug(String message) {
    log.debug(message);
  }

  /** Lines left out so far for {@code cause} (for tests). */
  public long suppressed(String cause) {
    Cause c = causes.get(cause);
    return c == null ? 0 : c.suppressed.get();
  }
}
