package io.petrel.rpc.benchmarks;

import io.petrel.rpc.transport.netty.IoMode;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatFactory;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/**
 * The benchmark jar's main: JMH's own command line, with {@link PetrelProfiler} added so that every result
 * carries the server CPU time per call and HdrHistogram percentiles, and one option of its own:
 * {@code --threads 1,16,128} runs the selected benchmarks once per thread count (JMH's {@code -t} takes one)
 * and writes all results into the one result file, so that one command does a whole concurrency sweep.
 *
 * <pre>java -jar benchmarks.jar SyncCallBenchmark -p payload=MESSAGE --threads 1,16,128 -rf json -rff results.json</pre>
 *
 * <p>{@code java -jar benchmarks.jar seed NAME ...} runs a seed report's workload instead ({@link SeedMain}).
 */
public final class BenchmarkMain {
  private static final Set<String> NO_RUN = Set.of("-h", "-l", "-lp", "-lprof", "-lrf", "-v");

  private BenchmarkMain() {}

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("seed")) {
      SeedMain.main(java.util.Arrays.copyOfRange(args, 1, args.length));
      return;
    }
    List<String> a = new ArrayList<>(List.of(args));
    String problem = checkParams(a);
    if (problem != null) {
      System.err.println(problem);
      System.exit(2);
    }
    int sweep = a.indexOf("--threads");
    String list = null;
    if (sweep >= 0) {
      list = sweep + 1 < a.size() ? a.remove(sweep + 1) : "";
      a.remove(sweep);
      if (!list.matches("\\d+(,\\d+)*")) {
        System.err.println("--threads needs a list of caller counts, e.g. --threads 1,16,128"
            + (list.isEmpty() ? "" : " (got '" + list + "')"));
        System.exit(2);
      }
    }
    boolean run = a.stream().noneMatch(NO_RUN::contains);
    if (run && !String.join(" ", a).contains(PetrelProfiler.class.getName())) {
      a.add("-prof");
      a.add(PetrelProfiler.class.getName());
    }
    if (list == null) {
      org.openjdk.jmh.Main.main(a.toArray(new String[0]));
      return;
    }
    CommandLineOptions cmd = new CommandLineOptions(a.toArray(new String[0]));
    ResultFormatType type = cmd.getResultFormat().orElse(ResultFormatType.JSON);
    String file = cmd.getResult().orElse("jmh-result." + type.name().toLowerCase(Locale.ROOT));
    List<RunResult> all = new ArrayList<>();
    for (String t : list.split(",")) {
      int threads = Integer.parseInt(t.trim());
      Options opts = new OptionsBuilder().parent(cmd).threads(threads)
          .resultFormat(type).result(file + ".t" + threads).build();
      Collection<RunResult> results = new Runner(opts).run();
      all.addAll(results);
      // Write what is done so far: a long sweep that is stopped keeps its finished part.
      ResultFormatFactory.getInstance(type, file).writeOut(all);
    }
    System.out.println("All results: " + file);
  }

  /**
   * A message for the first {@code -p framework=...}, {@code -p payload=...} or {@code -p io=...} value that names
   * nothing (JMH would fail every trial with it and still exit 0), or null.
   */
  static @Nullable String checkParams(List<String> args) {
    for (int i = 0; i + 1 < args.size(); i++) {
      if (!args.get(i).equals("-p")) {
        continue;
      }
      String param = args.get(i + 1);
      int eq = param.indexOf('=');
      if (eq < 0) {
        continue;
      }
      String name = param.substring(0, eq);
      for (String v : param.substring(eq + 1).split(",")) {
        String problem = switch (name) {
          case "framework" -> unknown(Framework.class, v, param);
          case "payload" -> unknown(Payload.class, v, param);
          case "io" -> unknown(IoMode.class, v, param);
          default -> null;
        };
        if (problem != null) {
          return problem;
        }
      }
    }
    return null;
  }

  private static <E extends Enum<E>> @Nullable String unknown(Class<E> type, String value, String param) {
    boolean io = type == IoMode.class; // the io parameter is read in any case; the others are JMH's enums
    for (E e : type.getEnumConstants()) {
      if (io ? e.name().equalsIgnoreCase(value.trim()) : e.name().equals(value.trim())) {
        return null;
      }
    }
    return "unknown value '" + value.trim() + "' in -p " + param + ": one of " + EnumArgs.names(type, !io)
        + (io ? "" : " (written as here, in capitals)");
  }
}
