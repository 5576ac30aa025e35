package io.petrel.rpc.internal.lb;

import io.petrel.rpc.LoadBalancer;
import io.petrel.rpc.Subchannel;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Weighted round robin: endpoints take turns in a fixed schedule where each appears as often as its weight
 * (smooth: a server of weight 3 beside one of weight 1 goes A A B A, not A A A B). A subchannel that backs off
 * after a failed connect, or that is connecting, is skipped while another is available; one whose server is
 * refusing calls for a limit ({@link Subchannel#isRefusing()}) while another available one is not.
 */
public final class RoundRobin implements LoadBalancer {
  /** Longest schedule; weights are scaled down (keeping their ratios roughly) to fit. */
  static final int MAX_SCHEDULE = 4096;

  private record State(Subchannel[] subchannels, int[] schedule) {}

  private volatile @Nullable State state;
  /** Racy on purpose, as in the transport: any spread is fine, and no contention between callers. */
  private int next;

  @Override
  public @Nullable Subchannel pick(PickArgs call) {
    State s = state;
    if (s == null) {
      return null;
    }
    Subchannel[] subs = s.subchannels();
    if (subs.length == 1) {
      return subs[0];
    }
    int[] schedule = s.schedule();
    int start = next++;
    int refusingAt = -1; // the first available one whose server is refusing, if no other is found
    for (int i = 0; i < schedule.length; i++) {
      Subchannel c = subs[schedule[Math.floorMod(start + i, schedule.length)]];
      if (c.isAvailable()) {
        if (!c.isRefusing()) {
          if (i > 0) {
            next = start + i + 1;
          }
          return c;
        }
        if (refusingAt < 0) {
          refusingAt = i;
        }
      }
    }
    if (refusingAt >= 0) {
      next = start + refusingAt + 1;
      return subs[schedule[Math.floorMod(start + refusingAt, schedule.length)]];
    }
    return subs[schedule[Math.floorMod(start, schedule.length)]]; // none available: fail with its reason
  }

  /** Keys do not steer it: a call with one is moved like any other. */
  @Override
  public boolean readsHashKey() {
    return false;
  }

  @Override
  public void update(List<? extends Subchannel> subchannels) {
    if (subchannels.isEmpty()) {
      state = null; // the resolver lists none: the client does not pick until some come back
      return;
    }
    Subchannel[] subs = subchannels.toArray(new Subchannel[0]);
    int[] weights = new int[subs.length];
    for (int i = 0; i < subs.length; i++) {
      weights[i] = subs[i].endpoint().weight();
    }
    state = new State(subs, schedule(weights));
  }

  /** A smooth weighted schedule (nginx's algorithm) of the indexes 0..n-1. */
  static int[] schedule(int[] weights) {
    int[] w = scaled(weights);
    int total = 0;
    for (int x : w) {
      total += x;
    }
    int[] current = new int[w.length];
    int[] out = new int[total];
    for (int k = 0; k < total; k++) {
      int best = 0;
      for (int i = 0; i < w.length; i++) {
        current[i] += w[i];
        if (current[i] > current[best]) {
          best = i;
        }
      }
      current[best] -= total;
      out[k] = best;
    }
    return out;
  }

  /** Weights divided by their greatest common divisor, then scaled to fit {@link #MAX_SCHEDULE}. */
  private static int[] scaled(int[] weights) {
    int g = 0;
    long total = 0;
    for (int x : weights) {
      g = gcd(g, x);
    }
    int[] w = new int[weights.length];
    for (int i = 0; i < w.length; i++) {
      w[i] = weights[i] / g;
      total += w[i];
    }
    if (total > MAX_SCHEDULE) {
      // Floor, at least 1 each: the sum stays within (MAX - n) + n.
      double f = (double) Math.max(0, MAX_SCHEDULE - w.length) / total;
      for (int i = 0; i < w.length; i++) {
        w[i] = Math.max(1, (int) (w[i] * f));
      }
    }
    return w;
  }

  private static int gcd(int a, int b) {
    return b == 0 ? a : gcd(b, a % b);
  }

  @Override
  public String toString() {
    State s = state;
    List<String> names = new ArrayList<>();
    if (s != null) {
      for (Subchannel c : s.subchannels()) {
        names.add(c.endpoint().toString());
      }
    }
    return "round_robin" + names;
  }
}
