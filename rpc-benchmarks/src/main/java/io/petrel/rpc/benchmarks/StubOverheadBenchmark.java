package io.petrel.rpc.benchmarks;

import io.petrel.rpc.CallOptions;
import io.petrel.rpc.Deadline;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.Status;
import io.petrel.rpc.benchmarks.proto.BenchmarkMessage;
import io.petrel.rpc.internal.ClientCall;
import io.petrel.rpc.spi.ClientConfig;
import io.petrel.rpc.spi.ClientStream;
import io.petrel.rpc.spi.ClientStreamListener;
import io.petrel.rpc.spi.Connection;
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
import org.openjdk.jmh.annotations.Warmup;
import org.jspecify.annotations.Nullable;

/**
 * The per-call cost of a generated stub ({@code EchoServiceRpc.stub(client).echo(msg)}) against the generic
 * call API it delegates to ({@code client.unaryCall(EchoServiceRpc.METHOD_ECHO, msg, CallOptions.DEFAULT)}).
 *
 * <p>{@code transport=answering} isolates the client-side code: an {@link RpcClient} whose transport answers
 * at once with a prepared reply, so the score is the stub and call-API path alone (nanoseconds per call). (It
 * is not the in-process transport, which marshals and serves like a server: see {@link InProcessBenchmark}.)
 * {@code transport=loopback} is a real Petrel server (direct mode) on 127.0.0.1 in the same JVM.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 3)
@Measurement(iterations = 5, time = 3)
@Fork(1)
@State(Scope.Benchmark)
public class StubOverheadBenchmark {
  @Param({"answering", "loopback"})
  public String transport;

  private @Nullable RpcServer server;
  private RpcClient client;
  private EchoService stub;
  private BenchmarkMessage request;

  @Setup
  public void setUp() throws Exception {
    request = Messages.request();
    BenchmarkMessage reply = Messages.reply(request);
    if ("loopback".equals(transport)) {
      server = RpcServer.builder().bindAddress("127.0.0.1", 0).directExecutor()
          .addService(EchoServiceRpc.bind(Messages::reply)).build().start();
      client = RpcClient.builder().address("127.0.0.1", server.port()).build().start();
    } else {
      ClientConfig config = ClientConfig.newBuilder().target("answering").name("answering").build();
      client = new io.petrel.rpc.internal.ClientChannel(config, false, rt -> new AnsweringTransport(reply));
    }
    stub = EchoServiceRpc.stub(client);
  }

  @TearDown
  public void tearDown() {
    client.close();
    if (server != null) {
      server.close();
    }
  }

  @Benchmark
  public BenchmarkMessage genericApi() {
    return client.unaryCall(EchoServiceRpc.METHOD_ECHO, request, CallOptions.DEFAULT);
  }

  @Benchmark
  public BenchmarkMessage generatedStub() {
    return stub.echo(request);
  }

  /**
   * A transport that answers every call at once with one prepared reply: its stream completes the core's call
   * with it when the request ends, with no marshalling either way.
   */
  static final class AnsweringTransport implements io.petrel.rpc.spi.ClientTransport {
    private final Object reply;

    AnsweringTransport(Object reply) {
      this.reply = reply;
    }

    @Override
    public ClientStream newStream(@Nullable Connection connection, MethodDescriptor<?, ?> method,
        CallOptions options, @Nullable Deadline deadline, ClientStreamListener listener) {
      @SuppressWarnings("unchecked")
      ClientCall<Object> call = (ClientCall<Object>) listener;
      return new ClientStream() {
        @Override
        public int sendMessage(@Nullable Object message) {
          return 0;
        }

        @Override
        public void halfClose() {
          call.complete(reply); // answered at once, through the core's call runtime
        }

        @Override
        public void cancel(Status status) {}

        @Override
        public String peer() {
          return "answering";
        }
      };
    }

    @Override
    public void terminate(Runnable done) {
      done.run();
    }
  }
}
