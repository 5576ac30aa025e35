package io.petrel.rpc.internal.lb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.petrel.rpc.Endpoint;
import io.petrel.rpc.LoadBalancer;
import io.petrel.rpc.NameResolver;
import io.petrel.rpc.Subchannel;
import io.petrel.rpc.Status;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LoadBalancerTest {

  /** A call to pick for: the built-in balancers other than consistent_hash do not look at it. */
  static final LoadBalancer.PickArgs ARGS = new LoadBalancer.PickArgs() {
    @Override
    public io.petrel.rpc.MethodDescriptor<?, ?> method() {
      throw new AssertionError("not read by the built-in balancers");
    }

    @Override
    public io.petrel.rpc.Metadata metadata() {
      throw new AssertionError("not read by the built-in balancers");
    }

    @Override
    public String hashKey() {
      throw new AssertionError("not read by the built-in balancers");
    }
  };

  /** A call without a hash key, for consistent_hash (which reads nothing else of it). */
  static final LoadBalancer.PickArgs NO_KEY = new LoadBalancer.PickArgs() {
    @Override
    public io.petrel.rpc.MethodDescriptor<?, ?> method() {
      throw new AssertionError("not read by consistent_hash");
    }

    @Override
    public io.petrel.rpc.Metadata metadata() {
      throw new AssertionError("not read by consistent_hash");
    }

    @Override
    public @org.jspecify.annotations.Nullable String hashKey() {
      return null;
    }
  };

  /** A subchannel whose load and availability the test sets. */
  static final class Fake implements Subchannel {
    final Endpoint endpoint;
    int pending;
    boolean available = true;
    boolean refusing;
    /** Set to say what an unavailable one is doing; else READY while available, BACKING_OFF when not. */
    io.petrel.rpc.@org.jspecify.annotations.Nullable ConnectivityState state;

    Fake(String host, int weight) {
      this.endpoint = new Endpoint(host, 7000, weight);
    }

    @Override
    public Endpoint endpoint() {
      return endpoint;
    }

    @Override
    public int pendingCalls() {
      return pending;
    }

    @Override
    public boolean isAvailable() {
      return available;
    }

    @Override
    public boolean isRefusing() {
      return refusing;
    }

    @Override
    public io.petrel.rpc.ConnectivityState state() {
      return state != null ? state : available ? io.petrel.rpc.ConnectivityState.READY
          : io.petrel.rpc.ConnectivityState.BACKING_OFF;
    }
  }

  private static Map<String, Integer> count(LoadBalancer lb, int picks, boolean addPending) {
    Map<String, Integer> n = new HashMap<>();
    for (int i = 0; i < picks; i++) {
      Fake f = (Fake) lb.pick(lb instanceof ConsistentHash ? NO_KEY : ARGS);
      n.merge(f.endpoint.host(), 1, Integer::sum);
      if (addPending) {
        f.pending++;
      }
    }
    return n;
  }

  @Test
  void roundRobinTakesTurnsAndRespectsWeights() {
    RoundRobin rr = new RoundRobin();
    assertThat(rr.pick(ARGS)).isNull();
    Fake a = new Fake("a", 1);
    Fake b = new Fake("b", 1);
    rr.update(List.of(a, b));
    assertThat(count(rr, 1000, false)).containsEntry("a", 500).containsEntry("b", 500);
    Fake c = new Fake("c", 3);
    rr.update(List.of(a, c));
    assertThat(count(rr, 4000, false)).containsEntry("a", 1000).containsEntry("c", 3000);
  }

  @Test
  void roundRobinScheduleIsSmooth() {
    // Weight 3 beside 1: A A B A (never three in a row of A then B), the nginx smooth order.
    int[] s = RoundRobin.schedule(new int[] {3, 1});
    assertThat(s).containsExactly(0, 0, 1, 0);
    // Large weights are reduced by their common divisor, and scaled to fit.
    assertThat(RoundRobin.schedule(new int[] {2000, 1000})).hasSize(3);
    assertThat(RoundRobin.schedule(new int[] {9999, 1}).length).isLessThanOrEqualTo(RoundRobin.MAX_SCHEDULE);
  }

  @Test
  void roundRobinSkipsAnEndpointThatBacksOff() {
    RoundRobin rr = new RoundRobin();
    Fake a = new Fake("a", 1);
    Fake b = new Fake("b", 1);
    rr.update(List.of(a, b));
    a.available = false;
    assertThat(count(rr, 100, false)).containsEntry("b", 100).doesNotContainKey("a");
    b.available = false; // none available: still a pick (the call then fails with the endpoint's reason)
    assertThat(rr.pick(ARGS)).isNotNull();
  }

  @Test
  void leastPendingPrefersTheLessLoadedPerUnitOfWeight() {
    LeastPending lp = new LeastPending();
    assertThat(lp.pick(ARGS)).isNull();
    Fake a = new Fake("a", 1);
    Fake b = new Fake("b", 1);
    lp.update(List.of(a, b));
    a.pending = 5;
    assertThat(count(lp, 100, false)).containsEntry("b", 100);
    // With every pick adding a pending call, two equal endpoints end level.
    a.pending = 0;
    b.pending = 0;
    count(lp, 1000, true);
    assertThat(Math.abs(a.pending - b.pending)).isLessThanOrEqualTo(1);
    // Weight 3 against 1: the loads level per unit of weight, so c takes three calls for each of d's.
    Fake c = new Fake("c", 3);
    Fake d = new Fake("d", 1);
    lp.update(List.of(c, d));
    count(lp, 4000, true);
    assertThat(c.pending).isBetween(2990, 3010);
    assertThat(d.pending).isBetween(990, 1010);
  }

  /**
   * Eight of ten endpoints down, listed side by side before the two that are up (a zone lost): the calls whose two
   * draws are both down (62% of them) are spread over the two up by weight, as the others are. Before, such a call
   * took the first available endpoint after a random start, so the one listed right after the run of dead ones got
   * 90% of them, and 75% of all calls (14,942 of 20,000).
   */
  @Test
  void leastPendingSpreadsCallsOverTheEndpointsLeftWhenMostAreDown() {
    LeastPending lp = new LeastPending();
    List<Fake> all = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      Fake down = new Fake("down" + i, 1);
      down.available = false;
      all.add(down);
    }
    Fake up1 = new Fake("up1", 1);
    Fake up2 = new Fake("up2", 1);
    all.add(up1);
    all.add(up2);
    lp.update(all);
    Map<String, Integer> n = count(lp, 20_000, false);
    assertThat(n).containsOnlyKeys("up1", "up2");
    // 10,000 each expected (binomial, sd 71): 9,500-10,500 fails by chance about once in 10^12 runs.
    assertThat(n.get("up1")).isBetween(9_500, 10_500);
    // Weights: up2 of weight 3 takes three calls for each of up1's (15,000 of 20,000 expected, sd 61).
    lp.update(List.of(all.get(0), all.get(1), all.get(2), up1, all.get(3), new Fake("up3", 3)));
    Map<String, Integer> w = count(lp, 20_000, false);
    assertThat(w).containsOnlyKeys("up1", "up3");
    assertThat(w.get("up3")).isBetween(14_500, 15_500);
    // Round robin goes on after the endpoint it skipped to: the two left take turns.
    RoundRobin rr = new RoundRobin();
    rr.update(all);
    assertThat(count(rr, 20_000, false)).containsOnlyKeys("up1", "up2")
        .allSatisfy((host, calls) -> assertThat(calls).as(host).isBetween(9_500, 10_500));
  }

  @Test
  void leastPendingAvoidsAnEndpointThatBacksOff() {
    LeastPending lp = new LeastPending();
    List<Fake> all = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      all.add(new Fake("h" + i, 1));
    }
    lp.update(all);
    all.get(0).available = false;
    all.get(1).pending = 1000;
    assertThat(count(lp, 100, false)).containsEntry("h1", 100);
  }

  /**
   * Two of three endpoints back off (a killed server still listed): every call goes to the one that is up, however
   * loaded, not only those whose two draws included it; with none available there is still a pick.
   */
  @Test
  void leastPendingSendsEveryCallToTheAvailableEndpointWhenTheOthersBackOff() {
    LeastPending lp = new LeastPending();
    Fake up = new Fake("up", 1);
    Fake down1 = new Fake("down1", 1);
    Fake down2 = new Fake("down2", 1);
    lp.update(List.of(down1, up, down2));
    down1.available = false;
    down2.available = false;
    up.pending = 1000;
    assertThat(count(lp, 3000, false)).containsEntry("up", 3000);
    Fake heavy = new Fake("heavy", 5); // weighted draws take the same way
    lp.update(List.of(down1, heavy, down2, up));
    heavy.available = false;
    assertThat(count(lp, 3000, false)).containsEntry("up", 3000);
    up.available = false;
    assertThat(lp.pick(ARGS)).isNotNull();
  }

  @Test
  void targetsParseAndExplainMistakes() {
    assertThat(((StaticResolver) Targets.resolver("localhost:7000")).endpoints())
        .containsExactly(Endpoint.of("localhost", 7000));
    assertThat(((StaticResolver) Targets.resolver("static://h1:7000, h2:7001;weight=3,[::1]:7002")).endpoints())
        .containsExactly(Endpoint.of("h1", 7000), new Endpoint("h2", 7001, 3), Endpoint.of("::1", 7002));
    assertThatThrownBy(() -> Targets.resolver("h1")).hasMessageContaining("expected host:port");
    assertThatThrownBy(() -> Targets.resolver("h1:http")).hasMessageContaining("bad port 'http'");
    assertThatThrownBy(() -> Targets.resolver("h1:70000")).hasMessageContaining("1..65535");
    assertThatThrownBy(() -> Targets.resolver("static://")).hasMessageContaining("names no endpoint");
    assertThatThrownBy(() -> Targets.resolver("static://a:1,a:1")).hasMessageContaining("appears twice");
    // A long target is quoted by its start and length: 10,000 addresses with one listed twice made a 170 KB message.
    StringBuilder many = new StringBuilder("static://");
    for (int i = 1; i <= 10_000; i++) {
      many.append("10.0.").append(i / 250).append('.').append(i % 250).append(":7000,");
    }
    many.append("10.0.0.1:7000");
    assertThatThrownBy(() -> Targets.resolver(many.toString())).hasMessageContaining("10.0.0.1:7000 appears twice")
        .hasMessageContaining("... (" + many.length() + " characters)")
        .satisfies(e -> assertThat(e.getMessage().length()).isLessThan(400));
    assertThatThrownBy(() -> Targets.resolver("static://a:1;weight=0")).hasMessageContaining("weight must be");
    assertThatThrownBy(() -> Targets.resolver("static://a:1;zone")).hasMessageContaining("expected name=value");
    // A misspelt weight, zone or version would be kept as an attribute nothing reads: the split would change
    // silently. Refused, saying what to write; names merely near one stay the user's own.
    assertThatThrownBy(() -> Targets.resolver("static://a:1,b:2;wieght=2"))
        .hasMessageContaining("endpoint attribute 'wieght'").hasMessageContaining("write 'weight=2'");
    for (String typo : new String[] {"Weight", "weigt", "weightt", "weigjt", "Zone", "zoen", "zome", "verison",
        "versiom", "vrsion"}) {
      assertThatThrownBy(() -> Targets.resolver("static://a:1;" + typo + "=x"), typo)
          .hasMessageContaining("looks like");
    }
    for (String own : new String[] {"height", "zones", "zon", "rack", "versioned", "versions", "weights", "w"}) {
      assertThat(((StaticResolver) Targets.resolver("static://a:1;" + own + "=x")).endpoints().get(0).attribute(own))
          .as(own).isEqualTo("x");
    }
    Endpoint attributed = ((StaticResolver) Targets.resolver("static://a:1;weight=2;zone=eu-1;version=2.1;rack=r7"))
        .endpoints().get(0);
    assertThat(attributed).isEqualTo(new Endpoint("a", 1, 2, "eu-1", "2.1", Map.of("rack", "r7")));
    assertThat(attributed.attribute("rack")).isEqualTo("r7");
    assertThat(attributed).hasToString("a:1;weight=2;zone=eu-1;version=2.1;rack=r7");
    assertThat(attributed.sameAddress(Endpoint.of("a", 1))).isTrue();
    assertThatThrownBy(() -> Targets.resolver("zookeeper://zk:2181/x"))
        .hasMessageContaining("no name resolver for the scheme 'zookeeper'").hasMessageContaining("static");
    assertThatThrownBy(() -> LoadBalancers.forName("random")).hasMessageContaining("round_robin, least_pending");
  }

  @Test
  void staticResolverAnswersOnStart() {
    List<List<Endpoint>> seen = new ArrayList<>();
    new StaticResolver(List.of(Endpoint.of("a", 1))).start(new NameResolver.Listener() {
      @Override
      public void onEndpoints(List<Endpoint> endpoints) {
        seen.add(endpoints);
      }

      @Override
      public void onError(Status error) {
        throw new AssertionError(error);
      }
    });
    assertThat(seen).containsExactly(List.of(Endpoint.of("a", 1)));
  }

  /**
   * An endpoint whose server refuses calls for a limit (its pool full) answers at once, so it has the fewest calls
   * pending: the policies send calls to the others while one of them is available and not refusing, and prefer a
   * refusing endpoint, still connected, to one that cannot be reached. For consistent hashing this holds for calls
   * without a key (NO_KEY); a key stays on its endpoint (ConsistentHashTest.aKeyStaysOnAnEndpointThatRefusesCallsOrIsConnecting).
   */
  @Test
  void everyPolicySkipsARefusingEndpointButPrefersItToAnUnreachableOne() {
    for (LoadBalancer lb : List.of(new RoundRobin(), new LeastPending(), new ConsistentHash())) {
      Fake full = new Fake("full", 1);
      Fake spare = new Fake("spare", 1);
      Fake down = new Fake("down", 1);
      lb.update(List.of(full, spare, down));
      full.refusing = true;
      spare.pending = 50; // busy, but it takes calls
      down.available = false;
      assertThat(count(lb, 1000, false)).as("%s with a spare endpoint", lb).containsOnlyKeys("spare");
      spare.refusing = true;
      assertThat(count(lb, 1000, false)).as("%s with every reachable endpoint refusing", lb)
          .containsOnlyKeys("full", "spare");
      full.refusing = false;
      spare.refusing = false;
      assertThat(count(lb, 1000, false)).as("%s once the refusals are over", lb).containsKeys("full", "spare")
          .doesNotContainKey("down");
    }
  }
}
