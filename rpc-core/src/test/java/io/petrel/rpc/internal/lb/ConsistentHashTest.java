package io.petrel.rpc.internal.lb;

import static org.assertj.core.api.Assertions.assertThat;

import io.petrel.rpc.Metadata;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.internal.lb.LoadBalancerTest.Fake;
import io.petrel.rpc.ConnectivityState;
import io.petrel.rpc.LoadBalancer;
import io.petrel.rpc.Subchannel;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

class ConsistentHashTest {
  private static final int KEYS = 10_000;

  /** A call with a hash key (the balancer reads nothing else). */
  private static final class Keyed implements LoadBalancer.PickArgs {
    @Nullable String key;

    @Override
    public MethodDescriptor<?, ?> method() {
      throw new AssertionError("not read by consistent_hash");
    }

    @Override
    public Metadata metadata() {
      throw new AssertionError("not read by consistent_hash");
    }

    @Override
    public @Nullable String hashKey() {
      return key;
    }
  }

  private static Map<String, Subchannel> assign(LoadBalancer lb) {
    Keyed call = new Keyed();
    Map<String, Subchannel> out = new HashMap<>();
    for (int i = 0; i < KEYS; i++) {
      call.key = "user-" + i;
      out.put(call.key, lb.pick(call));
    }
    return out;
  }

  private static Map<Subchannel, Integer> counts(Map<String, Subchannel> assignment) {
    Map<Subchannel, Integer> c = new HashMap<>();
    assignment.values().forEach(s -> c.merge(s, 1, Integer::sum));
    return c;
  }

  @Test
  void theSameKeyAlwaysGoesToTheSameEndpointAndKeysSpreadEvenly() {
    List<Fake> subs = List.of(new Fake("10.0.0.1", 1), new Fake("10.0.0.2", 1), new Fake("10.0.0.3", 1),
        new Fake("10.0.0.4", 1));
    LoadBalancer lb = LoadBalancers.forName("consistent_hash").newLoadBalancer();
    lb.update(subs);
    Map<String, Subchannel> first = assign(lb);
    assertThat(assign(lb)).isEqualTo(first);
    // Each of the four gets its quarter of the 10k keys, within 10 %.
    Map<Subchannel, Integer> c = counts(first);
    assertThat(c).hasSize(4);
    assertThat(c.values()).allSatisfy(n -> assertThat(n).isBetween(2250, 2750));
  }

  @Test
  void whenAnEndpointLeavesOnlyItsKeysMove() {
    List<Fake> subs = new ArrayList<>(List.of(new Fake("10.0.0.1", 1), new Fake("10.0.0.2", 1),
        new Fake("10.0.0.3", 1), new Fake("10.0.0.4", 1)));
    LoadBalancer lb = new ConsistentHash();
    lb.update(subs);
    Map<String, Subchannel> before = assign(lb);
    Fake leaving = subs.remove(2);
    lb.update(subs);
    Map<String, Subchannel> after = assign(lb);
    int moved = 0;
    for (String key : before.keySet()) {
      if (before.get(key) != after.get(key)) {
        moved++;
        assertThat(before.get(key)).as("key %s moved, so it was on the endpoint that left", key).isSameAs(leaving);
      } else {
        assertThat(before.get(key)).isNotSameAs(leaving);
      }
    }
    assertThat(moved).isEqualTo(counts(before).get(leaving));
    assertThat(after.values()).doesNotContain(leaving);
    // And back: the same keys return to it, the others stay where they are.
    subs.add(leaving);
    lb.update(subs);
    assertThat(assign(lb)).isEqualTo(before);
  }

  @Test
  void weightsAreRespected() {
    Fake heavy = new Fake("10.0.0.1", 3);
    List<Fake> subs = List.of(heavy, new Fake("10.0.0.2", 1), new Fake("10.0.0.3", 1));
    LoadBalancer lb = new ConsistentHash();
    lb.update(subs);
    Map<Subchannel, Integer> c = counts(assign(lb));
    // 3/5 and 1/5 of 10k, within 10 %.
    assertThat(c.get(heavy)).isBetween(5400, 6600);
    assertThat(c.get(subs.get(1))).isBetween(1800, 2200);
    assertThat(c.get(subs.get(2))).isBetween(1800, 2200);
  }

  @Test
  void aKeyWhoseEndpointBacksOffGoesToTheNextAvailableOneAndComesBack() {
    List<Fake> subs = List.of(new Fake("10.0.0.1", 1), new Fake("10.0.0.2", 1), new Fake("10.0.0.3", 1));
    LoadBalancer lb = new ConsistentHash();
    lb.update(subs);
    Map<String, Subchannel> before = assign(lb);
    Fake down = subs.get(0);
    down.available = false;
    Map<String, Subchannel> during = assign(lb);
    for (String key : before.keySet()) {
      if (before.get(key) == down) {
        assertThat(during.get(key)).isNotSameAs(down);
      } else {
        assertThat(during.get(key)).isSameAs(before.get(key));
      }
    }
    down.available = true;
    assertThat(assign(lb)).isEqualTo(before);
  }

  /**
   * An endpoint whose server is refusing calls for a limit (its pool full; the other policies skip it for a short
   * pause) keeps its keys, as one that is connecting does: a key stays on its server.
   */
  @Test
  void aKeyStaysOnAnEndpointThatRefusesCallsOrIsConnecting() {
    Fake full = new Fake("10.0.0.1", 1);
    LoadBalancer lb = new ConsistentHash();
    lb.update(List.of(full, new Fake("10.0.0.2", 1), new Fake("10.0.0.3", 1)));
    Map<String, Subchannel> keys = assign(lb);
    full.refusing = true;
    assertThat(assign(lb)).as("while its server refuses").isEqualTo(keys);
    full.refusing = false;
    full.available = false;
    full.state = ConnectivityState.CONNECTING;
    assertThat(assign(lb)).as("while it connects").isEqualTo(keys);
  }

  @Test
  void callsWithoutAKeySpreadOverTheEndpoints() {
    List<Fake> subs = List.of(new Fake("10.0.0.1", 1), new Fake("10.0.0.2", 1));
    LoadBalancer lb = new ConsistentHash();
    lb.update(subs);
    Keyed call = new Keyed();
    Map<Subchannel, Integer> c = new HashMap<>();
    for (int i = 0; i < KEYS; i++) {
      c.merge(lb.pick(call), 1, Integer::sum);
    }
    assertThat(c.values()).allSatisfy(n -> assertThat(n).isBetween(4500, 5500));
  }

  @Test
  void noEndpointNoPick() {
    LoadBalancer lb = new ConsistentHash();
    assertThat(lb.pick(new Keyed())).isNull();
    lb.update(List.of(new Fake("10.0.0.1", 1)));
    lb.update(List.of());
    assertThat(lb.pick(new Keyed())).isNull();
  }
}
