package io.petrel.rpc.transport.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.google.protobuf.StringValue;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.PooledByteBufAllocator;
import io.petrel.rpc.AccessLogInterceptor;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.ClientInterceptor;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.ServerInterceptor;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.marshal.ProtobufMarshaller;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class ObservabilityTest extends TransportFixture {

  /** Records its name when a call passes through it, on either side. */
  record Recorder(String name, List<String> seen) implements ClientInterceptor, ServerInterceptor {
    @Override
    public <Req, Resp> CompletableFuture<Resp> intercept(ClientInterceptor.Chain<Req, Resp> chain) {
      seen.add(name);
      return chain.proceed();
    }

    @Override
    public <Req, Resp> CompletionStage<Resp> intercept(ServerInterceptor.Chain<Req, Resp> chain) throws Exception {
      seen.add(name);
      return chain.proceed();
    }
  }

  @Test
  void interceptorsRunInOrderOnBothSides() throws Exception {
    List<String> seen = new CopyOnWriteArrayList<>();
    RpcServer server = startServer(b -> b.intercept(new Recorder("s1", seen), new Recorder("s2", seen)));
    RpcClient client = client(server.port(), b -> b.intercept(new Recorder("c1", seen), new Recorder("c2", seen)));
    client.unaryCall(TestService.ECHO, StringValue.of("x"),
        CallOptions.DEFAULT.withInterceptors(new Recorder("call", seen)));
    assertThat(seen).containsExactly("c1", "c2", "call", "s1", "s2");
  }

  @Test
  void interceptorRuleViolationsFailTheCallWithAClearMessage() throws Exception {
    ServerInterceptor twice = new ServerInterceptor() {
      @Override
      public <Req, Resp> CompletionStage<Resp> intercept(Chain<Req, Resp> chain) throws Exception {
        chain.proceed();
        return chain.proceed();
      }
    };
    RpcServer server = startServer(b -> b.intercept(twice));
    RpcClient client = client(server.port());
    assertThatThrownBy(() -> client.unaryCall(TestService.ECHO, StringValue.of("x")))
        .isInstanceOfSatisfying(StatusException.class, e -> {
          assertThat(e.code()).isEqualTo(Status.Code.INTERNAL);
          assertThat(e.status().description()).contains("called proceed() twice").contains("test.Echo/echo");
        });
    ClientInterceptor returnsNull = new ClientInterceptor() {
      @Override
      public <Req, Resp> CompletableFuture<Resp> intercept(Chain<Req, Resp> chain) {
        return null;
      }
    };
    assertThatThrownBy(() -> client.unaryCall(TestService.ECHO, StringValue.of("x"),
        CallOptions.DEFAULT.withInterceptors(returnsNull)))
        .isInstanceOfSatisfying(StatusException.class, e -> {
          assertThat(e.code()).isEqualTo(Status.Code.INTERNAL);
          assertThat(e.status().description()).contains("returned null");
        });
    // An interceptor may answer by itself, e.g. refuse the call.
    ClientInterceptor refuse = new ClientInterceptor() {
      @Override
      public <Req, Resp> CompletableFuture<Resp> intercept(Chain<Req, Resp> chain) {
        return CompletableFuture.failedFuture(Status.UNAUTHENTICATED.withDescription("no token").asException());
      }
    };
    assertThatThrownBy(() -> client.unaryCall(TestService.ECHO, StringValue.of("x"),
        CallOptions.DEFAULT.withInterceptors(refuse))).hasMessage("UNAUTHENTICATED: no token");
  }

  @Test
  void metadataTravelsBothWays() throws Exception {
    ServerInterceptor echoTrace = new ServerInterceptor() {
      @Override
      public <Req, Resp> CompletionStage<Resp> intercept(Chain<Req, Resp> chain) throws Exception {
        chain.context().addResponseMetadata("x-trace", "re:" + chain.context().metadata().get("x-trace"));
        return chain.proceed();
      }
    };
    RpcServer server = startServer(b -> b.intercept(echoTrace));
    AtomicReference<Metadata> fromChain = new AtomicReference<>();
    ClientInterceptor capture = new ClientInterceptor() {
      @Override
      public <Req, Resp> CompletableFuture<Resp> intercept(Chain<Req, Resp> chain) {
        return chain.proceed().whenComplete((r, e) -> fromChain.set(chain.responseMetadata()));
      }
    };
    RpcClient client = client(server.port(), b -> b.intercept(capture));
    AtomicReference<Metadata> fromListener = new AtomicReference<>();
    StringValue reply = client.unaryCall(TestService.META, StringValue.of(""), CallOptions.DEFAULT
        .withMetadata(Metadata.of("x-test", "hello").with("x-trace", "t-1"))
        .withResponseMetadataListener(fromListener::set));
    assertThat(reply.getValue()).isEqualTo("hello");
    assertThat(fromListener.get().get("x-trace")).isEqualTo("re:t-1");
    assertThat(fromChain.get().get("x-trace")).isEqualTo("re:t-1");
    // Error responses carry response metadata too.
    assertThatThrownBy(() -> client.unaryCall(TestService.FAIL, StringValue.of("x"),
        CallOptions.DEFAULT.withMetadata(Metadata.of("x-trace", "t-2"))
            .withResponseMetadataListener(fromListener::set))).isInstanceOf(StatusException.class);
    assertThat(fromListener.get().get("x-trace")).isEqualTo("re:t-2");
  }

  @Test
  void nestedCallInheritsTheOuterDeadline() throws Exception {
    // Inner server: blocks. Outer server: calls the inner one with no deadline of its own.
    RpcServer inner = startServer();
    RpcClient innerClient = client(inner.port()); // default deadline 30 s
    AtomicReference<Status.Code> innerOutcome = new AtomicReference<>();
    CountDownLatch innerEnded = new CountDownLatch(1);
    MethodDescriptor<StringValue, StringValue> relay = MethodDescriptor.<StringValue, StringValue>newBuilder()
        .serviceName("test.Relay").methodName("relay")
        .requestMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
        .responseMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance())).build();
    RpcServer outer = RpcServer.builder().bindAddress("127.0.0.1", 0)
        .addService(ServiceDefinition.builder("test.Relay").unary(relay, req -> {
          try {
            return innerClient.unaryCall(TestService.BLOCK, req);
          } catch (StatusException e) {
            innerOutcome.set(e.code());
            innerEnded.countDown();
            throw e;
          }
        }).build()).build().start();
    try {
      RpcClient client = client(outer.port());
      long start = System.nanoTime();
      assertThatThrownBy(() -> client.unaryCall(relay, StringValue.of("x"),
          CallOptions.DEFAULT.withTimeout(Duration.ofMillis(400))))
          .isInstanceOfSatisfying(StatusException.class,
              e -> assertThat(e.code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));
      assertThat(innerEnded.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(innerOutcome.get()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(10_000);
    } finally {
      outer.shutdownNow();
      outer.awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void cancellationAndDeadlineReachTheServerHandler() throws Exception {
    CountDownLatch cancelled = new CountDownLatch(2);
    ServerInterceptor watch = new ServerInterceptor() {
      @Override
      public <Req, Resp> CompletionStage<Resp> intercept(Chain<Req, Resp> chain) throws Exception {
        chain.context().onCancel(cancelled::countDown);
        return chain.proceed();
      }
    };
    RpcServer server = startServer(b -> b.intercept(watch));
    RpcClient client = client(server.port());
    CompletableFuture<StringValue> f = client.unaryCallAsync(TestService.BLOCK, StringValue.of("a"),
        CallOptions.DEFAULT);
    assertThat(service.blockStarted.poll(10, TimeUnit.SECONDS)).isEqualTo("a");
    f.cancel(false);
    CompletableFuture<StringValue> g = client.unaryCallAsync(TestService.BLOCK, StringValue.of("b"),
        CallOptions.DEFAULT.withTimeout(Duration.ofMillis(200)));
    assertThat(service.blockStarted.poll(10, TimeUnit.SECONDS)).isEqualTo("b");
    assertThatThrownBy(() -> g.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class);
    assertThat(cancelled.await(10, TimeUnit.SECONDS)).as("both cancellations seen by the server").isTrue();
  }

  @Test
  void metricsCountCallsByStatusAndRejections() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    RpcServer server = startServer(b -> b.meterRegistry(registry).name("s1").businessThreads(1)
        .businessQueueSize(1));
    // There from the start, at 0, so that a dashboard or an alert finds it before the first refusal.
    assertThat(registry.get("rpc.server.executor.rejected").tags("service", "test.Echo").counter().count())
        .isZero();
    RpcClient client = client(server.port(), b -> b.meterRegistry(registry).name("c1"));
    for (int i = 0; i < 3; i++) {
      client.unaryCall(TestService.ECHO, StringValue.of("12345"));
    }
    assertThatThrownBy(() -> client.unaryCall(TestService.FAIL, StringValue.of("x")));
    // Forced overload: the only business thread is held, one call waits in the queue, the next is rejected.
    CompletableFuture<StringValue> held = client.unaryCallAsync(TestService.BLOCK, StringValue.of("h"),
        CallOptions.DEFAULT);
    assertThat(service.blockStarted.poll(10, TimeUnit.SECONDS)).isEqualTo("h");
    CompletableFuture<StringValue> queued = client.unaryCallAsync(TestService.ECHO, StringValue.of("12345"),
        CallOptions.DEFAULT);
    assertThatThrownBy(() -> client.unaryCall(TestService.ECHO, StringValue.of("r")))
        .hasMessageContaining("RESOURCE_EXHAUSTED");
    service.gate.countDown();
    held.get(10, TimeUnit.SECONDS);
    queued.get(10, TimeUnit.SECONDS);

    // The server records a call once it has sent its answer, which the client may read first: wait for the meter.
    io.micrometer.core.instrument.Timer serverOk =
        registry.get("rpc.server.calls").tags("server", "s1", "method", "echo", "status", "OK").timer();
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (serverOk.count() < 4 && System.nanoTime() < until) {
      Thread.yield();
    }
    assertThat(serverOk.count()).isEqualTo(4);
    assertThat(registry.get("rpc.server.calls").tags("method", "fail", "status", "UNKNOWN").timer().count())
        .isEqualTo(1);
    assertThat(registry.get("rpc.server.calls").tags("method", "echo", "status", "RESOURCE_EXHAUSTED").timer()
        .count()).isEqualTo(1);
    assertThat(registry.get("rpc.server.executor.rejected").tags("service", "test.Echo").counter().count())
        .isEqualTo(1);
    assertThat(registry.get("rpc.client.calls").tags("client", "c1", "method", "echo", "status", "OK").timer()
        .count()).isEqualTo(4);
    assertThat(registry.get("rpc.client.calls").tags("method", "fail", "status", "UNKNOWN").timer().count())
        .isEqualTo(1);
    // StringValue("12345") is 7 bytes on the wire.
    assertThat(registry.get("rpc.server.request.size").tags("method", "echo").summary().max()).isEqualTo(7);
    assertThat(registry.get("rpc.server.connections").gauge().value()).isEqualTo(1);
    assertThat(registry.get("rpc.client.connections").gauge().value()).isEqualTo(1);
    assertThat(registry.get("rpc.client.calls.pending").gauge().value()).isZero();
    assertThat(registry.get("rpc.server.bytes.received").counter().count()).isGreaterThan(0);
    assertThat(registry.get("rpc.client.bytes.sent").counter().count())
        .isEqualTo(registry.get("rpc.server.bytes.received").counter().count());
    assertThat(registry.get("rpc.server.executor.completed").functionCounter().count()).isGreaterThan(0);
    // The memory gauge (Micrometer's Netty binder) reports the allocator Petrel's frames come from (not Netty's
    // default allocator).
    double direct = registry.get("netty.allocator.memory.used").tags("memory.type", "direct").gauge().value();
    assertThat(direct).isPositive()
        .isEqualTo((double) PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory());
    // One pending-tasks gauge per event loop of the server (Micrometer's binder), tagged with the server.
    assertThat(registry.get("netty.eventexecutor.tasks.pending").tags("server", "s1").gauges()).isNotEmpty();
    assertThat(registry.get("netty.eventexecutor.workers").tags("server", "s1").gauge().value()).isPositive();
  }

  /**
   * One registry for a JVM's servers and clients (as a Spring Boot application's): the JVM-wide allocator meters
   * are bound to it once, not once per server or client, so Micrometer has no gauge registered twice to warn of.
   */
  @Test
  void serversAndClientsSharingARegistryBindTheAllocatorsMetersOnce() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    Logger micrometer = (Logger) LoggerFactory.getLogger(io.micrometer.core.instrument.MeterRegistry.class);
    ListAppender<ILoggingEvent> warnings = new ListAppender<>();
    warnings.start();
    micrometer.addAppender(warnings);
    try {
      RpcServer s1 = startServer(b -> b.meterRegistry(registry).name("shared-1"));
      RpcServer s2 = startServer(b -> b.meterRegistry(registry).name("shared-2"));
      RpcClient c1 = client(s1.port(), b -> b.meterRegistry(registry).name("shared-c1"));
      RpcClient c2 = client(s2.port(), b -> b.meterRegistry(registry).name("shared-c2"));
      assertThat(c1.unaryCall(TestService.ECHO, StringValue.of("a")).getValue()).isEqualTo("a");
      assertThat(c2.unaryCall(TestService.ECHO, StringValue.of("b")).getValue()).isEqualTo("b");
    } finally {
      micrometer.detachAppender(warnings);
    }
    assertThat(warnings.list).extracting(ILoggingEvent::getFormattedMessage)
        .noneMatch(m -> m.contains("already registered"));
    assertThat(registry.get("netty.allocator.memory.used").tags("memory.type", "direct").gauges()).hasSize(1);
    assertThat(registry.get("rpc.server.connections").gauges()).hasSize(2); // the per-server meters stay two
  }

  /**
   * A server and a client stopped and made again under the same names in the same registry (a restarted context,
   * a reconfigured client): the new ones' gauges read the new objects. Before, Micrometer handed back the old
   * gauges, which read a server and a client that were gone.
   */
  @Test
  void aServerAndClientMadeAgainUnderTheirNamesHaveGaugesOfTheirOwn() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    RpcServer first = startServer(b -> b.meterRegistry(registry).name("again"));
    RpcClient firstClient = client(first.port(), b -> b.meterRegistry(registry).name("again-client"));
    assertThat(firstClient.unaryCall(TestService.ECHO, StringValue.of("a")).getValue()).isEqualTo("a");
    firstClient.shutdownNow();
    assertThat(firstClient.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    first.shutdownNow();
    assertThat(first.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(registry.find("rpc.server.connections").gauge()).as("the stopped server's gauge").isNull();
    assertThat(registry.find("rpc.server.executor.queued").gauge()).isNull();
    assertThat(registry.find("rpc.client.calls.pending").gauge()).as("the stopped client's gauge").isNull();
    assertThat(registry.find("rpc.server.calls").timer()).as("counters and timers stay").isNotNull();

    RpcServer second = startServer(b -> b.meterRegistry(registry).name("again"));
    RpcClient secondClient = client(second.port(), b -> b.meterRegistry(registry).name("again-client"));
    CompletableFuture<StringValue> held = secondClient.unaryCallAsync(TestService.BLOCK, StringValue.of("held"),
        CallOptions.DEFAULT);
    assertThat(service.blockStarted.poll(10, TimeUnit.SECONDS)).isEqualTo("held");
    assertThat(registry.get("rpc.server.connections").gauge().value()).isEqualTo(1);
    assertThat(registry.get("rpc.server.calls.active").gauge().value()).isEqualTo(1);
    assertThat(registry.get("rpc.client.calls.pending").gauge().value()).isEqualTo(1);
    service.gate.countDown();
    assertThat(held.get(10, TimeUnit.SECONDS).getValue()).isEqualTo("held");
  }

  /**
   * Two live servers of one name in one registry share its gauges, read from the first: the second, stopped, leaves
   * them to the first (it removes only what it registered), and its event loops' gauges go with it.
   */
  @Test
  void aServerStoppedBesideALiveOneOfTheSameNameLeavesItsGauges() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    RpcServer first = startServer(b -> b.meterRegistry(registry).name("twin"));
    int loopsOfFirst = registry.find("netty.eventexecutor.tasks.pending").tags("server", "twin").gauges().size();
    RpcServer second = startServer(b -> b.meterRegistry(registry).name("twin"));
    assertThat(registry.find("netty.eventexecutor.tasks.pending").tags("server", "twin").gauges())
        .hasSizeGreaterThan(loopsOfFirst);
    second.shutdownNow();
    assertThat(second.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    RpcClient client = client(first.port());
    assertThat(client.unaryCall(TestService.ECHO, StringValue.of("x")).getValue()).isEqualTo("x");
    assertThat(registry.get("rpc.server.connections").gauge().value()).as("the first server's").isEqualTo(1);
    assertThat(registry.find("rpc.server.calls.active").gauge()).isNotNull();
    assertThat(registry.find("rpc.server.executor.queued").gauge()).isNotNull();
    assertThat(registry.find("netty.eventexecutor.tasks.pending").tags("server", "twin").gauges())
        .as("the first server's loops only").hasSize(loopsOfFirst);
  }

  @Test
  void accessLogWritesOneLinePerCall() throws Exception {
    Logger access = (Logger) LoggerFactory.getLogger("io.petrel.rpc.access");
    ListAppender<ILoggingEvent> appender = new ListAppender<>();
    appender.start();
    access.addAppender(appender);
    try {
      RpcServer server = startServer(b -> b.intercept(new AccessLogInterceptor()));
      RpcClient client = client(server.port());
      client.unaryCall(TestService.ECHO, StringValue.of("12345"));
      assertThatThrownBy(() -> client.unaryCall(TestService.FAIL, StringValue.of("x")));
      assertThat(appender.list).hasSize(2);
      assertThat(appender.list.get(0).getFormattedMessage())
          .matches("test\\.Echo/echo OK [0-9.]+ ms req=7B resp=7B peer=/127\\.0\\.0\\.1:[0-9]+");
      assertThat(appender.list.get(1).getFormattedMessage()).startsWith("test.Echo/fail UNKNOWN ");
    } finally {
      access.detachAppender(appender);
    }
  }

  @Test
  void handlerSeesItsContext() throws Exception {
    RpcServer server = startServer();
    RpcClient client = client(server.port());
    StringValue r = client.unaryCall(TestService.META, StringValue.of(""),
        CallOptions.DEFAULT.withMetadata(Metadata.of("x-test", "ctx")));
    assertThat(r.getValue()).isEqualTo("ctx");
    assertThat(ServerContext.current()).isNull();
  }
}
