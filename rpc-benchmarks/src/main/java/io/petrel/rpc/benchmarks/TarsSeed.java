package io.petrel.rpc.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The Tars seed (000): 4 B and 1 KiB opaque bodies echoed, from P client processes of T blocking threads each
 * (1x1, 1x10, 2x10, 5x10), all in one measured window; the processes' results are summed as the report sums
 * its clients. Columns as the report's: TPS (in units of 10,000/s), average cost, server CPU, and the traffic
 * in and out (Mb/s, packets/s) from the kernel's counters of the client's network interface.
 *
 * <p>Each client process is this jar's {@code seed tars-worker}: it connects, answers READY, waits for GO,
 * runs its threads for the warm-up and the window, and prints its result as one JSON line.
 */
final class TarsSeed {
  static final String NAME = "tars";
  private static final String READY = "tars-worker ready";
  private static final String RESULT = "tars-worker result ";

  /** The options of the server the seed starts: every plaintext framework, so that any of them can be asked for. */
  static final String SERVER_ARGS = "--frameworks petrel,petrel_direct,grpc,grpc_direct,netty";

  private TarsSeed() {}

  static List<SeedRun> run(SeedArgs args) throws Exception {
    List<Framework> frameworks = frameworks(args.string("frameworks", "petrel"));
    List<Payload> payloads = payloads(args.string("payloads", "BYTES_4,BYTES_1K"));
    List<int[]> matrix = matrix(args.string("procs-threads", "1x1,1x10,2x10,5x10"));
    int connections = args.integer("connections", 1, 1);
    Duration warmup = args.seconds("warmup", 5, true);
    Duration measure = args.seconds("duration", 10, false);
    String iface = args.string("iface", "lo");
    String clientJvm = args.string("client-jvm", "-Xms256m -Xmx256m");
    String io = args.string("io", "auto");
    NettyIo.parse(io);
    List<SeedRun> runs = new ArrayList<>();
    try (SeedServer server = SeedServer.open(args, SERVER_ARGS)) {
      args.checkAllUsed(NAME);
      server.requireServed(frameworks);
      System.out.println("# Tars seed against " + server.description() + "; options: " + args.describe());
      for (Framework f : frameworks) {
        for (Payload payload : payloads) {
          for (int[] pt : matrix) {
            SeedRun r = runOne(server, f, payload, pt[0], pt[1], connections, io, iface, clientJvm, warmup,
                measure);
            System.out.println("# " + f.key() + " " + payload.name() + " " + pt[0] + "x" + pt[1] + ": "
                + Table.num(r.tps(), 0) + " calls/s, failed " + r.failed() + ", refused " + r.refused()
                + (r.error() == null ? "" : " (" + r.error() + ")"));
            runs.add(r);
          }
        }
      }
    }
    return runs;
  }

  private static SeedRun runOne(SeedServer server, Framework f, Payload payload, int procs, int threads,
      int connections, String io, String iface, String clientJvm, Duration warmup, Duration measure)
      throws Exception {
    List<Process> workers = new ArrayList<>();
    List<BufferedReader> outs = new ArrayList<>();
    List<SeedRun> results = new ArrayList<>();
    String lost = null;
    try {
      for (int i = 0; i < procs; i++) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(List.of(SeedServer.split(clientJvm)));
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), SeedMain.class.getName(), "tars-worker",
            "--host", server.endpoints().host(), "--port", Integer.toString(server.endpoints().controlPort()),
            "--framework", f.key(), "--payload", payload.name(), "--threads", Integer.toString(threads),
            "--connections", Integer.toString(connections), "--io", io,
            "--warmup", Double.toString(warmup.toMillis() / 1000.0),
            "--duration", Double.toString(measure.toMillis() / 1000.0)));
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        workers.add(p);
        outs.add(new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)));
      }
      for (BufferedReader out : outs) {
        String line = awaitLine(out, READY, 90);
        if (line == null) {
          throw new IOException("a tars-worker did not connect within 90 s (see its output above)");
        }
      }
      for (Process p : workers) {
        OutputStream in = p.getOutputStream();
        in.write("GO\n".getBytes(StandardCharsets.US_ASCII));
        in.flush();
      }
      Load.parkUntil(System.nanoTime() + warmup.toNanos());
      NetCounters net0 = NetCounters.read(iface);
      long cpu0 = server.cpuNanos();
      long t0 = System.nanoTime();
      Load.parkUntil(t0 + measure.toNanos());
      NetCounters net1 = NetCounters.read(iface);
      long cpu1 = server.cpuNanos();
      double seconds = (System.nanoTime() - t0) / 1e9;
      for (BufferedReader out : outs) {
        String line = awaitLine(out, RESULT, (int) Load.DRAIN.toSeconds() + 60);
        if (line == null) {
          lost = "a client process gave no result";
          continue;
        }
        results.addAll(SeedRun.parseAll("[" + line.substring(RESULT.length()) + "]"));
      }
      Map<String, Long> counters = new LinkedHashMap<>(NetCounters.delta(net0, net1));
      counters.put("net_millis", Math.round(seconds * 1000));
      if (cpu0 >= 0 && cpu1 >= 0) {
        counters.put("server_cpu_ns", cpu1 - cpu0);
        counters.put("server_millis", Math.round(seconds * 1000));
      }
      counters.put("machines", 1L);
      SeedRun merged = results.isEmpty()
          ? new SeedRun(NAME, labels(f, payload, procs, threads), 0, 0, 0, seconds,
              new org.HdrHistogram.Histogram(3), Map.of(), Map.of(), lost)
          : SeedRun.merge(results);
      counters.putAll(merged.counters());
      return new SeedRun(NAME, labels(f, payload, procs, threads), merged.ok(), merged.failed(), merged.refused(), merged.seconds(),
          merged.latency(), counters, merged.returns(), lost != null ? lost : merged.error());
    } finally {
      for (Process p : workers) {
        p.getOutputStream().close();
        if (!p.waitFor(10, TimeUnit.SECONDS)) {
          p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
      }
    }
  }

  /** The client process: {@code seed tars-worker ...} (started by {@link #run}, not by hand). */
  static void worker(SeedArgs args) throws Exception {
    String host = args.string("host", "127.0.0.1");
    int port = args.integer("port", 7000, 1);
    Framework f = EnumArgs.parse(Framework.class, args.string("framework", "petrel"), "--framework");
    Payload payload = EnumArgs.parse(Payload.class, args.string("payload", "BYTES_4"), "--payload");
    int threads = args.integer("threads", 1, 1);
    int connections = args.integer("connections", 1, 1);
    var io = NettyIo.parse(args.string("io", "auto"));
    Duration warmup = args.seconds("warmup", 5, true);
    Duration measure = args.seconds("duration", 10, false);
    args.checkAllUsed("tars-worker");
    try (BenchClient client = BenchClient.connect(f, payload, Endpoints.discover(host, port), connections, io)) {
      client.verify(client.call());
      System.out.println(READY);
      System.out.flush();
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
      String go = in.readLine();
      if (!"GO".equals(go)) {
        System.err.println("tars-worker: no GO from the parent (" + go + "); exiting");
        return;
      }
      Tally tally = new Tally();
      Load.blocking(threads, () -> {
        Object reply = client.call();
        client.verify(reply);
        return null;
      }, tally, warmup, measure);
      System.out.println(RESULT + tally.toRun(NAME, labels(f, payload, -1, threads), Map.of()).toJson());
      System.out.flush();
    }
  }

  /** procs < 0: filled in by the parent (the worker does not know how many processes run beside it). */
  private static Map<String, String> labels(Framework f, Payload payload, int procs, int threads) {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("framework", f.key());
    m.put("payload", payload.name());
    m.put("threads", Integer.toString(threads));
    if (procs >= 0) {
      m.put("processes", Integer.toString(procs));
    }
    return m;
  }

  private static @Nullable String awaitLine(BufferedReader out, String prefix, int seconds) throws Exception {
    CompletableFuture<String> f = CompletableFuture.supplyAsync(() -> {
      try {
        String line;
        while ((line = out.readLine()) != null) {
          if (line.startsWith(prefix)) {
            return line;
          }
          System.err.println("[tars-worker] " + line);
        }
        return null;
      } catch (IOException e) {
        return null;
      }
    });
    try {
      return f.get(seconds, TimeUnit.SECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      return null;
    }
  }

  /** The seed's table. */
  static String table(List<SeedRun> runs) {
    Table t = new Table("Framework", "Client machines", "Process num", "Thread num", "Package size (B)",
        "TPS (w/s)", "Avg cost (ms)", "Server CPU", "In traffic (Mb/s)", "Out traffic (Mb/s)", "In packets (/s)",
        "Out packets (/s)", "Failed", "Refused");
    for (SeedRun r : runs) {
      double netSeconds = r.counter("net_millis") / 1000.0;
      boolean net = r.counters().containsKey("net_rx_bytes") && netSeconds > 0;
      double cpuSeconds = r.counter("server_millis") / 1000.0;
      String cpu = r.counters().containsKey("server_cpu_ns") && cpuSeconds > 0
          ? Table.num(100.0 * r.counter("server_cpu_ns") / 1e9 / cpuSeconds, 0) + "%" : "-";
      int size = Payload.valueOf(r.label("payload")).size();
      t.row(r.label("framework"), r.counter("machines"), r.label("processes"), r.label("threads"), size,
          Table.num(r.tps() / 1e4, 2), Table.num(r.meanMs(), 3), cpu,
          net ? Table.num(r.counter("net_tx_bytes") * 8 / 1e6 / netSeconds, 3) + "M" : "-",
          net ? Table.num(r.counter("net_rx_bytes") * 8 / 1e6 / netSeconds, 3) + "M" : "-",
          net ? Table.count(Math.round(r.counter("net_tx_packets") / netSeconds)) : "-",
          net ? Table.count(Math.round(r.counter("net_rx_packets") / netSeconds)) : "-",
          Table.count(r.failed()), Table.count(r.refused()));
    }
    return t + "\nServer CPU: the server process's CPU time over the window, 100% = one core. Traffic: the"
        + " client's interface (In = what it sent, the server's in; Out = what it received); on loopback (lo)"
        + " every packet is both sent and received, so In and Out are each the traffic of both directions.\n";
  }

  static List<Framework> frameworks(String list) {
    List<Framework> out = new ArrayList<>();
    for (String s : list.split(",")) {
      out.add(EnumArgs.parse(Framework.class, s, "--frameworks value"));
    }
    return out;
  }

  private static List<Payload> payloads(String list) {
    List<Payload> out = new ArrayList<>();
    for (String s : list.split(",")) {
      Payload p = EnumArgs.parse(Payload.class, s, "--payloads value");
      if (p.size() < 0) {
        throw new IllegalArgumentException("--payloads: the Tars seed sends opaque bodies (EMPTY, BYTES_4,"
            + " BYTES_1K), not " + p);
      }
      out.add(p);
    }
    return out;
  }

  static List<int[]> matrix(String list) {
    List<int[]> out = new ArrayList<>();
    for (String s : list.split(",")) {
      String[] pt = s.trim().toLowerCase(Locale.ROOT).split("x");
      try {
        int p = Integer.parseInt(pt[0]);
        int t = Integer.parseInt(pt[1]);
        if (pt.length != 2 || p < 1 || t < 1 || p > 64 || t > 1024) {
          throw new NumberFormatException();
        }
        out.add(new int[] {p, t});
      } catch (NumberFormatException | ArrayIndexOutOfBoundsException e) {
        throw new IllegalArgumentException("--procs-threads takes PROCESSESxTHREADS pairs separated by commas"
            + " (1 to 64 processes, 1 to 1024 threads), e.g. 1x1,1x10,2x10: got " + s);
      }
    }
    return out;
  }
}
