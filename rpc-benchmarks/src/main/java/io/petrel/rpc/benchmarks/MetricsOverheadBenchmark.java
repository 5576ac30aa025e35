package io.petrel.rpc.benchmarks;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcClientBuilder;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.RpcServerBuilder;
import io.petrel.rpc.benchmarks.proto.BenchmarkMessage;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
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
 * Petrel with Micrometer metrics on (server and client recording into a registry) against off, same server
 * mode, same payload (BenchmarkMessage), 16 blocking callers over loopback in one JVM. The ratio of the two
 * scores is the cost of metrics on the hot path.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 4, time = 5)
@Measurement(iterations = 5, time = 5)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Threads(16)
@State(Scope.Benchmark)
public class MetricsOverheadBenchmark {
  @Param({"off", "on"})
  public String metrics;

  @Param({"pool"})
  public String executor;

  private RpcServer server;
  private RpcClient client;
  private BenchmarkMessage request;

  @Setup
  public void setUp() throws Exception {
    request = Messages.request();
    RpcServerBuilder sb = RpcServer.builder().bindAddress("127.0.0.1", 0)
        .addService(EchoServiceRpc.bind(Messages::reply));
    if ("direct".equals(executor)) {
      sb.directExecutor();
    }
    if ("on".equals(metrics)) {
      sb.meterRegistry(new SimpleMeterRegistry());
    }
    server = sb.build().start();
    RpcClientBuilder cb = RpcClient.builder().address("127.0.0.1", server.port());
    if ("on".equals(metrics)) {
      cb.meterRegistry(new SimpleMeterRegistry());
    }
    client = cb.build().start();
  }

  @TearDown
  public void tearDown() {
    client.close();
    server.close();
  }

  @Benchmark
  public BenchmarkMessage call() {
    return client.unaryCall(EchoServiceRpc.METHOD_ECHO, request, CallOptions.DEFAULT);
  }
}
