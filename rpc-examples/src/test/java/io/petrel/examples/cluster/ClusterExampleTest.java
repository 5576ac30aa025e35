package io.petrel.examples.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ClusterExampleTest {
  @Test
  void theClientSpreadsOverThreeServersAndLosesNoCallWhenOneLeaves() throws Exception {
    List<String> lines = new ArrayList<>();
    ClusterExample.Result r = ClusterExample.run(150, lines::add);
    assertThat(r.failed()).isZero();
    assertThat(r.before()).containsOnlyKeys("server-1", "server-2", "server-3");
    assertThat(r.before().values()).allSatisfy(n -> assertThat(n).isEqualTo(50)); // round robin
    assertThat(r.after().keySet()).contains("server-1", "server-3");
    assertThat(r.after().values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(300);
    // Deregistered at shutdown: server-2 takes no call once the client heard, well within its drain delay.
    assertThat(r.lastCallToLeaverMs()).isLessThan(ClusterExample.DRAIN_DELAY.toMillis());
    assertThat(lines).contains("failed calls: 0");
  }
}
