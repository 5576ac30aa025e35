package io.petrel.rpc.transport.netty;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class CallTableTest {
  @Test
  void mixKeepsDistinctIdsDistinct() {
    Set<Integer> seen = new HashSet<>();
    for (int i = -100_000; i < 100_000; i++) {
      assertThat(seen.add(CallTable.mix(i))).as("id %d", i).isTrue();
    }
    for (int i = Integer.MAX_VALUE - 1000; i != Integer.MIN_VALUE + 1000; i++) { // across the wrap
      assertThat(seen.add(CallTable.mix(i))).as("id %d", i).isTrue();
    }
  }

  @Test
  void consecutiveIdsPutGetRemoveLikeAMap() {
    CallTable<String> table = new CallTable<>();
    int first = Integer.MAX_VALUE - 2_500; // request ids wrap around
    for (int n = 0; n < 5_000; n++) {
      assertThat(table.put(first + n, "call " + (first + n))).isNull();
    }
    assertThat(table.size()).isEqualTo(5_000);
    assertThat(table.containsKey(first + 4_999)).isTrue();
    assertThat(table.containsKey(first + 5_000)).isFalse();
    for (int n = 0; n < 5_000; n += 2) {
      assertThat(table.remove(first + n)).isEqualTo("call " + (first + n));
    }
    assertThat(table.remove(first)).isNull();
    for (int n = 1; n < 5_000; n += 2) {
      assertThat(table.get(first + n)).isEqualTo("call " + (first + n));
    }
    assertThat(table.values()).hasSize(2_500).allMatch(v -> v.startsWith("call "));
    table.clear();
    assertThat(table.isEmpty()).isTrue();
  }
}
