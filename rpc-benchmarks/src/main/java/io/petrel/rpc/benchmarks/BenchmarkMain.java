package io.petrel.rpc.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The benchmark jar's main: JMH's own command line, with {@link PetrelProfiler} added so that every result
 * carries the server CPU time per call and HdrHistogram percentiles.
 *
 * <pre>java -jar benchmarks.jar SyncCallBenchmark -p payload=MESSAGE -t 16 -rf json -rff results.json</pre>
 */
public final class BenchmarkMain {
  private static final Set<String> NO_RUN = Set.of("-h", "-l", "-lp", "-lprof", "-lrf", "-v");

  private BenchmarkMain() {}

  public static void main(String[] args) throws Exception {
    List<String> a = new ArrayList<>(List.of(args));
    boolean run = a.stream().noneMatch(NO_RUN::contains);
    if (run && !String.join(" ", a).contains(PetrelProfiler.class.getName())) {
      a.add("-prof");
      a.add(PetrelProfiler.class.getName());
    }
    org.openjdk.jmh.Main.main(a.toArray(new String[0]));
  }
}
