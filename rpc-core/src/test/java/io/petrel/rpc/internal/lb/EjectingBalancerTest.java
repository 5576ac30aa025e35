package io.petrel.rpc.internal.lb;

import static io.petrel.rpc.internal.lb.LoadBalancerTest.ARGS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.petrel.rpc.Status;
import io.petrel.rpc.internal.lb.LoadBalancerTest.Fake;
import io.petrel.rpc.lb.OutlierEjection;
import io.petrel.rpc.ConnectivityState;
import io.petrel.rpc.Subchannel;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The ejection rules on a clock the test moves, around round robin over subchannels the test controls. */
class EjectingBalancerTest {
  private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
  private static final Status FAILED = Status.UNAVAILABLE.withDescription("connection reset");
  private static final Status ANSWERED = Status.NOT_FOUND.withDescription("no such user");

  private final AtomicLong now = new AtomicLong(1_000 * SECOND);
  private final Fake a = new Fake("a", 1);
  private final Fake b = new Fake("b", 1);
  private final Fake c = new Fake("c", 1);
  private final Fake d = new Fake("d", 1);

  private EjectingBalancer balancer(double maxEjectedShare) {
    EjectingBalancer lb = new EjectingBalancer(new RoundRobin(), new EjectingBalancer.Options(3, 0.5, 10,
        10 * SECOND, 30 * SECOND, 300 * SECOND, maxEjectedShare), now::get);
    lb.update(List.of(a, b, c, d));
    return lb;
  }

  private static Map<String, Integer> picks(EjectingBalancer lb, int n) {
    Map<String, Integer> out = new HashMap<>();
    for (int i = 0; i < n; i++) {
      out.merge(lb.pick(ARGS).endpoint().host(), 1, Integer::sum);
    }
    return out;
  }

  private static void fail(EjectingBalancer lb, Subchannel s, int times) {
    for (int i = 0; i < times; i++) {
      lb.onAttemptEnded(s, FAILED, 1_000);
    }
  }

  @Test
  void consecutiveFailuresEjectThenOneProbeDecidesAndTheTimeDoubles() {
    EjectingBalancer lb = balancer(0.5);
    fail(lb, c, 2);
    lb.onAttemptEnded(c, Status.OK, 1_000); // a success breaks the run
    fail(lb, c, 2);
    assertThat(lb.ejected()).isEmpty();
    assertThat(lb.ejectedCount()).isZero();
    fail(lb, c, 1);
    assertThat(lb.ejected()).containsExactly(c);
    assertThat(lb.ejectedCount()).as("the client's rpc.client.endpoints.ejected").isEqualTo(1);
    assertThat(lb.ejections()).as("its rpc.client.endpoints.ejections").isEqualTo(1);
    assertThat(picks(lb, 300)).doesNotContainKey("c").containsEntry("a", 100);

    now.addAndGet(30 * SECOND);
    lb.onAttemptEnded(a, Status.OK, 1_000); // the clock is read as calls end
    assertThat(lb.pick(ARGS)).as("the probe").isSameAs(c);
    assertThat(picks(lb, 300)).as("one probe only").doesNotContainKey("c");
    assertThat(lb.ejectedCount()).as("out while probed").isEqualTo(1);
    lb.onAttemptEnded(c, FAILED, 1_000); // the probe failed: out again, for 60 s
    assertThat(lb.ejected()).containsExactly(c);
    assertThat(lb.ejectedCount()).isEqualTo(1);
    assertThat(lb.ejections()).as("ejected again: counted again").isEqualTo(2);

    now.addAndGet(30 * SECOND);
    lb.onAttemptEnded(a, Status.OK, 1_000);
    assertThat(picks(lb, 300)).as("not yet: the second ejection lasts 60 s").doesNotContainKey("c");
    now.addAndGet(30 * SECOND);
    lb.onAttemptEnded(a, Status.OK, 1_000);
    assertThat(lb.pick(ARGS)).isSameAs(c);
    lb.onAttemptEnded(c, Status.OK, 1_000); // the probe succeeded: back
    assertThat(lb.ejected()).isEmpty();
    assertThat(lb.ejectedCount()).isZero();
    assertThat(lb.ejections()).isEqualTo(2);
    assertThat(picks(lb, 400)).containsEntry("c", 100);
  }

  @Test
  void theApplicationsErrorsAndCancellationsAreNotFailures() {
    EjectingBalancer lb = balancer(0.5);
    for (int i = 0; i < 20; i++) {
      lb.onAttemptEnded(c, ANSWERED, 1_000);
      lb.onAttemptEnded(c, Status.CANCELLED, 1_000);
    }
    now.addAndGet(11 * SECOND);
    lb.onAttemptEnded(c, ANSWERED, 1_000);
    assertThat(lb.ejected()).isEmpty();
  }

  @Test
  void failedConnectsCount() {
    EjectingBalancer lb = balancer(0.5);
    for (int i = 0; i < 3; i++) {
      lb.onStateChange(d, ConnectivityState.BACKING_OFF, Status.UNAVAILABLE.withDescription("connection refused"));
    }
    assertThat(lb.ejected()).containsExactly(d);
  }

  @Test
  void neverMoreThanTheMaxEjectedShare() {
    EjectingBalancer lb = balancer(0.5);
    fail(lb, a, 3);
    fail(lb, b, 3);
    fail(lb, c, 3); // a third of four would pass 50 %
    assertThat(lb.ejected()).containsExactly(a, b);
    assertThat(lb.ejectedCount()).isEqualTo(2);
    assertThat(lb.ejections()).as("c, kept in by the share, is not counted").isEqualTo(2);
    assertThat(picks(lb, 100)).containsOnlyKeys("c", "d");
    // Fewer endpoints allow fewer ejections: the one ejected first comes back.
    lb.update(List.of(a, b, c));
    assertThat(lb.ejected()).hasSize(1);
    assertThat(lb.ejectedCount()).isEqualTo(1);
  }

  @Test
  void aFailureShareWellAboveThePeersEjectsButAnOutageThatHitsAllAlikeDoesNot() {
    EjectingBalancer lb = balancer(0.5);
    for (int i = 0; i < 20; i++) { // c: 2 of 3 failed, never three in a row; the others: 1 of 20
      fail(lb, c, 2);
      lb.onAttemptEnded(c, Status.OK, 1_000);
      for (Fake f : List.of(a, b, d)) {
        lb.onAttemptEnded(f, i == 0 ? FAILED : Status.OK, 1_000);
      }
    }
    assertThat(lb.ejected()).isEmpty();
    now.addAndGet(10 * SECOND);
    lb.onAttemptEnded(a, Status.OK, 1_000);
    assertThat(lb.ejected()).containsExactly(c);

    EjectingBalancer all = balancer(0.5);
    for (int i = 0; i < 20; i++) { // everyone: 50 %, alternating
      for (Fake f : List.of(a, b, c, d)) {
        all.onAttemptEnded(f, i % 2 == 0 ? FAILED : Status.OK, 1_000);
      }
    }
    now.addAndGet(10 * SECOND);
    all.onAttemptEnded(a, Status.OK, 1_000);
    assertThat(all.ejected()).isEmpty();
  }

  @Test
  void optionsAreCheckedWithTheirNames() {
    assertThatThrownBy(() -> OutlierEjection.around("least_pending").consecutiveFailures(0))
        .hasMessage("consecutiveFailures must be >= 1: 0");
    assertThatThrownBy(() -> OutlierEjection.around("least_pending").maxEjectedShare(1.5))
        .hasMessage("maxEjectedShare must be in (0, 1]: 1.5");
    assertThatThrownBy(() -> OutlierEjection.around("least_pending").baseEjectionTime(Duration.ofSeconds(10))
        .maxEjectionTime(Duration.ofSeconds(5)).build()).hasMessageContaining("is less than baseEjectionTime");
    assertThatThrownBy(() -> OutlierEjection.around("fastest")).hasMessageContaining("unknown load balancer");
    assertThat(OutlierEjection.around("round_robin").build().name()).isEqualTo("outlier_ejection(round_robin)");
  }
}
