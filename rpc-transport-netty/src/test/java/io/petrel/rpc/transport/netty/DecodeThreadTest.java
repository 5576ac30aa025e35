package io.petrel.rpc.transport.netty;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.StringValue;
import io.netty.buffer.ByteBuf;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.ClientInterceptor;
import io.petrel.rpc.Marshaller;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.marshal.ProtobufMarshaller;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Where a response is decoded: a blocking call decodes on the calling thread (the connection's event loop
 * only copies the bytes), an async call on the event loop, or on the executor of the client or the call.
 */
class DecodeThreadTest extends TransportFixture {

  /** The echo method as the client sees it, with a response marshaller that notes the decoding thread. */
  private static final class Probe {
    final AtomicReference<Thread> decodedOn = new AtomicReference<>();
    final MethodDescriptor<StringValue, StringValue> echo;

    Probe() {
      Marshaller<StringValue> real = ProtobufMarshaller.of(StringValue.getDefaultInstance());
      Marshaller<StringValue> noting = new Marshaller<>() {
        @Override
        public int serializedSize(StringValue value) {
          return real.serializedSize(value);
        }

        @Override
        public void write(StringValue value, ByteBuf out) throws Exception {
          real.write(value, out);
        }

        @Override
        public StringValue read(ByteBuf in) throws Exception {
          decodedOn.set(Thread.currentThread());
          return real.read(in);
        }
      };
      echo = MethodDescriptor.<StringValue, StringValue>newBuilder()
          .serviceName(TestService.NAME).methodName("echo")
          .requestMarshaller(real).responseMarshaller(noting)
          .build();
    }
  }

  @Test
  void blockingCallDecodesOnTheCallingThread() throws Exception {
    RpcServer server = startServer();
    RpcClient client = client(server.port());
    Probe probe = new Probe();
    assertThat(client.unaryCall(probe.echo, StringValue.of("x"), CallOptions.DEFAULT).getValue()).isEqualTo("x");
    assertThat(probe.decodedOn.get()).isSameAs(Thread.currentThread());
  }

  @Test
  void blockingCallThroughInterceptorsDecodesAndRunsTheirCallbacksOnTheCallingThread() throws Exception {
    RpcServer server = startServer();
    AtomicReference<Thread> callbackOn = new AtomicReference<>();
    ClientInterceptor noting = new ClientInterceptor() {
      @Override
      public <Req, Resp> CompletableFuture<Resp> intercept(Chain<Req, Resp> chain) {
        return chain.proceed().whenComplete((r, t) -> callbackOn.set(Thread.currentThread()));
      }
    };
    RpcClient client = client(server.port(), b -> b.intercept(noting));
    Probe probe = new Probe();
    assertThat(client.unaryCall(probe.echo, StringValue.of("y"), CallOptions.DEFAULT).getValue()).isEqualTo("y");
    assertThat(probe.decodedOn.get()).isSameAs(Thread.currentThread());
    assertThat(callbackOn.get()).isSameAs(Thread.currentThread());
  }

  @Test
  void asyncCallDecodesOnTheEventLoop() throws Exception {
    RpcServer server = startServer();
    RpcClient client = client(server.port(), b -> b.name("decode-probe"));
    Probe probe = new Probe();
    client.unaryCallAsync(probe.echo, StringValue.of("z"), CallOptions.DEFAULT).get(10, TimeUnit.SECONDS);
    assertThat(probe.decodedOn.get()).isNotSameAs(Thread.currentThread());
    // The JVM's shared client event loops, by default.
    assertThat(probe.decodedOn.get().getName()).startsWith("petrel-client-");
    RpcClient own = client(server.port(), b -> b.name("decode-probe").option(NettyOptions.IO_THREADS, 1));
    Probe second = new Probe();
    own.unaryCallAsync(second.echo, StringValue.of("z"), CallOptions.DEFAULT).get(10, TimeUnit.SECONDS);
    assertThat(second.decodedOn.get().getName()).startsWith("decode-probe-io");
  }

  @Test
  void asyncCallDecodesOnTheCallsExecutor() throws Exception {
    RpcServer server = startServer();
    RpcClient client = client(server.port());
    ExecutorService executor = Executors.newSingleThreadExecutor(r -> new Thread(r, "call-executor"));
    try {
      Probe probe = new Probe();
      AtomicReference<Thread> completedOn = new AtomicReference<>();
      client.unaryCallAsync(probe.echo, StringValue.of("w"), CallOptions.DEFAULT.withExecutor(executor))
          .whenComplete((r, t) -> completedOn.set(Thread.currentThread()))
          .get(10, TimeUnit.SECONDS);
      assertThat(probe.decodedOn.get().getName()).isEqualTo("call-executor");
      assertThat(completedOn.get().getName()).isEqualTo("call-executor");
    } finally {
      executor.shutdownNow();
    }
  }

  @Test
  void blockingCallsFromManyThreadsAllGetTheirOwnAnswers() throws Exception {
    RpcServer server = startServer();
    RpcClient client = client(server.port());
    Probe probe = new Probe();
    ExecutorService callers = Executors.newFixedThreadPool(16);
    try {
      java.util.List<CompletableFuture<Void>> all = new java.util.ArrayList<>();
      for (int t = 0; t < 16; t++) {
        int id = t;
        all.add(CompletableFuture.runAsync(() -> {
          for (int i = 0; i < 500; i++) {
            String v = id + ":" + i;
            assertThat(client.unaryCall(probe.echo, StringValue.of(v), CallOptions.DEFAULT).getValue()).isEqualTo(v);
          }
        }, callers));
      }
      CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
    } finally {
      callers.shutdownNow();
    }
  }
}
