package io.petrel.examples.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The timings tool runs (its figures are in docs/cluster.md; here only what it must always see). */
class DiscoveryTimingsTest {
  @Test
  void eachJoiningServerGetsCallsAndIsLeftBeforeItsGoaway() throws Exception {
    List<String> lines = new ArrayList<>();
    DiscoveryTimings.Result r = DiscoveryTimings.run(2, lines::add);
    assertThat(r.missedTries()).isZero();
    assertThat(r.failedCalls()).isZero();
    assertThat(r.firstCallMs()).hasSize(2);
    assertThat(Arrays.stream(r.firstCallMs()).boxed()).allSatisfy(ms -> assertThat(ms).isNotNegative());
    // Calls stopped because the client dropped the server, not because the server sent GOAWAY after its delay.
    assertThat(r.lastCallMs()).hasSize(2);
    assertThat(Arrays.stream(r.lastCallMs()).boxed())
        .allSatisfy(ms -> assertThat(ms).isBetween(0L, DiscoveryTimings.DRAIN_DELAY.toMillis() - 1));
    assertThat(lines).anySatisfy(l -> assertThat(l).startsWith("register-to-first-call: median "))
        .anySatisfy(l -> assertThat(l).startsWith("deregister-to-last-call: median "));
  }

  @Test
  void theSummaryGivesTheMedianAndTheMax() {
    assertThat(DiscoveryTimings.summary(new long[] {30, 10, 20})).isEqualTo("median 20 ms, max 30 ms (3 tries)");
    assertThat(DiscoveryTimings.summary(new long[] {40, 10, 20, 30})).isEqualTo("median 25 ms, max 40 ms (4 tries)");
    assertThat(DiscoveryTimings.summary(new long[0])).isEqualTo("no try");
  }

  @Test
  void aCountOfTriesOutsideOneToAHundredIsRefused() {
    assertThatThrownBy(() -> DiscoveryTimings.run(0, s -> {})).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("tries must be 1..100: 0");
  }
}
