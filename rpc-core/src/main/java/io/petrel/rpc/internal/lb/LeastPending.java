package io.petrel.rpc.internal.lb;

import io.petrel.rpc.LoadBalancer;
import io.petrel.rpc.Subchannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.jspecify.annotations.Nullable;

/**
 * Least pending with the power of two choices: for each call, two endpoints are drawn at random (in proportion
 * to their weights) and the call goes to the one with fewer calls pending per unit of weight. Nearly as good as
 * asking every endpoint, at the cost of two reads; a slow server collects pending calls and so gets fewer new
 * ones. A subchannel that is not available (it backs off after a failed connect, or is connecting) loses to any
 * available one, drawn or not; one whose server is refusing calls for a limit ({@link Subchannel#isRefusing()}: it
 * answers at once, so its pending count flatters it) loses to any available one that is not.
 */
public final class LeastPending implements LoadBalancer {
  private record State(Subchannel[] subchannels, int[] cumulative, boolean uniform) {}

  private volatile @Nullable State state;

  @Override
  public @Nullable Subchannel pick(PickArgs call) {
    State s = state;
    if (s == null) {
      return null;
    }
    Subchannel[] subs = s.subchannels();
    int n = subs.length;
    if (n == 1) {
      return subs[0];
    }
    ThreadLocalRandom r = ThreadLocalRandom.current();
    int a;
    int b;
    if (s.uniform()) {
      a = r.nextInt(n);
      b = r.nextInt(n - 1);
      if (b >= a) {
        b++;
      }
    } else {
      a = draw(s.cumulative(), r);
      b = draw(s.cumulative(), r);
      if (b == a) {
        b = (a + 1 + r.nextInt(n - 1)) % n; // distinct; the weighting of the second is approximate then
      }
    }
    Subchannel x = subs[a];
    Subchannel y = subs[b];
    int rx = rank(x);
    int ry = rank(y);
    int top = Math.max(rx, ry);
    if (top < USABLE) {
      // Neither drawn is usable: any better one beats them (with two of three endpoints down, one pick in three drew
      // both, and each such call waited for or failed on a connect attempt while a server was up). Drawn again, by
      // weight as the first two, so that the calls spread over the endpoints left as the others do (the first
      // usable one after a random start gave the one listed after a run of dead ones most of them); two usable
      // ones drawn are compared as above. A scan finds one when the draws do not (few usable among many).
      Subchannel u = null;
      for (int i = 0; i < REDRAWS; i++) {
        Subchannel c = subs[s.uniform() ? r.nextInt(n) : draw(s.cumulative(), r)];
        if (c != u && rank(c) == USABLE) {
          if (u != null) {
            return lessLoaded(u, c);
          }
          u = c;
        }
      }
      Subchannel other = u != null ? u : best(s, r, top);
      if (other != null) {
        return other;
      }
    }
    if (rx != ry) {
      return rx > ry ? x : y;
    }
    if (top < USABLE) {
      return x; // none better: the call fails, waits, or is refused, with x's reason
    }
    return lessLoaded(x, y);
  }

  /** Fewer pending per unit of weight wins: x.pending / x.weight <= y.pending / y.weight, without division. */
  private static Subchannel lessLoaded(Subchannel x, Subchannel y) {
    long lx = (long) x.pendingCalls() * y.endpoint().weight();
    long ly = (long) y.pendingCalls() * x.endpoint().weight();
    return ly < lx ? y : x;
  }

  /** Draws more when the first two are not usable, before a scan. */
  private static final int REDRAWS = 16;

  /** Available and not refusing. */
  private static final int USABLE = 2;
  /** Available, its server refusing calls for a limit. */
  private static final int REFUSING = 1;

  private static int rank(Subchannel s) {
    return !s.isAvailable() ? 0 : s.isRefusing() ? REFUSING : USABLE;
  }

  /**
   * One usable subchannel drawn by weight among all usable ones (reservoir sampling), else one of the best rank above
   * {@code than} drawn the same way; null if none ranks above it. One pass over the list.
   */
  private static @Nullable Subchannel best(State s, ThreadLocalRandom r, int than) {
    Subchannel[] subs = s.subchannels();
    int[] cumulative = s.cumulative();
    Subchannel chosen = null;
    int chosenRank = than;
    long weights = 0;
    for (int i = 0; i < subs.length; i++) {
      Subchannel c = subs[i];
      int rank = rank(c);
      if (rank < chosenRank || rank <= than) {
        continue;
      }
      if (rank > chosenRank) {
        chosen = null; // a better rank: start over with it
        chosenRank = rank;
        weights = 0;
      }
      int w = cumulative[i] - (i == 0 ? 0 : cumulative[i - 1]);
      weights += w;
      if (r.nextLong(weights) < w) {
        chosen = c;
      }
    }
    return chosen;
  }

  private static int draw(int[] cumulative, ThreadLocalRandom r) {
    int total = cumulative[cumulative.length - 1];
    int t = r.nextInt(total);
    int lo = 0;
    int hi = cumulative.length - 1;
    while (lo < hi) { // the first index whose cumulative weight exceeds t
      int mid = (lo + hi) >>> 1;
      if (cumulative[mid] > t) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    return lo;
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
    int[] cumulative = new int[subs.length];
    int sum = 0;
    boolean uniform = true;
    for (int i = 0; i < subs.length; i++) {
      int w = subs[i].endpoint().weight();
      uniform &= w == subs[0].endpoint().weight();
      sum += w;
      cumulative[i] = sum;
    }
    state = new State(subs, cumulative, uniform);
  }

  @Override
  public String toString() {
    State s = state;
    List<String> names = new ArrayList<>();
    if (s != null) {
      for (Subchannel c : s.subchannels()) {
        names.add(c.endpoint() + "(" + c.pendingCalls() + " pending)");
      }
    }
    return "least_pending" + names;
  }
}
