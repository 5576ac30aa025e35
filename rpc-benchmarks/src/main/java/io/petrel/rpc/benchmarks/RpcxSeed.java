package io.petrel.rpc.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The rpcx seed (003): the BenchmarkMessage (581 bytes) echoed with field1 = "OK" at 100, 1000, 2000 and 5000
 * concurrent callers, Petrel beside gRPC-java; TPS and the mean and median latency, as three tables of
 * concurrency by framework. A caller is one call in flight: each reply starts that caller's next call (the
 * rpcx benchmark's goroutines, without a thread each); every reply is checked.
 */
final class RpcxSeed {
  static final String NAME = "rpcx";

  /**
   * The options of the server the seed starts: every plaintext framework, and room in Petrel's business queue (2048
   * by default) for 5000 calls in flight, or they are refused.
   */
  static final String SERVER_ARGS = "--frameworks petrel,petrel_direct,grpc,grpc_direct,netty --business-queue 10000";

  private RpcxSeed() {}

  static List<SeedRun> run(SeedArgs args) throws Exception {
    List<Framework> frameworks = TarsSeed.frameworks(args.string("frameworks", "petrel,grpc"));
    List<Integer> concurrency = args.integers("concurrency", "100,1000,2000,5000", 1);
    int connections = args.integer("connections", 1, 1);
    Duration warmup = args.seconds("warmup", 10, true);
    Duration measure = args.seconds("duration", 10, false);
    var io = NettyIo.parse(args.string("io", "auto"));
    List<SeedRun> runs = new ArrayList<>();
    try (SeedServer server = SeedServer.open(args, SERVER_ARGS)) {
      args.checkAllUsed(NAME);
      server.requireServed(frameworks);
      System.out.println("# rpcx seed against " + server.description() + "; options: " + args.describe());
      for (Framework f : frameworks) {
        try (BenchClient client = BenchClient.connect(f, Payload.MESSAGE, server.endpoints(), connections, io)) {
          client.verify(client.call());
          for (int c : concurrency) {
            Tally tally = new Tally();
            Load.window(c, () -> client.callAsync().thenApply(reply -> {
              client.verify(reply);
              return reply;
            }), tally, warmup, measure);
            Map<String, String> labels = new LinkedHashMap<>();
            labels.put("framework", f.key());
            labels.put("concurrency", Integer.toString(c));
            SeedRun r = tally.toRun(NAME, labels, Map.of("machines", 1L));
            System.out.println("# " + f.key() + " c=" + c + ": " + Table.num(r.tps(), 0) + " calls/s, failed "
                + r.failed() + ", refused " + r.refused() + (r.error() == null ? "" : " (" + r.error() + ")"));
            runs.add(r);
          }
        }
      }
    }
    return runs;
  }

  /** The seed's three tables (TPS, mean, median) plus the failed and refused calls, by concurrency. */
  static String table(List<SeedRun> runs) {
    List<String> frameworks = new ArrayList<>();
    List<String> levels = new ArrayList<>();
    Map<String, SeedRun> at = new LinkedHashMap<>();
    for (SeedRun r : runs) {
      if (!frameworks.contains(r.label("framework"))) {
        frameworks.add(r.label("framework"));
      }
      if (!levels.contains(r.label("concurrency"))) {
        levels.add(r.label("concurrency"));
      }
      at.put(r.label("concurrency") + "|" + r.label("framework"), r);
    }
    levels.sort((a, b) -> Integer.parseInt(b) - Integer.parseInt(a));
    StringBuilder sb = new StringBuilder();
    String[] titles = {"TPS (calls/s)", "Latency: mean time (ms)", "Latency: median time (ms)",
        "Failed / refused calls"};
    for (int k = 0; k < titles.length; k++) {
      List<String> header = new ArrayList<>(List.of("concurrency"));
      frameworks.forEach(f -> header.add(EnumArgs.parse(Framework.class, f, "--frameworks value").label()));
      Table t = new Table(header.toArray(new String[0]));
      for (String c : levels) {
        List<Object> row = new ArrayList<>(List.of(c));
        for (String f : frameworks) {
          SeedRun r = at.get(c + "|" + f);
          row.add(r == null ? "-" : switch (k) {
            case 0 -> Table.num(r.tps(), 0);
            case 1 -> Table.num(r.meanMs(), 2);
            case 2 -> Table.num(r.ms(50), 2);
            default -> Table.count(r.failed()) + " / " + Table.count(r.refused());
          });
        }
        t.row(row.toArray());
      }
      sb.append("### ").append(titles[k]).append("\n\n").append(t).append('\n');
    }
    return sb.toString();
  }
}
