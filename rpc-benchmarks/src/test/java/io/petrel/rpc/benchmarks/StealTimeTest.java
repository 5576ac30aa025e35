package io.petrel.rpc.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

class StealTimeTest {

  @Test
  void percentIsTheStealShareOfAllTicksBetweenSamples() {
    assertThat(StealTime.percent(new long[] {100, 10_000}, new long[] {150, 10_200})).isEqualTo(25.0);
    assertThat(StealTime.percent(null, new long[] {1, 2})).isNaN();
    assertThat(StealTime.percent(new long[] {1, 2}, new long[] {1, 2})).isNaN(); // no time passed
  }

  @Test
  @EnabledOnOs(OS.LINUX)
  void linuxHasACpuLineToSample() {
    long[] s = StealTime.sample();
    assertThat(s).isNotNull();
    assertThat(s[1]).isPositive();
    assertThat(s[0]).isBetween(0L, s[1]);
  }
}
