package io.petrel.rpc.testing;

import static io.petrel.rpc.testing.CallFailures.assertFails;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.StringValue;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.InProcessAddress;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.Status;
import io.petrel.rpc.marshal.ProtobufMarshaller;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What only the in-process transport has: names, the registry, its address, and how its builders combine. */
class InProcessTransportBehaviourTest {
  private static final AtomicInteger NAMES = new AtomicInteger();

  /** Answers with the name of the thread the handler ran on and the peer it saw. */
  static final MethodDescriptor<StringValue, StringValue> WHERE = MethodDescriptor.<StringValue, StringValue>newBuilder()
      .serviceName("inprocess.Where").methodName("where")
      .requestMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
      .responseMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
      .build();

  /** Blocks its thread until the test opens {@link #gate}. */
  static final MethodDescriptor<StringValue, StringValue> BLOCK = MethodDescriptor.<StringValue, StringValue>newBuilder()
      .serviceName("inprocess.Where").methodName("block")
      .requestMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
      .responseMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
      .build();

  private final ConformanceService service = new ConformanceService();
  private final CountDownLatch gate = new CountDownLatch(1);
  private final BlockingQueue<String> blocking = new LinkedBlockingQueue<>();
  private final Deque<AutoCloseable> resources = new ArrayDeque<>();

  private ServiceDefinition where() {
    return ServiceDefinition.builder("inprocess.Where")
        .unary(WHERE, req -> StringValue.of(Thread.currentThread().getName() + " " + ServerContext.current().peer()))
        .unary(BLOCK, req -> {
          blocking.add(req.getValue());
          if (!gate.await(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the test never opened the gate");
          }
          return req;
        })
        .build();
  }

  private static String uniqueName(String prefix) {
    return prefix + "-" + NAMES.incrementAndGet();
  }

  private RpcServer start(String name, UnaryOperator<io.petrel.rpc.RpcServerBuilder> options) throws IOException {
    RpcServer server = options.apply(RpcServer.builder().inProcess(name).addService(service.definition())
        .addService(where())).build().start();
    resources.addLast(() -> {
      gate.countDown();
      server.shutdownNow();
      assertThat(server.awaitTermination(20, TimeUnit.SECONDS)).isTrue();
    });
    return server;
  }

  private RpcServer start(String name) throws IOException {
    return start(name, b -> b);
  }

  private RpcClient client(String name) {
    RpcClient client = RpcClient.builder().inProcess(name).build();
    resources.addFirst(() -> {
      client.shutdownNow();
      assertThat(client.awaitTermination(20, TimeUnit.SECONDS)).isTrue();
    });
    return client;
  }

  @AfterEach
  void closeAll() throws Exception {
    gate.countDown();
    service.releaseAll();
    AutoCloseable r;
    while ((r = resources.pollFirst()) != null) {
      r.close();
    }
  }

  @Test
  void aSecondLiveServerOfTheSameNameFailsToStartAndTheNameIsFreedWhenTheFirstStops() throws Exception {
    String name = uniqueName("clash");
    RpcServer first = start(name);
    RpcServer second = RpcServer.builder().inProcess(name).name("second").addService(service.definition()).build();
    assertThatThrownBy(second::start).isInstanceOf(IOException.class)
        .hasMessageContaining("cannot start server 'second'")
        .hasMessageContaining("an in-process server named '" + name + "' is already running in this JVM");
    assertThat(second.isTerminated()).isTrue();

    RpcClient client = client(name);
    assertThat(client.unaryCall(ConformanceService.ECHO, StringValue.of("first")).getValue()).isEqualTo("first");
    first.shutdown();
    assertThat(first.awaitTermination(20, TimeUnit.SECONDS)).isTrue();
    assertFails(() -> client.unaryCall(ConformanceService.ECHO, StringValue.of("between")), Status.Code.UNAVAILABLE,
        "no in-process server named '" + name + "' is running");

    start(name); // the name is free again; the same client finds the new server
    assertThat(client.unaryCall(ConformanceService.ECHO, StringValue.of("again")).getValue()).isEqualTo("again");
  }

  @Test
  void callsToANameNoServerHasFailWithUnavailableSayingHowToStartOne() throws Exception {
    String name = uniqueName("nobody");
    RpcClient client = client(name);
    String expected = "no in-process server named '" + name + "' is running; start one with"
        + " RpcServer.builder().inProcess(\"" + name + "\")";
    assertFails(() -> client.unaryCall(ConformanceService.ECHO, StringValue.of("x")), Status.Code.UNAVAILABLE,
        expected, "conformance.Echo/echo not sent");
    assertFails(client.oneway(ConformanceService.LOG, StringValue.of("y"), CallOptions.DEFAULT),
        Status.Code.UNAVAILABLE, expected);
    assertThat(client.pendingCalls()).isZero();

    RpcClient started = RpcClient.builder().inProcess(name).build();
    assertFails(started::start, Status.Code.UNAVAILABLE, expected);
    assertThat(started.isShutdown()).as("a failed start() leaves the client usable").isFalse();

    start(name); // a server that starts after its client is found at the next call
    assertThat(client.start().unaryCall(ConformanceService.ECHO, StringValue.of("found")).getValue())
        .isEqualTo("found");
    assertThat(started.unaryCall(ConformanceService.ECHO, StringValue.of("recovered")).getValue())
        .as("the client whose start() failed").isEqualTo("recovered");
    started.shutdown();
    assertThat(started.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void anInProcessServerHasAnAddressAndNoPort() throws Exception {
    String name = uniqueName("addressed");
    RpcServer server = start(name);
    assertThat(server.address()).isEqualTo(new InProcessAddress(name)).hasToString("inprocess:" + name);
    assertThatThrownBy(server::port).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("is in-process (inprocess:" + name + "): it has no network address and no port")
        .hasMessageContaining("RpcClient.builder().inProcess(\"" + name + "\")");
    assertThatThrownBy(server::localAddress).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("is in-process");
    assertThat(server.toString()).contains("inprocess:" + name);

    // Each client is a connection of its own, which the handler sees as its peer.
    String a = client(name).unaryCall(WHERE, StringValue.getDefaultInstance()).getValue();
    String b = client(name).unaryCall(WHERE, StringValue.getDefaultInstance()).getValue();
    assertThat(a).contains("inprocess:" + name + "#");
    assertThat(b).contains("inprocess:" + name + "#");
    assertThat(a.substring(a.indexOf(' '))).isNotEqualTo(b.substring(b.indexOf(' ')));
  }

  @Test
  void inDirectModeTheHandlerRunsOnTheCallersThread() throws Exception {
    String name = uniqueName("direct");
    start(name, b -> b.directExecutor());
    RpcClient client = client(name);
    assertThat(client.unaryCall(WHERE, StringValue.getDefaultInstance()).getValue())
        .startsWith(Thread.currentThread().getName() + " ");
    CompletableFuture<StringValue> async = client.unaryCallAsync(WHERE, StringValue.getDefaultInstance(),
        CallOptions.DEFAULT);
    assertThat(async.get(10, TimeUnit.SECONDS).getValue()).startsWith(Thread.currentThread().getName() + " ");
    assertThat(ServerContext.current()).as("the server's call left nothing on the caller's thread").isNull();
  }

  @Test
  void theCallersCallbacksDoNotRunInsideTheServersCall() throws Exception {
    String name = uniqueName("callbacks");
    start(name);
    RpcClient client = client(name);
    CompletableFuture<StringValue> f = client.unaryCallAsync(BLOCK, StringValue.of("b"), CallOptions.DEFAULT);
    assertThat(blocking.poll(10, TimeUnit.SECONDS)).isEqualTo("b");
    // Without a callback executor the future completes on the business thread that answered, inside the
    // server's call; the callback must not see that call's context (nor inherit its deadline).
    CompletableFuture<String> seen = f.thenApply(r -> Thread.currentThread().getName() + " "
        + ServerContext.current());
    gate.countDown();
    assertThat(seen.get(10, TimeUnit.SECONDS)).doesNotStartWith(Thread.currentThread().getName()).endsWith(" null");
  }

  @Test
  void aFullBusinessPoolRefusesAtOnceWithResourceExhausted() throws Exception {
    String name = uniqueName("full");
    start(name, b -> b.businessThreads(1).businessQueueSize(0));
    RpcClient client = client(name);
    CompletableFuture<StringValue> blocked =
        client.unaryCallAsync(BLOCK, StringValue.of("holds the only thread"), CallOptions.DEFAULT);
    assertThat(blocking.poll(10, TimeUnit.SECONDS)).isEqualTo("holds the only thread");
    assertFails(client.unaryCallAsync(ConformanceService.ECHO, StringValue.of("x"),
        CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(30))), Status.Code.RESOURCE_EXHAUSTED,
        "business pool is full", "1 threads busy", "businessThreads");
    gate.countDown();
    assertThat(blocked.get(10, TimeUnit.SECONDS).getValue()).isEqualTo("holds the only thread");
  }

  @Test
  void theBuildersChooseInProcessAndRefuseWhatCannotApply() throws Exception {
    String name = uniqueName("builders");
    // The last address given wins: inProcess after port, and port after inProcess (no Netty here to build it).
    RpcServer server = RpcServer.builder().port(7000).inProcess(name).addService(service.definition()).build();
    resources.addLast(server::close);
    assertThat(server.start().address()).isEqualTo(new InProcessAddress(name));
    assertThatThrownBy(() -> RpcServer.builder().inProcess(name).port(0).build())
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("no Petrel transport on the class path");
    assertThatThrownBy(() -> RpcServer.builder().inProcess(name).transport("netty").build())
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("both choose the transport");
    assertThatThrownBy(() -> RpcClient.builder().inProcess(name).transport("netty").build())
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("both choose the transport");
    assertThatThrownBy(() -> RpcServer.builder().inProcess(" ")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("must not be blank");
    assertThatThrownBy(() -> RpcClient.builder().address("127.0.0.1", 7000).inProcess(name).address("h", 1).build())
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("no Petrel transport on the class path");

    RpcClient client = client(name);
    assertThat(client.isSecure()).as("in-process calls never leave the process").isTrue();
    assertThat(client.unaryCall(ConformanceService.ECHO, StringValue.of("built")).getValue()).isEqualTo("built");
  }
}
