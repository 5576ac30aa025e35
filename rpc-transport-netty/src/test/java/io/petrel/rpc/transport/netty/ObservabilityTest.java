package io.petrel.rpc.transport.netty;

import static io.petrel.rpc.testing.CallFailures.assertFails;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.google.protobuf.StringValue;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.PooledByteBufAllocator;
import io.petrel.rpc.AccessLogInterceptor;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.ClientInterceptor;
import io.petrel.rpc.LoadBalancer;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.ServerInterceptor;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.Subchannel;
import io.petrel.rpc.dns.DnsNameResolver;
import io.petrel.rpc.internal.ClientCall;
import io.petrel.rpc.lb.OutlierEjection;
import io.petrel.rpc.marshal.ProtobufMarshaller;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
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

  /** Every rpc.* meter says what it counts (Prometheus' HELP line was empty for eleven of them). */
  @Test
  void everyMeterHasADescription() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    RpcServer server = startServer(b -> b.meterRegistry(registry).name("described"));
    RpcClient client = client(server.port(), b -> b.meterRegistry(registry).name("described"));
    client.unaryCall(TestService.ECHO, StringValue.of("x"));
    assertThatThrownBy(() -> client.unaryCall(TestService.FAIL, StringValue.of("x")));
    List<String> undescribed = registry.getMeters().stream().map(m -> m.getId())
        .filter(id -> id.getName().startsWith("rpc.")
            && (id.getDescription() == null || id.getDescription().isBlank()))
        .map(id -> id.getName()).distinct().toList();
    assertThat(registry.getMeters()).hasSizeGreaterThan(10);
    assertThat(undescribed).isEmpty();
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
    // With outlier ejection, so that its meters are there too.
    RpcClient firstClient = client(first.port(), b -> b.meterRegistry(registry).name("again-client")
        .loadBalancer(OutlierEjection.around("round_robin").build()));
    assertThat(firstClient.unaryCall(TestService.ECHO, StringValue.of("a")).getValue()).isEqualTo("a");
    List<String> bound = List.of("rpc.client.calls.pending", "rpc.client.hedges", "rpc.client.retries",
        "rpc.client.retries.throttled", "rpc.client.retries.budget", "rpc.client.connections",
        "rpc.client.endpoints", "rpc.client.endpoints.ejected", "rpc.client.endpoints.ejections",
        "rpc.client.resolver.errors");
    for (String name : bound) {
      assertThat(registry.find(name).tag("client", "again-client").meters()).as(name).isNotEmpty();
    }
    firstClient.shutdownNow();
    assertThat(firstClient.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    first.shutdownNow();
    assertThat(first.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(registry.find("rpc.server.connections").gauge()).as("the stopped server's gauge").isNull();
    assertThat(registry.find("rpc.server.executor.queued").gauge()).isNull();
    assertThat(registry.find("rpc.client.calls.pending").gauge()).as("the stopped client's gauge").isNull();
    for (String name : bound) {
      assertThat(registry.find(name).meters()).as("the stopped client's %s", name).isEmpty();
    }
    // Nothing that reads the client's objects is left: every gauge and function counter of it went.
    assertThat(registry.getMeters()).filteredOn(m -> "again-client".equals(m.getId().getTag("client")))
        .isNotEmpty().allSatisfy(m -> assertThat(m).isNotInstanceOfAny(Gauge.class, FunctionCounter.class));
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

  // ---- the client's retries, retry budget, outlier ejection and resolver meters ----

  private static final String FLAKY = "metrics.Flaky";
  /** Idempotent: retried after UNAVAILABLE (docs/cluster.md, "Retry rules"). */
  private static final MethodDescriptor<StringValue, StringValue> READ = flakyMethod("read", true);
  /** Not idempotent: never retried once it may have run. */
  private static final MethodDescriptor<StringValue, StringValue> WRITE = flakyMethod("write", false);

  private static MethodDescriptor<StringValue, StringValue> flakyMethod(String name, boolean idempotent) {
    return MethodDescriptor.<StringValue, StringValue>newBuilder().serviceName(FLAKY).methodName(name)
        .idempotent(idempotent)
        .requestMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
        .responseMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
        .build();
  }

  /** Both methods fail with UNAVAILABLE while {@code failuresLeft} is above 0 (each failure takes one), then echo. */
  private static ServiceDefinition flaky(AtomicInteger failuresLeft) {
    io.petrel.rpc.UnaryHandler<StringValue, StringValue> handler = req -> {
      if (failuresLeft.getAndDecrement() > 0) {
        throw Status.UNAVAILABLE.withDescription("unavailable for now").asException();
      }
      return req;
    };
    return ServiceDefinition.builder(FLAKY).unary(READ, handler).unary(WRITE, handler).build();
  }

  private static double count(SimpleMeterRegistry registry, String name, String client, String reason) {
    return registry.get(name).tags("client", client, "reason", reason).functionCounter().count();
  }

  private static double retries(SimpleMeterRegistry registry, String client, String reason) {
    return count(registry, "rpc.client.retries", client, reason);
  }

  private static double throttled(SimpleMeterRegistry registry, String client, String reason) {
    return count(registry, "rpc.client.retries.throttled", client, reason);
  }

  private static double budget(SimpleMeterRegistry registry, String client) {
    return registry.get("rpc.client.retries.budget").tag("client", client).gauge().value();
  }

  /** A port on 127.0.0.1 where nothing listens (it did a moment ago). */
  private static int closedPort() throws java.io.IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  /**
   * A balancer that insists on one endpoint: it picks the one on {@code port} whenever it is offered one, else the
   * first; so a test knows where each first attempt goes.
   */
  private record Prefers(int port) implements LoadBalancer.Factory {
    @Override
    public String name() {
      return "prefers_" + port;
    }

    @Override
    public LoadBalancer newLoadBalancer() {
      return new LoadBalancer() {
        private volatile List<? extends Subchannel> offered = List.of();

        @Override
        public @Nullable Subchannel pick(PickArgs call) {
          List<? extends Subchannel> now = offered;
          for (Subchannel s : now) {
            if (s.endpoint().port() == port) {
              return s;
            }
          }
          return now.isEmpty() ? null : now.get(0);
        }

        @Override
        public void update(List<? extends Subchannel> subchannels) {
          offered = List.copyOf(subchannels);
        }
      };
    }
  }

  private static String targetOf(int... ports) {
    StringBuilder sb = new StringBuilder("static://");
    for (int i = 0; i < ports.length; i++) {
      sb.append(i == 0 ? "" : ",").append("127.0.0.1:").append(ports[i]);
    }
    return sb.toString();
  }


  /**
   * A server's GOAWAY that took the first of two requests refuses the second unread: the client sends it again on a
   * new connection, without its caller seeing it, and counts it in rpc.client.retries with reason refused.
   */
  @Test
  void aRequestAGoawayRefusedUnreadIsCountedAsARetryRefused() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (ServerSocket listener = new ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
      RpcClient client = client(listener.getLocalPort(), b -> b.meterRegistry(registry).name("goaway"));
      java.util.Map<String, CompletableFuture<StringValue>> calls = new java.util.HashMap<>();
      for (String text : List.of("a", "b")) {
        calls.put(text, client.unaryCallAsync(TestService.ECHO, StringValue.of(text), CallOptions.DEFAULT));
      }
      try (RawPeer first = new RawPeer(listener.accept())) {
        first.send(RawPeer.settingsFrame(Protocol.SETTING_MAX_CONCURRENT_CALLS, 100));
        RawPeer.RawFrame taken = first.nextRequest();
        RawPeer.RawFrame refused = first.nextRequest();
        assertThat(refused.requestId()).isGreaterThan(taken.requestId());
        String takenText = StringValue.parseFrom(taken.body()).getValue();
        String refusedText = StringValue.parseFrom(refused.body()).getValue();
        byte[] goaway = RawPeer.control(Protocol.TYPE_GOAWAY, taken.requestId());
        goaway[Protocol.OFF_STATUS] = (byte) Status.Code.UNAVAILABLE.value();
        first.send(goaway);
        first.send(RawPeer.response(taken.requestId(), StringValue.of("taken").toByteArray()));
        try (RawPeer next = new RawPeer(listener.accept())) {
          next.send(RawPeer.settingsFrame(Protocol.SETTING_MAX_CONCURRENT_CALLS, 100));
          RawPeer.RawFrame again = next.nextRequest();
          assertThat(StringValue.parseFrom(again.body()).getValue()).isEqualTo(refusedText);
          next.send(RawPeer.response(again.requestId(), StringValue.of("answered elsewhere").toByteArray()));
          assertThat(calls.get(refusedText).get(10, TimeUnit.SECONDS).getValue()).isEqualTo("answered elsewhere");
          assertThat(calls.get(takenText).get(10, TimeUnit.SECONDS).getValue()).isEqualTo("taken");
        }
      }
    }
    assertThat(retries(registry, "goaway", "refused")).isEqualTo(1);
    assertThat(retries(registry, "goaway", "not_sent")).isZero();
    assertThat(retries(registry, "goaway", "unavailable")).isZero();
    assertThat(registry.get("rpc.client.retries").tag("client", "goaway").functionCounters()).hasSize(3);
  }

  /**
   * A call picked for an endpoint it cannot reach moves on to one it can: counted in rpc.client.retries with reason
   * not_sent. A call with nowhere to move (the client's only endpoint is down) is not sent again, and not counted.
   */
  @Test
  void aCallMovedOnFromAnEndpointItCouldNotReachIsCountedAsARetryNotSent() throws Exception {
    RpcServer server = startServer();
    int closed = closedPort();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    RpcClient client = client(1, b -> b.target(targetOf(closed, server.port())).loadBalancer(new Prefers(closed))
        .meterRegistry(registry).name("moved"));
    CompletableFuture<StringValue> f = client.unaryCallAsync(TestService.ECHO, StringValue.of("x"),
        CallOptions.DEFAULT);
    assertThat(f.get(10, TimeUnit.SECONDS).getValue()).isEqualTo("x");
    assertThat(f).isInstanceOfSatisfying(ClientCall.class, c -> assertThat(c.attempts()).isEqualTo(2));
    assertThat(retries(registry, "moved", "not_sent")).isEqualTo(1);
    assertThat(retries(registry, "moved", "refused") + retries(registry, "moved", "unavailable")).isZero();

    RpcClient alone = client(closed, b -> b.meterRegistry(registry).name("alone"));
    assertFails(alone.unaryCallAsync(TestService.ECHO, StringValue.of("x"), CallOptions.DEFAULT),
        Status.Code.UNAVAILABLE);
    assertThat(retries(registry, "alone", "not_sent")).as("nowhere else to send it").isZero();
  }

  /**
   * An idempotent call that failed with UNAVAILABLE is made again (rpc.client.retries, reason unavailable) while
   * the retry budget allows; once it does not, the retry it stopped is counted in rpc.client.retries.throttled,
   * and rpc.client.retries.budget shows the tokens left.
   */
  @Test
  void retriesAfterUnavailableAreCountedAndSoAreThoseTheRetryBudgetStops() throws Exception {
    AtomicInteger failuresLeft = new AtomicInteger(1);
    RpcServer server = startServer(b -> b.addService(flaky(failuresLeft)));
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    // 4 tokens: retries while more than 2 are left; each failure takes 1, each success gives back 0.1.
    RpcClient client = client(server.port(), b -> b.meterRegistry(registry).name("retrying").retryBudget(4, 0.1)
        .maxRetries(5));
    assertThat(budget(registry, "retrying")).isEqualTo(4.0);
    assertThat(client.unaryCall(READ, StringValue.of("a")).getValue()).isEqualTo("a"); // failed once, retried
    assertThat(retries(registry, "retrying", "unavailable")).isEqualTo(1);
    assertThat(throttled(registry, "retrying", "unavailable")).isZero();
    assertThat(budget(registry, "retrying")).isEqualTo(3.1);

    failuresLeft.set(1);
    assertFails(client.unaryCallAsync(WRITE, StringValue.of("w"), CallOptions.DEFAULT), Status.Code.UNAVAILABLE);
    assertThat(retries(registry, "retrying", "unavailable")).as("not idempotent: not retried").isEqualTo(1);
    assertThat(throttled(registry, "retrying", "unavailable")).as("nor stopped by the budget").isZero();
    assertThat(budget(registry, "retrying")).isEqualTo(2.1);

    failuresLeft.set(100);
    assertFails(client.unaryCallAsync(READ, StringValue.of("b"), CallOptions.DEFAULT), Status.Code.UNAVAILABLE);
    assertThat(retries(registry, "retrying", "unavailable")).isEqualTo(1);
    assertThat(throttled(registry, "retrying", "unavailable")).isEqualTo(1);
    assertThat(budget(registry, "retrying")).isEqualTo(1.1);
    assertThat(throttled(registry, "retrying", "refused") + throttled(registry, "retrying", "hedge")).isZero();
  }

  /**
   * A server whose business pool is full refuses calls unread: each goes to the other server (rpc.client.retries,
   * reason refused) while the retry budget allows; the refusal the budget keeps from going elsewhere fails with
   * the server's status and is counted in rpc.client.retries.throttled, reason refused.
   */
  @Test
  void callsAFullServerRefusedAreCountedWhenSentElsewhereAndWhenTheBudgetStopsThem() throws Exception {
    RpcServer full = startServer(b -> b.businessThreads(1).businessQueueSize(0));
    RpcServer spare = startServer();
    CompletableFuture<StringValue> held = client(full.port()).unaryCallAsync(TestService.BLOCK,
        StringValue.of("held"), CallOptions.DEFAULT);
    assertThat(service.blockStarted.poll(10, TimeUnit.SECONDS)).as("the full server's one thread").isEqualTo("held");
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    // 3 tokens: sent elsewhere while more than 1.5 are left; each refusal takes 1, each success gives back 0.1.
    RpcClient client = client(1, b -> b.target(targetOf(full.port(), spare.port()))
        .loadBalancer(new Prefers(full.port())).retryBudget(3, 0.1).meterRegistry(registry).name("refused"));
    client.start();
    assertThat(client.unaryCall(TestService.ECHO, StringValue.of("a")).getValue()).isEqualTo("a");
    assertThat(retries(registry, "refused", "refused")).isEqualTo(1);
    assertThat(throttled(registry, "refused", "refused")).isZero();
    assertThat(budget(registry, "refused")).isEqualTo(2.1);

    assertFails(client.unaryCallAsync(TestService.ECHO, StringValue.of("b"), CallOptions.DEFAULT),
        Status.Code.RESOURCE_EXHAUSTED, "business pool is full");
    assertThat(retries(registry, "refused", "refused")).isEqualTo(1);
    assertThat(throttled(registry, "refused", "refused")).isEqualTo(1);
    assertThat(budget(registry, "refused")).isEqualTo(1.1);

    // A client of the full server alone: its refusals have nowhere else to go, budget or not; neither is counted.
    RpcClient alone = client(full.port(), b -> b.retryBudget(3, 0.1).meterRegistry(registry).name("full-only"));
    for (int i = 0; i < 2; i++) {
      assertFails(alone.unaryCallAsync(TestService.ECHO, StringValue.of("c" + i), CallOptions.DEFAULT),
          Status.Code.RESOURCE_EXHAUSTED, "business pool is full");
    }
    assertThat(budget(registry, "full-only")).as("the second refusal found the budget drawn down").isEqualTo(1.0);
    assertThat(retries(registry, "full-only", "refused")).isZero();
    assertThat(throttled(registry, "full-only", "refused")).isZero();
    service.gate.countDown();
    assertThat(held.get(10, TimeUnit.SECONDS).getValue()).isEqualTo("held");
  }

  /**
   * A hedged call whose attempt failed with UNAVAILABLE would send a hedge in its place; with the retry budget drawn
   * down it does not, and that is counted in rpc.client.retries.throttled, reason hedge.
   */
  @Test
  void aHedgeTheRetryBudgetStopsIsCounted() throws Exception {
    RpcServer server = startServer(b -> b.addService(flaky(new AtomicInteger(100))));
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    // 2 tokens: hedges while more than 1 is left; the failure takes 1. The timer's hedge would come after 10 s.
    RpcClient client = client(server.port(), b -> b.meterRegistry(registry).name("hedged").retryBudget(2, 0.1)
        .hedging(3, Duration.ofSeconds(10)));
    assertFails(client.unaryCallAsync(READ, StringValue.of("h"), CallOptions.DEFAULT), Status.Code.UNAVAILABLE);
    assertThat(throttled(registry, "hedged", "hedge")).isEqualTo(1);
    assertThat(registry.get("rpc.client.hedges").tag("client", "hedged").functionCounter().count()).isZero();
    assertThat(retries(registry, "hedged", "unavailable")).as("a hedged call's attempts are not retried").isZero();
    assertThat(budget(registry, "hedged")).isEqualTo(1.0);
  }

  /**
   * Outlier ejection's meters: rpc.client.endpoints.ejected (now) and rpc.client.endpoints.ejections (so far), once
   * a server that fails every call has failed two in a row.
   */
  @Test
  void anEndpointEjectedByOutlierEjectionIsCounted() throws Exception {
    RpcServer failing = startServer(b -> b.addService(flaky(new AtomicInteger(Integer.MAX_VALUE))));
    RpcServer healthy = startServer(b -> b.addService(flaky(new AtomicInteger())));
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    RpcClient client = client(1, b -> b.target(targetOf(failing.port(), healthy.port())).meterRegistry(registry)
        .name("ejecting").loadBalancer(OutlierEjection.around(new Prefers(failing.port())).consecutiveFailures(2)
            .build()));
    io.micrometer.core.instrument.Gauge ejected =
        registry.get("rpc.client.endpoints.ejected").tag("client", "ejecting").gauge();
    FunctionCounter ejections = registry.get("rpc.client.endpoints.ejections").tag("client", "ejecting")
        .functionCounter();
    assertThat(ejected.value()).isZero();
    assertThat(ejections.count()).isZero();
    for (int i = 0; i < 2; i++) {
      assertFails(client.unaryCallAsync(WRITE, StringValue.of("w" + i), CallOptions.DEFAULT),
          Status.Code.UNAVAILABLE);
    }
    assertThat(ejected.value()).isEqualTo(1);
    assertThat(ejections.count()).isEqualTo(1);
    // Ejected: the next call goes to the healthy server.
    assertThat(client.unaryCall(WRITE, StringValue.of("ok")).getValue()).isEqualTo("ok");
    assertThat(ejected.value()).isEqualTo(1);
    assertThat(ejections.count()).isEqualTo(1);
  }

  /**
   * A resolver that cannot look its name up again (DNS down) reports an error: counted in
   * rpc.client.resolver.errors, while the client keeps calling the endpoint it had.
   */
  @Test
  void aResolverErrorIsCountedAndTheClientKeepsItsEndpoints() throws Exception {
    RpcServer server = startServer();
    AtomicInteger lookups = new AtomicInteger();
    DnsNameResolver resolver = DnsNameResolver.builder("greeter.test", server.port())
        .refreshInterval(Duration.ofHours(1)).minRefreshInterval(Duration.ofMillis(10)).lookup(host -> {
          if (lookups.incrementAndGet() > 1) {
            throw new java.net.UnknownHostException(host + ": the DNS server does not answer");
          }
          return new InetAddress[] {InetAddress.getLoopbackAddress()};
        }).build();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    RpcClient client = client(server.port(), b -> b.nameResolver("dns:///greeter.test:" + server.port(), resolver)
        .meterRegistry(registry).name("resolving"));
    FunctionCounter errors = registry.get("rpc.client.resolver.errors").tag("client", "resolving")
        .functionCounter();
    assertThat(client.unaryCall(TestService.ECHO, StringValue.of("a")).getValue()).isEqualTo("a");
    assertThat(errors.count()).isZero();

    resolver.refresh(); // what the client asks when it loses a connection: the lookup fails this time
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (errors.count() < 1 && System.nanoTime() < until) {
      Thread.onSpinWait();
    }
    assertThat(errors.count()).isEqualTo(1);
    assertThat(client.unaryCall(TestService.ECHO, StringValue.of("b")).getValue()).as("the endpoint it had")
        .isEqualTo("b");
    assertThat(lookups.get()).isEqualTo(2);
    assertThat(errors.count()).isEqualTo(1);
  }
}
