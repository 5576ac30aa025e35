package io.petrel.rpc.internal.lb;

import io.petrel.rpc.Status;
import io.petrel.rpc.ConnectivityState;
import io.petrel.rpc.LoadBalancer;
import io.petrel.rpc.Subchannel;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Outlier ejection around another balancer: an endpoint whose calls keep failing leaves the balancer's list for
 * an ejection time that doubles with each ejection, then gets exactly one call (the probe) before it returns:
 * if the probe fails it is ejected again, for longer. An endpoint is ejected when
 * <ul>
 *   <li>{@code consecutiveFailures} calls in a row failed (UNAVAILABLE, DEADLINE_EXCEEDED, INTERNAL, UNKNOWN;
 *       a failed connect counts as one), or
 *   <li>over an interval in which it ended at least {@code minCalls} calls, its share of failed calls is at least
 *       {@code failureShare} and at least twice the share of all the other endpoints together (so when every
 *       endpoint fails alike, as in an outage, none is ejected for it),
 * </ul>
 * and never beyond {@code maxEjectedShare} of the endpoints (one may always be ejected when there are two or
 * more). Other statuses (the application's errors, CANCELLED) are answers, not failures.
 *
 * <p>The per-call work is a few atomic updates and a clock read in {@link #onAttemptEnded}, and one volatile read
 * in {@link #pick} (a compare-and-set only when a probe is due); ejecting and readmitting take a lock and rebuild
 * the wrapped balancer's list, which is rare.
 */
public final class EjectingBalancer implements LoadBalancer {
  private static final Logger log = LoggerFactory.getLogger(EjectingBalancer.class);

  /** The thresholds; durations in nanoseconds. */
  public record Options(int consecutiveFailures, double failureShare, int minCalls, long intervalNanos,
      long baseEjectionNanos, long maxEjectionNanos, double maxEjectedShare) {}

  /** What the balancer knows of one endpoint. */
  private static final class Stats {
    final Subchannel subchannel;
    final AtomicInteger consecutive = new AtomicInteger();
    final AtomicInteger calls = new AtomicInteger();
    final AtomicInteger failures = new AtomicInteger();
    /** Written under the balancer's lock; read without it on the call path. */
    volatile boolean ejected;
    volatile boolean probing;
    long ejectedUntil;
    int ejections;
    long lastReturned;

    Stats(Subchannel subchannel) {
      this.subchannel = subchannel;
    }
  }

  private final LoadBalancer delegate;
  private final Options options;
  private final LongSupplier clock;
  /** Replaced, never changed in place. */
  private volatile Map<Subchannel, Stats> stats = new IdentityHashMap<>();
  private List<? extends Subchannel> all = List.of();
  /** An ejected endpoint whose time is up: the next pick takes it, once. */
  private final AtomicReference<@Nullable Stats> probeDue = new AtomicReference<>();
  private volatile long nextCheck;
  private long intervalStart;
  /** Endpoints out of the wrapped balancer's list now (set where it is given its list); a gauge reads it. */
  private volatile int outNow;
  /** Ejections so far, an ejected endpoint's failed probe included; a counter reads it. */
  private final java.util.concurrent.atomic.LongAdder ejections = new java.util.concurrent.atomic.LongAdder();

  public EjectingBalancer(LoadBalancer delegate, Options options, LongSupplier clock) {
    this.delegate = delegate;
    this.options = options;
    this.clock = clock;
    this.intervalStart = clock.getAsLong();
    this.nextCheck = intervalStart + options.intervalNanos();
  }

  @Override
  public @Nullable Subchannel pick(PickArgs call) {
    Stats probe = probeDue.get();
    if (probe != null && probeDue.compareAndSet(probe, null)) {
      return probe.subchannel;
    }
    return delegate.pick(call);
  }

  @Override
  public boolean readsHashKey() {
    return delegate.readsHashKey();
  }

  @Override
  public synchronized void update(List<? extends Subchannel> subchannels) {
    Map<Subchannel, Stats> old = stats;
    Map<Subchannel, Stats> next = new IdentityHashMap<>();
    for (Subchannel s : subchannels) {
      Stats st = old.get(s);
      next.put(s, st != null ? st : new Stats(s));
    }
    stats = next;
    all = List.copyOf(subchannels);
    Stats p = probeDue.get();
    if (p != null && !next.containsKey(p.subchannel)) {
      probeDue.compareAndSet(p, null);
    }
    // Fewer endpoints may allow fewer ejections: the longest ejected return first.
    int allowed = allowedEjections(next.size());
    List<Stats> ejected = new ArrayList<>();
    for (Stats st : next.values()) {
      if (st.ejected) {
        ejected.add(st);
      }
    }
    ejected.sort((a, b) -> Long.compare(a.ejectedUntil, b.ejectedUntil));
    for (int i = 0; i < ejected.size() - allowed; i++) {
      readmit(ejected.get(i), "fewer endpoints now");
    }
    publish();
  }

  @Override
  public void onAttemptEnded(Subchannel subchannel, Status status, long latencyNanos) {
    delegate.onAttemptEnded(subchannel, status, latencyNanos);
    Stats st = stats.get(subchannel);
    if (st != null) {
      outcome(st, isFailure(status.code()), status);
    }
    if (clock.getAsLong() - nextCheck >= 0) {
      check();
    }
  }

  @Override
  public void onStateChange(Subchannel subchannel, ConnectivityState state, @Nullable Status cause) {
    delegate.onStateChange(subchannel, state, cause);
    if (state == ConnectivityState.BACKING_OFF) {
      Stats st = stats.get(subchannel);
      if (st != null) {
        outcome(st, true, cause != null ? cause : Status.UNAVAILABLE.withDescription("cannot connect"));
      }
    }
  }

  private static boolean isFailure(Status.Code code) {
    return switch (code) {
      case UNAVAILABLE, DEADLINE_EXCEEDED, INTERNAL, UNKNOWN -> true;
      default -> false;
    };
  }

  private void outcome(Stats st, boolean failed, Status status) {
    st.calls.incrementAndGet();
    if (!failed) {
      st.consecutive.set(0);
    } else {
      st.failures.incrementAndGet();
    }
    int run = failed ? st.consecutive.incrementAndGet() : 0;
    if (st.probing) {
      synchronized (this) {
        if (!st.probing) {
          return;
        }
        st.probing = false;
        if (failed) {
          eject(st, "its probe failed: " + status);
        } else {
          readmit(st, "its probe succeeded");
          publish();
        }
      }
    } else if (failed && run >= options.consecutiveFailures()) {
      synchronized (this) {
        if (!st.ejected && st.consecutive.get() >= options.consecutiveFailures()) {
          eject(st, run + " calls in a row failed, the last " + status);
        }
      }
    }
  }

  /** Ends ejections whose time is up (their probe becomes due) and applies the failure-share rule. */
  private synchronized void check() {
    long now = clock.getAsLong();
    if (now - nextCheck < 0) {
      return;
    }
    Map<Subchannel, Stats> m = stats;
    for (Stats st : m.values()) {
      if (st.ejected && !st.probing && now - st.ejectedUntil >= 0 && probeDue.get() == null) {
        st.probing = true;
        probeDue.set(st);
        log.debug("ejected endpoint {} gets a probe call", st.subchannel.endpoint());
      }
    }
    if (now - intervalStart >= options.intervalNanos()) {
      long totalCalls = 0;
      long totalFailures = 0;
      for (Stats st : m.values()) {
        totalCalls += st.calls.get();
        totalFailures += st.failures.get();
      }
      for (Stats st : m.values()) {
        int calls = st.calls.get();
        int failures = st.failures.get();
        if (st.ejected || calls < options.minCalls()) {
          continue;
        }
        double share = (double) failures / calls;
        long otherCalls = totalCalls - calls;
        double others = otherCalls == 0 ? 0 : (double) (totalFailures - failures) / otherCalls;
        if (share >= options.failureShare() && share >= 2 * others) {
          eject(st, String.format("%d of its %d calls failed (%.0f %%) against %.0f %% for the others",
              failures, calls, share * 100, others * 100));
        }
      }
      for (Stats st : m.values()) {
        st.calls.set(0);
        st.failures.set(0);
      }
      intervalStart = now;
    }
    // The next due moment: the end of the interval, or an ejection's.
    long next = intervalStart + options.intervalNanos();
    for (Stats st : m.values()) {
      if (st.ejected && !st.probing && st.ejectedUntil - next < 0) {
        next = st.ejectedUntil;
      }
    }
    nextCheck = next;
  }

  /** Under the lock. */
  private void eject(Stats st, String why) {
    int ejectedNow = 0;
    for (Stats s : stats.values()) {
      if (s.ejected && s != st) {
        ejectedNow++;
      }
    }
    if (ejectedNow + 1 > allowedEjections(stats.size())) {
      if (st.ejected) {
        readmit(st, "no more endpoints may be ejected");
        publish();
      }
      log.debug("not ejecting {} ({}): {} of {} endpoints are ejected already, the most maxEjectedShare allows",
          st.subchannel.endpoint(), why, ejectedNow, stats.size());
      return;
    }
    long now = clock.getAsLong();
    if (st.lastReturned != 0 && now - st.lastReturned > options.maxEjectionNanos()) {
      st.ejections = 0; // healthy for a long time since it last came back: start again from the base time
    }
    st.ejections++;
    long time = options.baseEjectionNanos();
    for (int i = 1; i < st.ejections && time < options.maxEjectionNanos(); i++) {
      time *= 2;
    }
    time = Math.min(time, options.maxEjectionNanos());
    boolean wasIn = !st.ejected;
    st.ejected = true;
    st.probing = false;
    st.ejectedUntil = now + time;
    st.consecutive.set(0);
    ejections.increment();
    if (st.ejectedUntil - nextCheck < 0) {
      nextCheck = st.ejectedUntil;
    }
    log.warn("ejecting endpoint {} for {} ms: {}", st.subchannel.endpoint(), time / 1_000_000, why);
    if (wasIn) {
      publish();
    }
  }

  /** Under the lock; the caller publishes. */
  private void readmit(Stats st, String why) {
    st.ejected = false;
    st.probing = false;
    st.consecutive.set(0);
    st.lastReturned = clock.getAsLong();
    probeDue.compareAndSet(st, null);
    log.info("endpoint {} is back in the balancer: {}", st.subchannel.endpoint(), why);
  }

  /** Gives the wrapped balancer the endpoints not ejected. Under the lock. */
  private void publish() {
    List<Subchannel> in = new ArrayList<>();
    Map<Subchannel, Stats> m = stats;
    for (Subchannel s : all) {
      Stats st = m.get(s);
      if (st == null || !st.ejected) {
        in.add(s);
      }
    }
    outNow = all.size() - in.size();
    delegate.update(in);
  }

  private int allowedEjections(int endpoints) {
    if (endpoints < 2) {
      return 0;
    }
    return Math.max(1, (int) Math.floor(options.maxEjectedShare() * endpoints));
  }

  /**
   * How many endpoints are ejected now, one awaiting or making its probe call included: the client's
   * {@code rpc.client.endpoints.ejected} gauge. One volatile read.
   */
  public int ejectedCount() {
    return outNow;
  }

  /**
   * Ejections so far (an endpoint ejected again after a failed probe counts again; one that
   * {@code maxEjectedShare} kept in does not): the client's {@code rpc.client.endpoints.ejections} counter.
   */
  public long ejections() {
    return ejections.sum();
  }

  /** The endpoints ejected now (for tests and logs). */
  public synchronized List<Subchannel> ejected() {
    List<Subchannel> out = new ArrayList<>();
    for (Subchannel s : all) {
      Stats st = stats.get(s);
      if (st != null && st.ejected) {
        out.add(s);
      }
    }
    return out;
  }

  @Override
  public String toString() {
    return "outlier_ejection(" + delegate + ")";
  }
}
