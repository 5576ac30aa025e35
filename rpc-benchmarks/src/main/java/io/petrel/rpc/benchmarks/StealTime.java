package io.petrel.rpc.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.jspecify.annotations.Nullable;

/**
 * CPU time the hypervisor took from this virtual machine ("steal"), from the first line of Linux's
 * {@code /proc/stat}. On a shared cloud machine it is what makes one run differ from the next: a trial run
 * while neighbours were busy shows a high steal share, and its figures say more about them than about the
 * frameworks.
 */
final class StealTime {
  private static final Path PROC_STAT = Path.of("/proc/stat");

  private StealTime() {}

  /** {steal, total} in clock ticks since boot, or null where /proc/stat is not there (not Linux). */
  static long @Nullable [] sample() {
    try {
      String first = Files.readAllLines(PROC_STAT).get(0); // cpu user nice system idle iowait irq softirq steal
      String[] f = first.trim().split("\\s+");
      if (f.length < 9 || !f[0].equals("cpu")) {
        return null;
      }
      long total = 0;
      for (int i = 1; i < Math.min(f.length, 9); i++) { // guest time is already in user
        total += Long.parseLong(f[i]);
      }
      return new long[] {Long.parseLong(f[8]), total};
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /** The steal share between two samples, in percent of all CPU time; NaN if either is missing. */
  static double percent(long @Nullable [] before, long @Nullable [] after) {
    if (before == null || after == null || after[1] <= before[1]) {
      return Double.NaN;
    }
    return 100.0 * (after[0] - before[0]) / (after[1] - before[1]);
  }
}
