package io.petrel.rpc.internal.lb;

import io.petrel.rpc.ConnectivityState;
import io.petrel.rpc.LoadBalancer;
import io.petrel.rpc.Subchannel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.jspecify.annotations.Nullable;

/**
 * Consistent hashing on the call's {@link io.petrel.rpc.CallOptions#withHashKey hash key}: a ring of
 * {@value #POINTS_PER_WEIGHT} points per unit of weight for each endpoint, placed by hashing the endpoint's
 * address ({@code host:port#i}), so the points of an endpoint do not depend on which others are listed. A key
 * goes to the first point at or after its hash. When an endpoint leaves, only the keys that were on its points
 * move (to the next points on the ring); when one joins, only the keys that land on its new points move to it.
 * A key whose endpoint is backing off after a failed connect goes to the next available endpoint on the ring (and
 * comes back once it is available). A call without a key goes to a random point, so such calls spread by weight;
 * from there it skips endpoints that back off or refuse calls for a limit ({@link Subchannel#isRefusing()}), as
 * the other policies do.
 *
 * <p>Picking allocates nothing: the key is hashed char by char (FNV-1a, then a 64-bit finalizer to spread it)
 * and looked up by binary search in a sorted array.
 */
public final class ConsistentHash implements LoadBalancer {
  /**
   * Points on the ring per unit of an endpoint's weight. An endpoint's share of the keys varies around its
   * weight's share by about 1/sqrt(points): some 3 % with 1000 points.
   */
  static final int POINTS_PER_WEIGHT = 1000;
  /**
   * The most points on the ring (1.2 MB): beyond 100 endpoints of weight 1, every endpoint gets fewer points,
   * in proportion to its weight, and the shares vary more.
   */
  static final int MAX_POINTS = 100_000;

  /**
   * Points a call without a key looks at, from its random point, for an endpoint that takes calls and is not
   * refusing them: with one such endpoint among three, the chance that none is among them is about 1e-11.
   */
  static final int KEYLESS_STEPS = 64;

  private record Ring(long[] hashes, Subchannel[] owners, int distinct) {}

  private volatile @Nullable Ring ring;

  @Override
  public @Nullable Subchannel pick(PickArgs call) {
    Ring r = ring;
    if (r == null) {
      return null;
    }
    String key = call.hashKey();
    long h = key == null ? ThreadLocalRandom.current().nextLong() : hash(key);
    long[] hashes = r.hashes();
    int i = Arrays.binarySearch(hashes, h);
    if (i < 0) {
      i = -i - 1;
    }
    int n = hashes.length;
    if (key == null && r.distinct() > 1) {
      // No key, so no endpoint of its own: the random point's endpoint, or the next one clockwise that takes calls
      // and is not refusing them for a limit (a pool full refuses at once, and would otherwise draw its share).
      // A few steps suffice while any endpoint is free; beyond them, as for a key.
      for (int step = 0, steps = Math.min(n, KEYLESS_STEPS); step < steps; step++) {
        Subchannel s = r.owners()[(i + step) % n];
        if (keeps(s) && !s.isRefusing()) {
          return s;
        }
      }
    }
    Subchannel first = r.owners()[i % n];
    if (keeps(first) || r.distinct() == 1) {
      return first;
    }
    // Walk clockwise to the next endpoint that is available; none: the key's own, to fail with its reason.
    for (int step = 1; step < n; step++) {
      Subchannel s = r.owners()[(i + step) % n];
      if (s != first && keeps(s)) {
        return s;
      }
    }
    return first;
  }

  /**
   * Whether {@code s} takes its keys: unless it backs off after a failed connect. A connect under way keeps them
   * (the call waits for it), so that a key does not move each time its endpoint reconnects. A key also stays on
   * an endpoint whose server is refusing calls for a limit ({@link Subchannel#isRefusing()}): its callers get the
   * refusal, as with one server.
   */
  private static boolean keeps(Subchannel s) {
    return s.isAvailable() || s.state() == ConnectivityState.CONNECTING;
  }

  @Override
  public void update(List<? extends Subchannel> subchannels) {
    if (subchannels.isEmpty()) {
      ring = null;
      return;
    }
    long totalWeight = 0;
    for (Subchannel s : subchannels) {
      totalWeight += s.endpoint().weight();
    }
    double scale = Math.min(1.0, (double) MAX_POINTS / (totalWeight * POINTS_PER_WEIGHT));
    int total = 0;
    int[] points = new int[subchannels.size()];
    for (int k = 0; k < points.length; k++) {
      points[k] = Math.max(1, (int) (subchannels.get(k).endpoint().weight() * POINTS_PER_WEIGHT * scale));
      total += points[k];
    }
    long[] keys = new long[total];
    int[] owner = new int[total];
    int at = 0;
    for (int k = 0; k < points.length; k++) {
      String id = subchannels.get(k).endpoint().authority() + "#";
      for (int p = 0; p < points[k]; p++) {
        keys[at] = hash(id + p);
        owner[at] = k;
        at++;
      }
    }
    // Sort the points by hash, carrying their owners; equal hashes (rare) ordered by owner address.
    Integer[] order = new Integer[total];
    for (int p = 0; p < total; p++) {
      order[p] = p;
    }
    Arrays.sort(order, (a, b) -> {
      int c = Long.compare(keys[a], keys[b]);
      return c != 0 ? c : subchannels.get(owner[a]).endpoint().authority()
          .compareTo(subchannels.get(owner[b]).endpoint().authority());
    });
    long[] hashes = new long[total];
    Subchannel[] owners = new Subchannel[total];
    for (int p = 0; p < total; p++) {
      hashes[p] = keys[order[p]];
      owners[p] = subchannels.get(owner[order[p]]);
    }
    ring = new Ring(hashes, owners, subchannels.size());
  }

  /** FNV-1a over the chars, then murmur3's 64-bit finalizer. */
  static long hash(String s) {
    long h = 0xcbf29ce484222325L;
    for (int i = 0; i < s.length(); i++) {
      h ^= s.charAt(i);
      h *= 0x100000001b3L;
    }
    h ^= h >>> 33;
    h *= 0xff51afd7ed558ccdL;
    h ^= h >>> 33;
    h *= 0xc4ceb9fe1a85ec53L;
    h ^= h >>> 33;
    return h;
  }

  @Override
  public String toString() {
    Ring r = ring;
    List<String> names = new ArrayList<>();
    if (r != null) {
      for (Subchannel s : r.owners()) {
        String e = s.endpoint().toString();
        if (!names.contains(e)) {
          names.add(e);
        }
      }
    }
    return "consistent_hash" + names;
  }
}
