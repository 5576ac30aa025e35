package io.petrel.rpc.benchmarks;

import io.petrel.examples.inventory.Inventory;
import io.petrel.examples.inventory.InventoryRpc;
import io.petrel.examples.inventory.InventoryService;
import io.petrel.examples.inventory.LocalRedis;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.transport.netty.NettyOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.jspecify.annotations.Nullable;

/**
 * The HeTu seed (002): the inventory service of rpc-examples ({@link InventoryService}: Redis through Lettuce)
 * served by Petrel, called by blocking callers: hello_world (no Redis), get (one HGETALL), get_then_update (a
 * WATCH/MULTI/EXEC increment) and get2_update2 (a transfer between two players' hashes), each returning how
 * many times its transaction started again. Tables as the report's: calls per second; mean, k50, k90, k99,
 * count, min, max and median in ms; the distribution of return values; plus the failed and refused calls.
 *
 * <p>The Redis is the one at {@code --redis-url}, or one started here ({@link LocalRedis}: the redis-server
 * 7.0.15 of embedded-redis, else one on the PATH); the Petrel server runs in this JVM on 127.0.0.1.
 */
final class HetuSeed {
  static final String NAME = "hetu";
  static final List<String> BENCHMARKS = List.of("get", "get2_update2", "get_then_update", "hello_world");

  private HetuSeed() {}

  static List<SeedRun> run(SeedArgs args) throws Exception {
    int callers = args.integer("callers", 32, 1);
    int players = args.integer("players", 1000, 2);
    int connections = args.integer("connections", 1, 1);
    int txConnections = args.integer("transaction-connections", 16, 1);
    List<String> benchmarks = List.of(args.string("benchmarks", String.join(",", BENCHMARKS)).split(","));
    Duration warmup = args.seconds("warmup", 5, true);
    Duration measure = args.seconds("duration", 10, false);
    String url = args.string("redis-url", "");
    var io = NettyIo.parse(args.string("io", "auto"));
    args.checkAllUsed(NAME);
    for (String b : benchmarks) {
      if (!BENCHMARKS.contains(b)) {
        throw new IllegalArgumentException("--benchmarks takes " + BENCHMARKS + ": " + b);
      }
    }
    if (!url.isBlank()) {
      System.setProperty("petrel.redis.url", url);
    }
    LocalRedis redis;
    try {
      redis = LocalRedis.start();
    } catch (LocalRedis.Unavailable e) {
      System.out.println("# HeTu seed skipped: " + e.getMessage());
      return List.of();
    }
    List<SeedRun> runs = new ArrayList<>();
    try (redis;
        InventoryService service = new InventoryService(redis.uri(), txConnections);
        RpcServer server = RpcServer.builder().bindAddress("127.0.0.1", 0).addService(InventoryRpc.bind(service))
            .option(NettyOptions.IO_MODE, io).name("seed-inventory").build().start();
        RpcClient client = RpcClient.builder().address("127.0.0.1", server.port())
            .connectionsPerEndpoint(connections).option(NettyOptions.IO_MODE, io).name("seed-hetu").build()
            .start()) {
      System.out.println("# HeTu seed: " + redis.description() + ", Petrel inventory server on 127.0.0.1:"
          + server.port() + " in this JVM; options: " + args.describe());
      for (int p = 0; p < players; p++) {
        service.put(player(p), Map.of("gold", 100, "potion", 10, "sword", 1));
      }
      Inventory inventory = InventoryRpc.stub(client);
      for (String b : benchmarks) {
        Load.BlockingCall call = switch (b) {
          case "hello_world" -> () -> inventory.helloWorld("hetu");
          case "get" -> () -> inventory.get(player(ThreadLocalRandom.current().nextInt(players))).size();
          case "get_then_update" -> () -> inventory.getThenUpdate(
              player(ThreadLocalRandom.current().nextInt(players)), "gold");
          default -> () -> {
            int a = ThreadLocalRandom.current().nextInt(players);
            int c = (a + 1 + ThreadLocalRandom.current().nextInt(players - 1)) % players;
            return inventory.get2Update2(player(a), player(c), "gold");
          };
        };
        Tally tally = new Tally();
        Load.blocking(callers, call, tally, warmup, measure);
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put("benchmark", "benchmark_" + b);
        labels.put("callers", Integer.toString(callers));
        SeedRun r = tally.toRun(NAME, labels, Map.of());
        System.out.println("# " + b + ": " + Table.num(r.tps(), 0) + " calls/s, failed " + r.failed() + ", refused "
            + r.refused() + (r.error() == null ? "" : " (" + r.error() + ")"));
        runs.add(r);
      }
    }
    return runs;
  }

  private static String player(int i) {
    return "player" + i;
  }

  /** The report's three tables, with the failed and refused calls beside the counts. */
  static String table(List<SeedRun> runs) {
    List<SeedRun> sorted = new ArrayList<>(runs);
    sorted.sort((a, b) -> a.label("benchmark").compareTo(b.label("benchmark")));
    Table cps = new Table("", "CPS");
    Table times = new Table("", "Mean", "k50", "k90", "k99", "Count", "Min", "Max", "Median", "Failed", "Refused");
    Table returns = new Table("", "benchmark", "return_value", "count", "percentage");
    int i = 0;
    for (SeedRun r : sorted) {
      String name = r.label("benchmark");
      cps.row(name, Table.num(r.tps(), 2));
      times.row(name, Table.num(r.meanMs(), 2), Table.num(r.ms(50), 2), Table.num(r.ms(90), 2),
          Table.num(r.ms(99), 2), Table.count(r.ok()), Table.num(r.minMs(), 2), Table.num(r.maxMs(), 2),
          Table.num(r.ms(50), 2), Table.count(r.failed()), Table.count(r.refused()));
      long total = r.returns().values().stream().mapToLong(Long::longValue).sum();
      List<String> keys = new ArrayList<>(r.returns().keySet());
      keys.sort((a, b) -> isInt(a) && isInt(b) ? Integer.parseInt(a) - Integer.parseInt(b) : a.compareTo(b));
      for (String k : keys) {
        long n = r.returns().getOrDefault(k, 0L);
        returns.row(i++, name, k, n, Table.num(100.0 * n / total, 2));
      }
    }
    return "Average CPS (Calls Per Second) per Function:\n\n" + cps
        + "\nFunction Execution Time Statistics (ms):\n\n" + times
        + "\nReturn Value Distribution Statistics (get: items in the inventory; updates: retries; hello_world:"
        + " the reply):\n\n" + returns;
  }

  private static boolean isInt(String s) {
    return s.matches("-?\\d{1,9}");
  }
}
