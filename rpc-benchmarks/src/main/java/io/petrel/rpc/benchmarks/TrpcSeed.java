package io.petrel.rpc.benchmarks;

import io.petrel.rpc.CallOptions;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.transport.netty.NettyOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The tRPC-Go seed (004): an echo of a 122-byte request answered with 27 bytes, over 100 connections, in
 * synchronous mode (blocking callers) and asynchronous mode (futures); a rate search finds the highest rate at
 * which the p99 latency stays within 10 ms. Calls are sent on an open-loop schedule and each latency is counted
 * from when its call was due, so a stall counts against every call it delays (no coordinated omission).
 *
 * <p>The search doubles the rate from {@code --start-rate} until p99 exceeds the target (or calls fail or are
 * refused, or fewer than 95% of the scheduled calls are done), or halves it (at most six times) while the start
 * rate is over; then it halves the interval between the last good and the first bad rate {@code --bisect} times. Every step is printed; the table gives the best rate found.
 */
final class TrpcSeed {
  static final String NAME = "trpc";
  static final int REQUEST_BYTES = 122;

  private TrpcSeed() {}

  static List<SeedRun> run(SeedArgs args) throws Exception {
    Framework f = EnumArgs.parse(Framework.class, args.string("framework", "petrel"), "--framework");
    if (f != Framework.PETREL && f != Framework.PETREL_DIRECT) {
      throw new IllegalArgumentException("--framework: the tRPC echo is served by petrel and petrel_direct: " + f);
    }
    int connections = args.integer("connections", 100, 1);
    List<String> modes = Arrays.asList(args.string("modes", "sync,async").split(","));
    int syncThreads = args.integer("sync-threads", 100, 1);
    double targetMs = args.integer("p99-ms", 10, 1);
    int startRate = args.integer("start-rate", 5000, 1);
    int maxRate = args.integer("max-rate", 2_000_000, 1);
    int bisect = args.integer("bisect", 3, 0);
    Duration warmup = args.seconds("warmup", 3, true);
    Duration measure = args.seconds("duration", 5, false);
    Duration firstWarmup = args.seconds("first-warmup", 10, true);
    var io = NettyIo.parse(args.string("io", "auto"));
    if (startRate > maxRate) {
      throw new IllegalArgumentException("--start-rate " + startRate + " is above --max-rate " + maxRate
          + ": no step would run; lower --start-rate or raise --max-rate");
    }
    for (String m : modes) {
      if (!m.equals("sync") && !m.equals("async")) {
        throw new IllegalArgumentException("--modes takes sync and/or async: " + m);
      }
    }
    byte[] request = new byte[REQUEST_BYTES];
    Arrays.fill(request, (byte) 'h');
    List<SeedRun> best = new ArrayList<>();
    try (SeedServer server = SeedServer.open(args, "--frameworks petrel,petrel_direct")) {
      args.checkAllUsed(NAME);
      server.requireServed(List.of(f));
      System.out.println("# tRPC-Go seed against " + server.description() + "; options: " + args.describe());
      RpcClient client = RpcClient.builder().address(server.endpoints().host(), server.endpoints().port(f))
          .connectionsPerEndpoint(connections).option(NettyOptions.IO_MODE, io).name("seed-trpc").build();
      try (RpcClient c = client.start()) {
        Load.BlockingCall blocking = () -> check(c.unaryCall(Messages.HELLO, request, CallOptions.DEFAULT));
        java.util.function.Supplier<java.util.concurrent.CompletableFuture<?>> async =
            () -> c.unaryCallAsync(Messages.HELLO, request, CallOptions.DEFAULT).thenApply(TrpcSeed::check);
        check(c.unaryCall(Messages.HELLO, request, CallOptions.DEFAULT));
        boolean first = true;
        for (String mode : modes) {
          int threads = mode.equals("sync") ? syncThreads : 0;
          SeedRun good = null;
          SeedRun bad = null;
          double rate = startRate;
          while (rate <= maxRate) {
            SeedRun r = step(f, mode, connections, rate, threads, blocking, async,
                first ? firstWarmup.plus(warmup) : warmup, measure, targetMs);
            first = false;
            if (within(r, rate, targetMs)) {
              good = r;
              if (bad != null) {
                break; // coming down from a start rate that was over: this is the good end
              }
              rate *= 2;
            } else {
              bad = r;
              if (good != null || rate / 2 < startRate / 64.0) {
                break;
              }
              rate /= 2; // over at the start rate: come down (at most six halvings)
            }
          }
          for (int i = 0; i < bisect && good != null && bad != null; i++) {
            double mid = (rate(good) + rate(bad)) / 2;
            SeedRun r = step(f, mode, connections, mid, threads, blocking, async, warmup, measure, targetMs);
            if (within(r, mid, targetMs)) {
              good = r;
            } else {
              bad = r;
            }
          }
          if (good == null) {
            System.out.println("# " + mode + ": p99 was over " + targetMs + " ms even at " + Math.round(rate)
                + " calls/s; the table shows that step");
            good = bad;
          } else if (bad == null) {
            System.out.println("# " + mode + ": p99 stayed within " + targetMs + " ms up to " + Math.round(rate(good))
                + " calls/s, the last step under --max-rate " + maxRate + "; the table shows that step, and the"
                + " rate at which p99 reaches " + targetMs + " ms is higher");
          }
          if (good != null) {
            best.add(good);
          }
        }
      }
    }
    return best;
  }

  private static SeedRun step(Framework f, String mode, int connections, double rate, int threads,
      Load.BlockingCall blocking, java.util.function.Supplier<java.util.concurrent.CompletableFuture<?>> async,
      Duration warmup, Duration measure, double targetMs) throws InterruptedException {
    Tally tally = new Tally();
    Load.openLoop(rate, threads, blocking, async, tally, warmup, measure);
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put("framework", f.key());
    labels.put("mode", mode);
    labels.put("connections", Integer.toString(connections));
    labels.put("rate", Long.toString(Math.round(rate)));
    SeedRun r = tally.toRun(NAME, labels, Map.of("machines", 1L));
    System.out.println("# " + mode + " at " + Math.round(rate) + " calls/s: done " + Table.num(r.tps(), 0)
        + "/s, p99 " + Table.num(r.ms(99), 2) + " ms, failed " + r.failed() + ", refused " + r.refused()
        + (within(r, rate, targetMs) ? " (within)" : " (over)") + (r.error() == null ? "" : " (" + r.error() + ")"));
    return r;
  }

  private static double rate(SeedRun r) {
    return Double.parseDouble(r.label("rate"));
  }

  /** p99 within the target, nothing failed or refused, and the calls done kept up with the schedule (95%). */
  private static boolean within(SeedRun r, double rate, double targetMs) {
    return r.ok() > 0 && r.ms(99) <= targetMs && r.failed() == 0 && r.refused() == 0 && r.tps() >= 0.95 * rate;
  }

  private static @Nullable Object check(byte[] reply) {
    if (reply.length != Messages.HELLO_REPLY.length) {
      throw new IllegalStateException("hello reply of " + reply.length + " bytes, expected "
          + Messages.HELLO_REPLY.length);
    }
    return null;
  }

  /** The seed's table: the best rate of each mode, with its latencies and the failed and refused calls. */
  static String table(List<SeedRun> runs) {
    Table t = new Table("Mode", "Connections", "QPS", "Average latency (ms)", "P90 latency (ms)",
        "P99 latency (ms)", "P999 latency (ms)", "Failed", "Refused");
    for (SeedRun r : runs) {
      t.row(r.label("mode").equals("sync") ? "Synchronous" : "Asynchronous", r.label("connections"),
          Table.num(r.tps(), 0), Table.num(r.meanMs(), 2), Table.num(r.ms(90), 2), Table.num(r.ms(99), 2),
          Table.num(r.ms(99.9), 2), Table.count(r.failed()), Table.count(r.refused()));
    }
    return t.toString();
  }
}
