package io.petrel.rpc.benchmarks;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.DoubleBinaryOperator;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Turns JMH JSON results of these benchmarks into Markdown tables (framework, payload, load, connections, TPS,
 * payload MB/s, avg, p50, p90, p99, p99.9, server and client CPU per call, failed and refused calls; the I/O and
 * Java version where the results differ in them), the ratios the project's goals are stated in, the scale tables
 * of whatever the results varied ({@link ScaleTables}: payload, callers or window, connections, I/O, Java), and
 * PNG charts.
 *
 * <pre>java -cp benchmarks.jar io.petrel.rpc.benchmarks.Report results.json [--out DIR]</pre>
 *
 * <p>{@code DIR} is {@code benchmark-report} in the current directory unless given.
 *
 * <p>Several result files of the same configurations (repeated runs) give one row each, with the median of
 * every figure. Each file is one run: the goals' ratios are taken between figures of the same file, and a
 * configuration missing from a file (its trial failed, or was not run) leaves that run out of its ratios
 * instead of pairing another run's figure with it. Writes {@code results.md}, {@code tps-<payload>.png}
 * (throughput against callers), {@code latency-<payload>-<load>.png} (percentiles, log scale) and the scale
 * tables' charts ({@code mbps-payload-...png}, {@code tps-connections-...png}, {@code tps-load-async-...png})
 * into the output directory, and prints the Markdown. Latencies come from the HdrHistogram recording of every
 * call when present, else from JMH's SampleTime mode; where one run has both a Throughput and a SampleTime entry
 * of a configuration, the Throughput entry's recorded figures stand for the run.
 */
public final class Report {
  private static final String USAGE =
      "usage: Report results.json [more.json ...] [--out DIR] (DIR: benchmark-report by default)";

  private Report() {}

  public static void main(String[] args) throws IOException {
    System.setProperty("java.awt.headless", "true");
    List<Path> inputs = new ArrayList<>();
    Path out = Path.of("benchmark-report"); // not docs/benchmarks: a run from the repository root would overwrite
                                            // the committed report
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--out") && i + 1 < args.length) {
        out = Path.of(args[++i]);
      } else if (args[i].startsWith("-")) {
        System.err.println(USAGE);
        System.exit(2);
      } else {
        inputs.add(Path.of(args[i]));
      }
    }
    if (inputs.isEmpty()) {
      System.err.println(USAGE);
      System.exit(2);
    }
    List<JsonArray> runs = new ArrayList<>();
    for (Path p : inputs) {
      try (Reader r = Files.newBufferedReader(p, StandardCharsets.UTF_8)) {
        runs.add(JsonParser.parseReader(r).getAsJsonArray());
      } catch (IOException | RuntimeException e) {
        System.err.println("cannot read " + p + " as JMH's JSON results (-rf json -rff FILE writes them): " + e);
        System.exit(2);
      }
    }
    List<ResultRow> rows = parse(runs);
    Files.createDirectories(out);
    String md = markdown(rows, Charts.write(rows, out));
    Files.writeString(out.resolve("results.md"), md, StandardCharsets.UTF_8);
    System.out.println(md);
  }

  /** The rows of one run's results (one JMH JSON file). */
  static List<ResultRow> parse(JsonArray results) {
    return parse(List.of(results));
  }

  /**
   * Merges the JMH entries of one configuration (Throughput and SampleTime runs) into rows, over runs given one
   * JSON array each (one file each). A figure is known by its run: the file, and, where one file holds the same
   * configuration and mode more than once (results joined by hand), which of them it is.
   */
  static List<ResultRow> parse(List<JsonArray> runs) {
    Map<String, Builder> byKey = new LinkedHashMap<>();
    Map<String, Integer> seen = new HashMap<>();
    for (int file = 0; file < runs.size(); file++) {
      for (JsonElement e : runs.get(file)) {
        add(byKey, seen, file, e.getAsJsonObject());
      }
    }
    List<ResultRow> rows = new ArrayList<>();
    byKey.values().forEach(b -> rows.add(b.build()));
    rows.sort(Comparator.comparing(ResultRow::benchmark).reversed()
        .thenComparing(ResultRow::payload)
        .thenComparingInt(ResultRow::load)
        .thenComparingInt(ResultRow::rate)
        .thenComparingInt(ResultRow::connections)
        .thenComparing(ResultRow::io)
        .thenComparing(Report::javaOrder)
        .thenComparing(ResultRow::framework));
    return rows;
  }

  /** Adds one JMH entry of run {@code file} to its configuration's builder. */
  private static void add(Map<String, Builder> byKey, Map<String, Integer> seen, int file, JsonObject o) {
    String benchmark = o.get("benchmark").getAsString();
    String owner = benchmark.substring(0, benchmark.lastIndexOf('.'));
    String simple = owner.substring(owner.lastIndexOf('.') + 1);
    JsonObject params = o.has("params") ? o.getAsJsonObject("params") : new JsonObject();
    Framework framework = Framework.valueOf(param(params, "framework", "PETREL"));
    Payload payload = Payload.valueOf(param(params, "payload", "MESSAGE"));
    int connections = Integer.parseInt(param(params, "connections", "1"));
    String io = ioLabel(params);
    String jdk = o.has("jdkVersion") ? o.get("jdkVersion").getAsString() : "";
    int threads = o.get("threads").getAsInt();
    boolean async = simple.startsWith("Async");
    int load = async ? Integer.parseInt(param(params, "window", "0")) : threads;
    int rate = async ? Integer.parseInt(param(params, "rate", "0")) : 0;
    String key = simple + '|' + framework + '|' + payload + '|' + load + '|' + rate + '|' + connections + '|' + io
        + '|' + jdk;
    Builder b = byKey.computeIfAbsent(key,
        k -> new Builder(simple, framework, payload, load, rate, connections, io, jdk));
    String mode = o.get("mode").getAsString();
    int occurrence = seen.merge(file + "|" + key + "|" + mode, 1, Integer::sum) - 1;
    String run = occurrence == 0 ? Integer.toString(file) : file + "#" + occurrence;
    JsonObject primary = o.getAsJsonObject("primaryMetric");
    JsonObject secondary = o.has("secondaryMetrics") ? o.getAsJsonObject("secondaryMetrics") : new JsonObject();
    if (mode.equals("thrpt")) {
      b.tps.put(run, perSecond(primary.get("score").getAsDouble(), primary.get("scoreUnit").getAsString()));
    } else if (mode.equals("sample")) {
      String unit = primary.get("scoreUnit").getAsString();
      JsonObject pct = primary.getAsJsonObject("scorePercentiles");
      b.sampled.put(run, new double[] {micros(primary.get("score").getAsDouble(), unit),
          micros(pct.get("50.0").getAsDouble(), unit), micros(pct.get("90.0").getAsDouble(), unit),
          micros(pct.get("99.0").getAsDouble(), unit), micros(pct.get("99.9").getAsDouble(), unit)});
    }
    // A run's Throughput entry and its SampleTime entry (-bm thrpt,sample) carry the same kinds of figures: the
    // Throughput one's stand for the run, whichever comes first in the file.
    boolean primaryEntry = mode.equals("thrpt");
    if (secondary.has("rtt.p99")) {
      put(b.recorded, run, primaryEntry, new double[] {score(secondary, "rtt.avg"), score(secondary, "rtt.p50"),
          score(secondary, "rtt.p90"), score(secondary, "rtt.p99"), score(secondary, "rtt.p999")});
    }
    if (secondary.has("server.cpu")) {
      put(b.cpu, run, primaryEntry, score(secondary, "server.cpu"));
    }
    if (secondary.has("client.cpu")) {
      put(b.clientCpu, run, primaryEntry, score(secondary, "client.cpu"));
    }
    if (secondary.has("calls.failed")) {
      put(b.failed, run, primaryEntry, Math.round(score(secondary, "calls.failed")));
      put(b.refused, run, primaryEntry, Math.round(score(secondary, "calls.refused")));
    }
    if (secondary.has("machine.steal")) {
      b.steal = Math.max(Double.isNaN(b.steal) ? 0 : b.steal, score(secondary, "machine.steal"));
    }
  }

  /** A run's figure: a Throughput entry's replaces another's, any other entry's only fills a gap. */
  private static <T> void put(Map<String, T> byRun, String run, boolean primaryEntry, T value) {
    if (primaryEntry) {
      byRun.put(run, value);
    } else {
      byRun.putIfAbsent(run, value);
    }
  }

  /**
   * The I/O a result ran on: its {@code io} parameter (the client's, and a server's it started unless its
   * {@code serverArgs} set {@code --io}), or "client X, server Y" when the server's was set to another.
   */
  static String ioLabel(JsonObject params) {
    String client = param(params, "io", "auto").trim().toLowerCase(Locale.ROOT);
    String[] serverArgs = Target.split(param(params, "serverArgs", ""));
    for (int i = 0; i + 1 < serverArgs.length; i++) {
      if (serverArgs[i].equals("--io")) {
        String server = serverArgs[i + 1].toLowerCase(Locale.ROOT);
        return server.equals(client) ? client : "client " + client + ", server " + server;
      }
    }
    return client;
  }

  /** Orders Java versions by their numbers ("9.0" before "17.0.15" before "25"), not as text. */
  static String javaOrder(ResultRow r) {
    StringBuilder sb = new StringBuilder();
    for (String part : r.jdk().split("[^0-9]+")) {
      if (!part.isEmpty()) {
        sb.append(String.format(Locale.ROOT, "%08d.", Long.parseLong(part.length() > 8 ? part.substring(0, 8) : part)));
      }
    }
    return sb.toString();
  }

  /** The Markdown: one table per benchmark and payload, then the goal ratios, then the charts. */
  static String markdown(List<ResultRow> rows, List<Path> charts) {
    StringBuilder sb = new StringBuilder();
    Map<String, List<ResultRow>> groups = new LinkedHashMap<>();
    for (ResultRow r : rows) {
      groups.computeIfAbsent((r.async() ? "Pipelined async calls" : "Blocking callers") + ", "
          + r.payload().label(), k -> new ArrayList<>()).add(r);
    }
    boolean ioColumn = rows.stream().map(ResultRow::io).distinct().count() > 1;
    boolean javaColumn = rows.stream().map(ResultRow::jdk).distinct().count() > 1;
    groups.forEach((title, list) -> {
      sb.append("### ").append(title).append("\n\n");
      sb.append("| framework | load | conns").append(ioColumn ? " | I/O" : "").append(javaColumn ? " | Java" : "")
          .append(" | runs | TPS | MB/s | avg ms | p50 ms | p90 ms | p99 ms | p99.9 ms"
          + " | server CPU us/call | client CPU us/call | steal % | failed | refused |\n");
      sb.append("|---|---|---:").append(ioColumn ? "|---" : "").append(javaColumn ? "|---" : "")
          .append("|---:".repeat(13)).append("|\n");
      for (ResultRow r : list) {
        sb.append("| ").append(r.framework().label())
            .append(" | ").append(r.loadLabel())
            .append(" | ").append(r.connections());
        if (ioColumn) {
          sb.append(" | ").append(r.io());
        }
        if (javaColumn) {
          sb.append(" | ").append(r.jdk());
        }
        sb.append(" | ").append(r.runs())
            .append(" | ").append(tps(r.tps()))
            .append(" | ").append(megabytes(r.megabytesPerSecond()))
            .append(" | ").append(ms(r.avg()))
            .append(" | ").append(ms(r.p50()))
            .append(" | ").append(ms(r.p90()))
            .append(" | ").append(ms(r.p99()))
            .append(" | ").append(ms(r.p999()))
            .append(" | ").append(fmt(r.serverCpu(), 1))
            .append(" | ").append(fmt(r.clientCpu(), 1))
            .append(" | ").append(fmt(r.steal(), 0))
            .append(" | ").append(r.failed())
            .append(" | ").append(r.refused())
            .append(" |\n");
      }
      sb.append('\n');
    });
    sb.append("TPS counts every call made, failed and refused ones too; MB/s is the payload both ways (request and"
        + " reply bodies, no headers) per second, in 10^6 bytes.\n\n");
    sb.append(ratios(rows));
    sb.append(ScaleTables.markdown(rows));
    if (!charts.isEmpty()) {
      sb.append("### Charts\n\n");
      for (Path c : charts) {
        sb.append("![").append(c.getFileName()).append("](").append(c.getFileName()).append(")\n\n");
      }
    }
    return sb.toString();
  }

  /**
   * The ratios of the project's goals, for every payload and number of blocking callers measured (and, where a
   * run varied them, every number of connections, I/O and Java version: a ratio is always taken between rows
   * that differ in the framework only).
   */
  static String ratios(List<ResultRow> rows) {
    StringBuilder sb = new StringBuilder();
    List<ResultRow> configs = configs(rows);
    if (configs.isEmpty()) {
      return "";
    }
    String variantHeader = variantHeader(rows);
    sb.append("### Ratios (blocking callers)\n\n");
    sb.append("The project's goals, at 16 and 128 callers: Petrel's business pool (the default) >= 0.70 of the raw"
        + " Netty echo's TPS and >= 4 x gRPC-java's (default executor); Petrel direct >= 0.80 of the echo's; the"
        + " business pool's server CPU per call at most 2 us above direct mode's; at one caller, an average round"
        + " trip <= 1.1 x the echo's. Each ratio (and difference) is taken within one run, both figures from the"
        + " same run; the table gives the median over the runs.\n\n");
    sb.append("| payload | callers").append(variantHeader).append(" | TPS pool / Netty | TPS direct / Netty"
        + " | TPS pool / gRPC | TPS direct / gRPC direct | avg pool / Netty | avg direct / Netty"
        + " | server CPU pool - direct (us) | p99 pool / gRPC | p99 direct / gRPC direct |\n");
    sb.append("|---|---:").append("|---".repeat(variantHeader.split(" \\| ", -1).length - 1))
        .append("|---:".repeat(9)).append("|\n");
    for (ResultRow c : configs) {
      ResultRow p = find(rows, c, Framework.PETREL);
      ResultRow pd = find(rows, c, Framework.PETREL_DIRECT);
      ResultRow g = find(rows, c, Framework.GRPC);
      ResultRow gd = find(rows, c, Framework.GRPC_DIRECT);
      ResultRow n = find(rows, c, Framework.NETTY);
      sb.append("| ").append(c.payload().label()).append(" | ").append(c.load()).append(variantCells(rows, c))
          .append(" | ").append(ratio(p, n, ResultRow::tpsRuns))
          .append(" | ").append(ratio(pd, n, ResultRow::tpsRuns))
          .append(" | ").append(ratio(p, g, ResultRow::tpsRuns))
          .append(" | ").append(ratio(pd, gd, ResultRow::tpsRuns))
          .append(" | ").append(ratio(p, n, ResultRow::avgRuns))
          .append(" | ").append(ratio(pd, n, ResultRow::avgRuns))
          .append(" | ").append(difference(p, pd, ResultRow::serverCpuRuns))
          .append(" | ").append(ratio(p, g, ResultRow::p99Runs))
          .append(" | ").append(ratio(pd, gd, ResultRow::p99Runs))
          .append(" |\n");
    }
    sb.append('\n');
    sb.append(tlsRatios(rows, configs));
    return sb.toString();
  }

  /** One row of every configuration of blocking callers at no fixed rate (any framework stands for it). */
  private static List<ResultRow> configs(List<ResultRow> rows) {
    Map<String, ResultRow> byConfig = new LinkedHashMap<>();
    for (ResultRow r : rows) {
      if (!r.async() && r.rate() == 0) {
        byConfig.putIfAbsent(r.payload() + "|" + r.load() + "|" + r.connections() + "|" + r.io() + "|" + r.jdk(), r);
      }
    }
    List<ResultRow> list = new ArrayList<>(byConfig.values());
    list.sort(Comparator.comparing(ResultRow::payload).thenComparingInt(ResultRow::load)
        .thenComparingInt(ResultRow::connections).thenComparing(ResultRow::io).thenComparing(Report::javaOrder));
    return list;
  }

  /** " | conns | I/O | Java", each only if the rows differ in it. */
  private static String variantHeader(List<ResultRow> rows) {
    return (rows.stream().map(ResultRow::connections).distinct().count() > 1 ? " | conns" : "")
        + (rows.stream().map(ResultRow::io).distinct().count() > 1 ? " | I/O" : "")
        + (rows.stream().map(ResultRow::jdk).distinct().count() > 1 ? " | Java" : "");
  }

  private static String variantCells(List<ResultRow> rows, ResultRow c) {
    return (rows.stream().map(ResultRow::connections).distinct().count() > 1 ? " | " + c.connections() : "")
        + (rows.stream().map(ResultRow::io).distinct().count() > 1 ? " | " + c.io() : "")
        + (rows.stream().map(ResultRow::jdk).distinct().count() > 1 ? " | " + c.jdk() : "");
  }

  /**
   * Petrel against gRPC-java with TLS on both, and each over TLS against itself in plaintext (what TLS costs
   * it), for the configurations where a TLS framework was measured; empty when none was.
   */
  static String tlsRatios(List<ResultRow> rows, List<ResultRow> configs) {
    if (rows.stream().noneMatch(r -> !r.async() && r.framework().tls())) {
      return "";
    }
    String variantHeader = variantHeader(rows);
    StringBuilder sb = new StringBuilder();
    sb.append("### Ratios with TLS (blocking callers)\n\n");
    sb.append("Petrel (business pool) and gRPC-java (default executor), each over TLS 1.3 with OpenSSL (BoringSSL),"
        + " and each over TLS against itself in plaintext in the same run (what TLS costs it). Median over the"
        + " runs of the within-run ratio.\n\n");
    sb.append("| payload | callers").append(variantHeader).append(" | TPS Petrel TLS / gRPC TLS | p99 Petrel TLS / gRPC TLS"
        + " | TPS Petrel TLS / Petrel | TPS gRPC TLS / gRPC |\n");
    sb.append("|---|---:").append("|---".repeat(variantHeader.split(" \\| ", -1).length - 1)).append("|---:|---:|---:|---:|\n");
    for (ResultRow c : configs) {
      ResultRow pt = find(rows, c, Framework.PETREL_TLS);
      ResultRow gt = find(rows, c, Framework.GRPC_TLS);
      if (pt == null && gt == null) {
        continue;
      }
      sb.append("| ").append(c.payload().label()).append(" | ").append(c.load()).append(variantCells(rows, c))
          .append(" | ").append(ratio(pt, gt, ResultRow::tpsRuns))
          .append(" | ").append(ratio(pt, gt, ResultRow::p99Runs))
          .append(" | ").append(ratio(pt, find(rows, c, Framework.PETREL), ResultRow::tpsRuns))
          .append(" | ").append(ratio(gt, find(rows, c, Framework.GRPC), ResultRow::tpsRuns))
          .append(" |\n");
    }
    sb.append('\n');
    return sb.toString();
  }

  /** The median over runs of a's figure over b's, each ratio taken within one run. */
  private static String ratio(@Nullable ResultRow a, @Nullable ResultRow b,
      Function<ResultRow, Map<String, Double>> f) {
    return fmt(median(perRun(a, b, f, (x, y) -> y == 0 ? Double.NaN : x / y)), 2);
  }

  /** The median over runs of a's figure minus b's, each difference taken within one run (one decimal). */
  private static String difference(@Nullable ResultRow a, @Nullable ResultRow b,
      Function<ResultRow, Map<String, Double>> f) {
    return fmt(median(perRun(a, b, f, (x, y) -> x - y)), 1);
  }

  /**
   * {@code op} of a's and b's figures of each run that has both (a NaN result left out); empty if either is null.
   * A run in which only one of them was measured gives nothing.
   */
  private static List<Double> perRun(@Nullable ResultRow a, @Nullable ResultRow b,
      Function<ResultRow, Map<String, Double>> f, DoubleBinaryOperator op) {
    List<Double> out = new ArrayList<>();
    if (a == null || b == null) {
      return out;
    }
    Map<String, Double> y = f.apply(b);
    f.apply(a).forEach((run, x) -> {
      Double other = y.get(run);
      if (other != null) {
        double v = op.applyAsDouble(x, other);
        if (!Double.isNaN(v)) {
          out.add(v);
        }
      }
    });
    return out;
  }

  /** The row of blocking callers of framework {@code f} in the configuration of {@code c}, or null. */
  private static @Nullable ResultRow find(List<ResultRow> rows, ResultRow c, Framework f) {
    for (ResultRow r : rows) {
      if (!r.async() && r.rate() == 0 && r.framework() == f && r.payload() == c.payload() && r.load() == c.load()
          && r.connections() == c.connections() && r.io().equals(c.io()) && r.jdk().equals(c.jdk())) {
        return r;
      }
    }
    return null;
  }

  private static String param(JsonObject params, String name, String dflt) {
    return params.has(name) ? params.get(name).getAsString() : dflt;
  }

  private static double score(JsonObject secondary, String name) {
    return secondary.getAsJsonObject(name).get("score").getAsDouble();
  }

  static double perSecond(double score, String unit) {
    return switch (unit) {
      case "ops/s" -> score;
      case "ops/ms" -> score * 1e3;
      case "ops/us" -> score * 1e6;
      case "ops/ns" -> score * 1e9;
      case "ops/min" -> score / 60;
      default -> throw new IllegalArgumentException("unknown throughput unit " + unit);
    };
  }

  static double micros(double score, String unit) {
    return switch (unit) {
      case "s/op" -> score * 1e6;
      case "ms/op" -> score * 1e3;
      case "us/op" -> score;
      case "ns/op" -> score / 1e3;
      default -> throw new IllegalArgumentException("unknown time unit " + unit);
    };
  }

  /** Megabytes per second: three significant digits, thousands separators above 1000. */
  static String megabytes(double v) {
    if (Double.isNaN(v)) {
      return "-";
    }
    return String.format(Locale.ROOT, v >= 100 ? "%,.0f" : v >= 10 ? "%.1f" : v >= 1 ? "%.2f" : "%.3f", v);
  }

  static String tps(double v) {
    return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%,.0f", v);
  }

  private static String ms(double micros) {
    if (Double.isNaN(micros)) {
      return "-";
    }
    double ms = micros / 1000.0;
    return String.format(Locale.ROOT, ms < 1 ? "%.3f" : ms < 10 ? "%.2f" : "%.1f", ms);
  }

  private static String fmt(double v, int decimals) {
    return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%." + decimals + "f", v);
  }

  /** Collects the runs of one configuration; a row holds the median of each figure over the runs. */
  private static final class Builder {
    final String benchmark;
    final Framework framework;
    final Payload payload;
    final int load;
    final int rate;
    final int connections;
    final String io;
    final String jdk;
    /** Each figure by its run ({@link #parse(List)}), in the order the runs were given. */
    final Map<String, Double> tps = new LinkedHashMap<>();
    final Map<String, Double> cpu = new LinkedHashMap<>();
    final Map<String, Double> clientCpu = new LinkedHashMap<>();
    double steal = Double.NaN;
    final Map<String, Long> failed = new LinkedHashMap<>();
    final Map<String, Long> refused = new LinkedHashMap<>();
    /** avg, p50, p90, p99, p99.9 of each run, from HdrHistogram (every call). */
    final Map<String, double[]> recorded = new LinkedHashMap<>();
    /** The same from JMH's SampleTime mode, used when no run recorded every call. */
    final Map<String, double[]> sampled = new LinkedHashMap<>();

    Builder(String benchmark, Framework framework, Payload payload, int load, int rate, int connections, String io,
        String jdk) {
      this.benchmark = Objects.requireNonNull(benchmark);
      this.framework = framework;
      this.payload = payload;
      this.load = load;
      this.rate = rate;
      this.connections = connections;
      this.io = io;
      this.jdk = jdk;
    }

    ResultRow build() {
      Map<String, double[]> lat = recorded.isEmpty() ? sampled : recorded;
      double[] l = new double[5];
      for (int i = 0; i < 5; i++) {
        List<Double> v = new ArrayList<>();
        for (double[] run : lat.values()) {
          v.add(run[i]);
        }
        l[i] = median(v);
      }
      Set<String> allRuns = new HashSet<>(tps.keySet());
      allRuns.addAll(recorded.keySet());
      allRuns.addAll(sampled.keySet());
      int runs = allRuns.size();
      Map<String, Double> avgRuns = new LinkedHashMap<>();
      Map<String, Double> p99Runs = new LinkedHashMap<>();
      lat.forEach((run, figures) -> {
        avgRuns.put(run, figures[0]);
        p99Runs.put(run, figures[3]);
      });
      return new ResultRow(benchmark, framework, payload, load, rate, connections, io, jdk, runs,
          median(tps.values()), l[0], l[1], l[2], l[3], l[4], median(cpu.values()), median(clientCpu.values()), steal,
          Collections.unmodifiableMap(new LinkedHashMap<>(tps)), Collections.unmodifiableMap(avgRuns),
          Collections.unmodifiableMap(p99Runs), Collections.unmodifiableMap(new LinkedHashMap<>(cpu)), sum(failed),
          sum(refused));
    }

    private static long sum(Map<String, Long> byRun) {
      long total = 0;
      for (long v : byRun.values()) {
        total += v;
      }
      return total;
    }
  }

  static double median(Collection<Double> values) {
    if (values.isEmpty()) {
      return Double.NaN;
    }
    List<Double> v = new ArrayList<>(values);
    v.sort(null);
    int n = v.size();
    return n % 2 == 1 ? v.get(n / 2) : (v.get(n / 2 - 1) + v.get(n / 2)) / 2;
  }
}
