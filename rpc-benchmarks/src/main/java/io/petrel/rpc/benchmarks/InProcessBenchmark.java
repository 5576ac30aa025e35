package io.petrel.rpc.benchmarks;

import io.petrel.rpc.CallOptions;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.RpcServerBuilder;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.benchmarks.proto.BenchmarkMessage;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * What a call through the in-process transport costs against the same echo done as a plain Java method call,
 * in nanoseconds per call, with the project's standard payload (BenchmarkMessage, 581 bytes encoded; the echo
 * answers it with field1 = "OK" and field2 = 100, {@link Messages#reply}).
 *
 * <ul>
 *   <li>{@code plainCall}: the echo as a method call on the caller's thread, nothing marshalled.
 *   <li>{@code plainCallWithMarshalling}: the same, plus the bytes work a call cannot avoid: the request
 *       encoded and parsed, the reply encoded and parsed.
 *   <li>{@code inProcessCall}: a blocking {@code client.unaryCall} through the in-process transport; with
 *       {@code executor=direct} the handler runs on the caller's thread (what the framework adds to the bytes
 *       work), with {@code executor=pool} on the server's business pool (plus two thread hand-offs).
 * </ul>
 *
 * <pre>
 * java -jar benchmarks.jar InProcessBenchmark -wi 3 -w 2 -i 5 -r 2 -f 1
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class InProcessBenchmark {

  /** The request every call sends. */
  @State(Scope.Thread)
  public static class Request {
    final BenchmarkMessage message = Messages.request();
    /** The echo as an object to call, as a handler is. */
    final UnaryOperator<BenchmarkMessage> echo = Messages::reply;
  }

  /** An in-process server serving the echo, and its client. */
  @State(Scope.Benchmark)
  public static class InProcess {
    @Param({"direct", "pool"})
    public String executor;

    RpcServer server;
    RpcClient client;

    @Setup(Level.Trial)
    public void start() throws Exception {
      String name = "in-process-benchmark-" + System.nanoTime();
      RpcServerBuilder b = RpcServer.builder().inProcess(name)
          .addService(ServiceDefinition.builder(Messages.SERVICE).unary(Messages.ECHO, Messages::reply).build());
      if ("direct".equals(executor)) {
        b.directExecutor();
      }
      server = b.build().start();
      client = RpcClient.builder().inProcess(name).build().start();
    }

    @TearDown(Level.Trial)
    public void stop() {
      client.close();
      server.close();
    }
  }

  @Benchmark
  public BenchmarkMessage plainCall(Request r) {
    return r.echo.apply(r.message);
  }

  @Benchmark
  public BenchmarkMessage plainCallWithMarshalling(Request r) throws Exception {
    BenchmarkMessage received = BenchmarkMessage.parseFrom(r.message.toByteArray());
    return BenchmarkMessage.parseFrom(r.echo.apply(received).toByteArray());
  }

  @Benchmark
  public BenchmarkMessage inProcessCall(InProcess s, Request r) {
    return s.client.unaryCall(Messages.ECHO, r.message, CallOptions.DEFAULT);
  }
}
