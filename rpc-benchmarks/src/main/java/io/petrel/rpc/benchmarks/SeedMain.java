package io.petrel.rpc.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The seed reports' workloads ({@code java -jar benchmarks.jar seed NAME [--option value ...]}): each runs its
 * cases, prints them as a Markdown table in the report's own form (with the failed and refused calls), and with
 * {@code --json FILE} writes the raw results, which {@code seed merge NAME FILE...} adds up across client
 * machines into one table. See docs/benchmarks.md for every workload's options.
 */
public final class SeedMain {
  static final String USAGE = """
      usage: java -jar benchmarks.jar seed WORKLOAD [--option value ...]
        tars        Tars (000): 4 B and 1 KiB echoes, client processes x threads, TPS, cost, server CPU, traffic
        tarantool   Tarantool client (001): N objects of 200 B stored by 1-8 callers on their own connections
        hetu        HeTu (002): an inventory service on Redis: hello_world, get, get_then_update, get2_update2
        rpcx        rpcx (003): BenchmarkMessage at 100-5000 concurrent callers, Petrel beside gRPC-java
        trpc        tRPC-Go (004): 122 B / 27 B echo over 100 connections, rate at which p99 reaches 10 ms
        merge       merge WORKLOAD FILE...: add up --json results of concurrent clients into one table
      every workload: --json FILE (raw results), and --host H --port P (a BenchmarkServer's control port;
      default: start one on loopback; hetu: --redis-url instead); options are listed in docs/benchmarks.md
      """;

  private SeedMain() {}

  public static void main(String[] args) throws Exception {
    int rc = run(List.of(args));
    if (rc != 0) {
      System.exit(rc);
    }
  }

  /** Runs {@code seed ARGS...} (without the word "seed"); returns the exit status. */
  static int run(List<String> args) throws Exception {
    if (args.isEmpty() || args.get(0).equals("-h") || args.get(0).equals("--help")) {
      System.err.print(USAGE);
      return args.isEmpty() ? 2 : 0;
    }
    String name = args.get(0);
    List<String> rest = new ArrayList<>(args.subList(1, args.size()));
    try {
      if (name.equals("merge")) {
        return merge(rest);
      }
      if (name.equals("tars-worker")) {
        TarsSeed.worker(new SeedArgs(rest));
        return 0;
      }
      String json = option(rest, "--json");
      SeedArgs a = new SeedArgs(rest);
      Instant started = Instant.now();
      List<SeedRun> runs = switch (name) {
        case TarsSeed.NAME -> TarsSeed.run(a);
        case TarantoolSeed.NAME -> TarantoolSeed.run(a);
        case HetuSeed.NAME -> HetuSeed.run(a);
        case RpcxSeed.NAME -> RpcxSeed.run(a);
        case TrpcSeed.NAME -> TrpcSeed.run(a);
        default -> throw new IllegalArgumentException("unknown workload " + name + "\n" + USAGE);
      };
      System.out.println();
      System.out.println("## " + name + " (" + started + " to " + Instant.now() + ", " + host() + ")");
      System.out.println();
      System.out.print(table(name, runs));
      if (json != null) {
        Files.writeString(Path.of(json), SeedRun.toJson(runs), StandardCharsets.UTF_8);
        System.out.println("\nraw results: " + json);
      }
      return 0;
    } catch (IllegalArgumentException e) {
      System.err.println(e.getMessage());
      return 2;
    } catch (java.net.ConnectException e) {
      System.err.println(e.getMessage()); // says which server was not there and what to do
      return 1;
    }
  }

  /** The table of {@code runs} in workload {@code name}'s form. */
  static String table(String name, List<SeedRun> runs) {
    return switch (name) {
      case TarsSeed.NAME -> TarsSeed.table(runs);
      case TarantoolSeed.NAME -> TarantoolSeed.table(runs);
      case HetuSeed.NAME -> HetuSeed.table(runs);
      case RpcxSeed.NAME -> RpcxSeed.table(runs);
      case TrpcSeed.NAME -> TrpcSeed.table(runs);
      default -> throw new IllegalArgumentException("unknown workload " + name + "\n" + USAGE);
    };
  }

  private static int merge(List<String> args) throws IOException {
    if (args.size() < 2) {
      throw new IllegalArgumentException("usage: seed merge WORKLOAD FILE... (files written with --json)");
    }
    List<SeedRun> all = new ArrayList<>();
    for (String f : args.subList(1, args.size())) {
      all.addAll(SeedRun.parseAll(Files.readString(Path.of(f), StandardCharsets.UTF_8)));
    }
    System.out.println("## " + args.get(0) + ", " + (args.size() - 1) + " clients merged: " + args.subList(1,
        args.size()));
    System.out.println();
    System.out.print(table(args.get(0), SeedRun.mergeAll(all)));
    return 0;
  }

  /** Removes {@code --name value} from {@code args}; returns the value or null. */
  private static @Nullable String option(List<String> args, String name) {
    int i = args.indexOf(name);
    if (i < 0) {
      return null;
    }
    if (i + 1 >= args.size()) {
      throw new IllegalArgumentException(name + " needs a value");
    }
    String v = args.remove(i + 1);
    args.remove(i);
    return v;
  }

  private static String host() {
    return Runtime.getRuntime().availableProcessors() + " processors, Java " + Runtime.version() + ", "
        + System.getProperty("os.name") + " " + System.getProperty("os.version");
  }
}
