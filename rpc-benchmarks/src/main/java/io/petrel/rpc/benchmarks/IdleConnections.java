package io.petrel.rpc.benchmarks;

import io.petrel.rpc.transport.netty.IoMode;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * Memory per idle connection, Petrel beside gRPC-java in one run: a {@link BenchmarkServer} in its own JVM on
 * loopback serves both; for each framework this JVM opens N connections in two halves (a Petrel client with N/2
 * connections to the endpoint, then another; N/2 gRPC channels, then N/2 more), makes one call on each so that
 * every connection is set up on both sides, and asks the server for its heap (after a full collection) and direct
 * memory before, after the first half and after the second. "average" is the whole difference over N (fixed
 * costs such as buffer pools' first chunks included), "marginal" the second half's over N/2: what one more idle
 * connection costs. This JVM's own differences are the client's.
 *
 * <pre>
 * java -cp benchmarks.jar io.petrel.rpc.benchmarks.IdleConnections [connections (10000)] [io: auto|epoll|nio]
 * </pre>
 *
 * Each side needs N open files plus its own (ulimit -n): the server's JVM gets as many as this one.
 */
public final class IdleConnections {
  private IdleConnections() {}

  /** One framework's figures, in bytes per connection. */
  record Row(Framework framework, int connections, String kind, double serverHeap, double serverDirect,
      double clientHeap, double clientDirect, long failed) {}

  /** One call on each of the client's {@code n} connections (its calls go round robin); returns the failures. */
  private static long callEach(BenchClient client, int n) {
    long failed = 0;
    for (int i = 0; i < n; i++) {
      try {
        client.verify(client.call());
      } catch (Exception e) {
        failed++;
      }
    }
    return failed;
  }

  public static void main(String[] args) throws Exception {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
    IoMode io = args.length > 1 ? NettyIo.parse(args[1]) : IoMode.AUTO;
    List<Row> rows = measure(n, io, List.of(Framework.PETREL, Framework.GRPC));
    System.out.print(table(rows));
  }

  static List<Row> measure(int n, IoMode io, List<Framework> frameworks) throws Exception {
    ServerOptions options = ServerOptions.defaults().with(null, null, null, null, null, null, io,
        EnumSet.copyOf(frameworks), null);
    List<Row> rows = new ArrayList<>();
    try (ServerProcess server = ServerProcess.start(options, List.of("-Xmx4g"))) {
      Endpoints endpoints = server.endpoints();
      for (Framework f : frameworks) {
        // Two clients of n/2 connections each: memory is read before, after the first half and after the second.
        // The first half pays the fixed costs (buffer pools' first chunks, thread caches, classes); the second
        // half's difference, over n/2, is what one more idle connection costs.
        int half = n / 2;
        long[] s0 = serverMemory(endpoints);
        long[] c0 = clientMemory();
        long failed = 0;
        try (BenchClient first = BenchClient.connect(f, Payload.MESSAGE, endpoints, half, io)) {
          failed += callEach(first, half);
          long[] s1 = serverMemory(endpoints);
          long[] c1 = clientMemory();
          try (BenchClient second = BenchClient.connect(f, Payload.MESSAGE, endpoints, half, io)) {
            failed += callEach(second, half);
            long[] s2 = serverMemory(endpoints);
            long[] c2 = clientMemory();
            rows.add(new Row(f, 2 * half, "average", (s2[0] - s0[0]) / (2.0 * half),
                (s2[1] - s0[1]) / (2.0 * half), (c2[0] - c0[0]) / (2.0 * half), (c2[1] - c0[1]) / (2.0 * half),
                failed));
            rows.add(new Row(f, 2 * half, "marginal", (s2[0] - s1[0]) / (double) half,
                (s2[1] - s1[1]) / (double) half, (c2[0] - c1[0]) / (double) half, (c2[1] - c1[1]) / (double) half,
                failed));
          }
        }
      }
    }
    return rows;
  }

  private static long[] serverMemory(Endpoints endpoints) throws java.io.IOException {
    String line = ControlServer.ask(endpoints.host(), endpoints.controlPort(), "MEM");
    if (!line.startsWith("heap=")) {
      throw new IllegalStateException("bad MEM reply from the benchmark server: " + line);
    }
    String[] parts = line.split(" ");
    return new long[] {Long.parseLong(parts[0].substring(5)), Long.parseLong(parts[1].substring(7))};
  }

  private static long[] clientMemory() {
    System.gc();
    return new long[] {ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed(),
        ControlServer.directMemory()};
  }

  /** The table, with Petrel's share of gRPC-java's figures when both were measured. */
  static String table(List<Row> rows) {
    StringBuilder sb = new StringBuilder();
    sb.append(String.format(Locale.ROOT, "| framework | idle connections | per connection | failed calls | server heap |"
        + " server direct | server total | client heap | client direct | client total |%n"));
    sb.append("|---|---|---|---|---|---|---|---|---|---|\n");
    for (Row r : rows) {
      sb.append(String.format(Locale.ROOT, "| %s | %d | %s | %d | %s | %s | %s | %s | %s | %s |%n",
          r.framework().label(), r.connections(), r.kind(), r.failed(), kib(r.serverHeap()), kib(r.serverDirect()),
          kib(r.serverHeap() + r.serverDirect()), kib(r.clientHeap()), kib(r.clientDirect()),
          kib(r.clientHeap() + r.clientDirect())));
    }
    for (String kind : new String[] {"average", "marginal"}) {
      Row p = find(rows, Framework.PETREL, kind);
      Row g = find(rows, Framework.GRPC, kind);
      if (p != null && g != null) {
        sb.append(String.format(Locale.ROOT, "Petrel / gRPC-java, heap + direct per connection (%s): server %.2f,"
                + " client %.2f%n", kind, (p.serverHeap() + p.serverDirect()) / (g.serverHeap() + g.serverDirect()),
            (p.clientHeap() + p.clientDirect()) / (g.clientHeap() + g.clientDirect())));
      }
    }
    return sb.toString();
  }

  private static @Nullable Row find(List<Row> rows, Framework f, String kind) {
    for (Row r : rows) {
      if (r.framework() == f && r.kind().equals(kind)) {
        return r;
      }
    }
    return null;
  }

  private static String kib(double bytes) {
    return String.format(Locale.ROOT, "%.1f KiB", bytes / 1024);
  }
}
