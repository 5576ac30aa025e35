package io.petrel.rpc.benchmarks;

import io.petrel.rpc.CallOptions;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.benchmarks.proto.BenchmarkMessage;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One Petrel client over {@code servers} benchmark servers (each in its own JVM on loopback), with a static
 * target and the client's load balancer: blocking callers, BenchmarkMessage. Beside calls/s it prints, at the
 * end of each trial, how the calls split between the servers (from their control ports), as
 * {@code multi-server split: ...}.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 5, time = 5)
@Measurement(iterations = 5, time = 5)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Threads(16)
@State(Scope.Benchmark)
public class MultiServerBenchmark {
  /** Benchmark servers behind the one client. */
  @Param({"1", "2"})
  public int servers;

  /** PETREL (business pool) or PETREL_DIRECT. */
  @Param({"PETREL_DIRECT"})
  public Framework framework;

  /** The client's policy: least_pending (the default) or round_robin. */
  @Param({"least_pending"})
  public String loadBalancer;

  /** JVM options of each server. */
  @Param({"-Xms512m -Xmx512m"})
  public String serverJvmArgs;

  private final List<ServerProcess> processes = new ArrayList<>();
  private final List<Long> callsAtStart = new ArrayList<>();
  private RpcClient client;
  private final BenchmarkMessage message = Messages.request();

  @Setup(Level.Trial)
  public void start() throws Exception {
    if (framework != Framework.PETREL && framework != Framework.PETREL_DIRECT) {
      throw new IllegalArgumentException("MultiServerBenchmark measures Petrel only: " + framework);
    }
    StringBuilder target = new StringBuilder("static://");
    for (int i = 0; i < servers; i++) {
      ServerOptions options = ServerOptions.defaults().with(null, null, null, null, null, null, null,
          EnumSet.of(framework), null);
      ServerProcess p = ServerProcess.start(options, List.of(serverJvmArgs.trim().split("\\s+")));
      processes.add(p);
      target.append(i == 0 ? "" : ",").append("127.0.0.1:").append(p.endpoints().port(framework));
      callsAtStart.add(p.endpoints().sample().calls());
    }
    client = RpcClient.builder().target(target.toString()).loadBalancer(loadBalancer)
        .name("bench-multi-" + framework.key()).build().start();
    verify(call());
  }

  @Benchmark
  public BenchmarkMessage call() {
    return client.unaryCall(Messages.ECHO, message, CallOptions.DEFAULT);
  }

  private static void verify(BenchmarkMessage reply) {
    if (!Messages.isOk(reply)) {
      throw new IllegalStateException("reply field1 is not OK: " + reply.getField1());
    }
  }

  @TearDown(Level.Trial)
  public void stop() throws Exception {
    try {
      StringBuilder split = new StringBuilder();
      long total = 0;
      long[] served = new long[processes.size()];
      for (int i = 0; i < processes.size(); i++) {
        served[i] = processes.get(i).endpoints().sample().calls() - callsAtStart.get(i);
        total += served[i];
      }
      for (int i = 0; i < served.length; i++) {
        split.append(i == 0 ? "" : ", ").append("server ").append(i + 1).append(' ').append(served[i])
            .append(String.format(Locale.ROOT, " (%.1f%%)", 100.0 * served[i] / Math.max(1, total)));
      }
      System.out.println("multi-server split: servers=" + servers + " " + framework.key() + " " + loadBalancer
          + ": " + split);
    } finally {
      if (client != null) {
        client.close();
      }
      for (ServerProcess p : processes) {
        p.close();
      }
      processes.clear();
      callsAtStart.clear();
    }
  }
}
