package io.petrel.rpc.benchmarks;

import io.petrel.rpc.CallOptions;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.transport.netty.IoMode;
import io.petrel.rpc.transport.netty.NettyOptions;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The Tarantool client seed (001): store N objects of 200 bytes (1k, 10k, 100k, 1M) into the benchmark server's
 * in-memory store with 1, 2, 4 and 8 callers, each on its own connection (its own client). The clock starts
 * before the callers are created: each caller connects, stores its share one blocking call after another, and
 * closes; the time ends when the last is done. The server's store is emptied before each case and counted
 * after it: the table shows how many objects the server holds.
 */
final class TarantoolSeed {
  static final String NAME = "tarantool";
  /** The size of every stored object, as in the report. */
  static final int OBJECT_BYTES = 200;

  private TarantoolSeed() {}

  static List<SeedRun> run(SeedArgs args) throws Exception {
    List<Integer> objects = args.integers("objects", "1000,10000,100000", 1);
    List<Integer> callers = args.integers("callers", "1,2,4,8", 1);
    Framework f = EnumArgs.parse(Framework.class, args.string("framework", "petrel"), "--framework");
    if (f != Framework.PETREL && f != Framework.PETREL_DIRECT) {
      throw new IllegalArgumentException("--framework: the store is served by petrel and petrel_direct only: " + f);
    }
    IoMode io = NettyIo.parse(args.string("io", "auto"));
    List<SeedRun> runs = new ArrayList<>();
    try (SeedServer server = SeedServer.open(args, "--frameworks petrel,petrel_direct")) {
      args.checkAllUsed(NAME);
      server.requireServed(List.of(f));
      System.out.println("# Tarantool seed against " + server.description() + "; options: " + args.describe());
      String host = server.endpoints().host();
      int port = server.endpoints().port(f);
      try (RpcClient admin = client(host, port, io)) {
        for (int c : callers) {
          for (int n : objects) {
            admin.unaryCall(Messages.STORE_CLEAR, new byte[0], CallOptions.DEFAULT);
            SeedRun r = runOne(host, port, io, f, n, c);
            long stored = ByteBuffer.wrap(admin.unaryCall(Messages.STORE_SIZE, new byte[0], CallOptions.DEFAULT))
                .getLong();
            Map<String, Long> counters = new LinkedHashMap<>(r.counters());
            counters.put("stored", stored);
            r = new SeedRun(NAME, r.labels(), r.ok(), r.failed(), r.refused(), r.seconds(), r.latency(), counters,
                r.returns(), r.error());
            System.out.println("# " + n + " objects, " + c + " callers: " + Table.num(r.seconds(), 3) + " s, stored "
                + stored + ", failed " + r.failed() + ", refused " + r.refused()
                + (r.error() == null ? "" : " (" + r.error() + ")"));
            runs.add(r);
          }
        }
        admin.unaryCall(Messages.STORE_CLEAR, new byte[0], CallOptions.DEFAULT);
      }
    }
    return runs;
  }

  private static SeedRun runOne(String host, int port, IoMode io, Framework f, int n, int callers)
      throws InterruptedException {
    Tally tally = new Tally();
    List<Thread> threads = new ArrayList<>();
    tally.begin();
    for (int i = 0; i < callers; i++) {
      int from = (int) ((long) n * i / callers);
      int to = (int) ((long) n * (i + 1) / callers);
      Thread t = new Thread(() -> store(host, port, io, from, to, tally), "seed-store-" + i);
      threads.add(t);
      t.start(); // created and started one after another, as the report's goroutines
    }
    for (Thread t : threads) {
      t.join();
    }
    tally.end();
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put("framework", f.key());
    labels.put("objects", Integer.toString(n));
    labels.put("callers", Integer.toString(callers));
    return tally.toRun(NAME, labels, Map.of());
  }

  /** One caller: its own client (one connection), objects {@code from} to {@code to - 1}. */
  private static void store(String host, int port, IoMode io, int from, int to, Tally tally) {
    RpcClient client;
    try {
      client = client(host, port, io);
    } catch (RuntimeException e) {
      for (int k = from; k < to; k++) {
        tally.failure(e);
      }
      return;
    }
    try {
      byte[] request = new byte[Long.BYTES + OBJECT_BYTES];
      for (int k = 0; k < OBJECT_BYTES; k++) {
        request[Long.BYTES + k] = (byte) ('a' + k % 26);
      }
      ByteBuffer key = ByteBuffer.wrap(request);
      for (int k = from; k < to; k++) {
        key.putLong(0, k);
        long t0 = System.nanoTime();
        try {
          client.unaryCall(Messages.STORE_PUT, request, CallOptions.DEFAULT);
          tally.success(System.nanoTime() - t0, null);
        } catch (RuntimeException e) {
          tally.failure(e);
        }
      }
    } finally {
      client.close();
    }
  }

  private static RpcClient client(String host, int port, IoMode io) {
    RpcClient c = RpcClient.builder().address(host, port).connectionsPerEndpoint(1)
        .option(NettyOptions.IO_MODE, io).name("seed-store").build();
    try {
      return c.start();
    } catch (RuntimeException e) {
      c.shutdownNow();
      throw e;
    }
  }

  /** The seed's table, with the objects the server holds afterwards and the failed and refused calls. */
  static String table(List<SeedRun> runs) {
    Table t = new Table("Amount of objects", "Callers (connections)", "Time taken in seconds",
        "Items stored per second", "Items stored per second per caller", "Objects in the server's store",
        "Failed", "Refused");
    for (SeedRun r : runs) {
      int callers = Integer.parseInt(r.label("callers"));
      double perSecond = r.ok() / r.seconds();
      t.row(Table.count(Long.parseLong(r.label("objects"))), callers, Table.num(r.seconds(), 3) + " s",
          Table.num(perSecond, 0), Table.num(perSecond / callers, 0), Table.count(r.counter("stored")),
          Table.count(r.failed()), Table.count(r.refused()));
    }
    return t.toString();
  }
}
