package io.petrel.rpc.observation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingReceiverTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingSenderTracingObservationHandler;
import io.micrometer.tracing.otel.bridge.OtelBaggageManager;
import io.micrometer.tracing.otel.bridge.OtelCurrentTraceContext;
import io.micrometer.tracing.otel.bridge.OtelPropagator;
import io.micrometer.tracing.otel.bridge.OtelTracer;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.MethodType;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.marshal.FieldCodecs;
import io.petrel.rpc.marshal.ValueMarshaller;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Micrometer Tracing over OpenTelemetry (W3C propagation) with an in-memory exporter, two Netty servers on
 * 127.0.0.1: the test calls Front, whose handler calls Back. Every call has a client and a server span, and the
 * spans form one trace: test -> client Front/call -> server Front/call -> client Back/echo -> server Back/echo.
 */
class TracingTest {
  private static final MethodDescriptor<String, String> FRONT_CALL = method("test.Front", "call");
  private static final MethodDescriptor<String, String> BACK_ECHO = method("test.Back", "echo");
  private static final MethodDescriptor<String, String> BACK_FAIL = method("test.Back", "fail");
  private static final MethodDescriptor<String, String> BACK_HOLD = method("test.Back", "hold");
  private final java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
  private final java.util.concurrent.CountDownLatch holding = new java.util.concurrent.CountDownLatch(1);

  private final InMemorySpanExporter exporter = InMemorySpanExporter.create();
  private final SdkTracerProvider tracerProvider =
      SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build();
  private final MeterRegistry meters = new SimpleMeterRegistry();
  private final ObservationRegistry observations = ObservationRegistry.create();
  private RpcServer back;
  private RpcServer front;
  private RpcClient backClient;
  private RpcClient frontClient;
  private final Map<String, String> seenByBack = new java.util.concurrent.ConcurrentHashMap<>();

  private static MethodDescriptor<String, String> method(String service, String name) {
    return MethodDescriptor.<String, String>newBuilder().serviceName(service).methodName(name)
        .id(MethodDescriptor.methodId(service, name)).type(MethodType.UNARY)
        .requestMarshaller(ValueMarshaller.of(FieldCodecs.STRING))
        .responseMarshaller(ValueMarshaller.of(FieldCodecs.STRING)).build();
  }

  @BeforeEach
  void setUp() throws Exception {
    ContextPropagators w3c = ContextPropagators.create(W3CTraceContextPropagator.getInstance());
    io.opentelemetry.api.trace.Tracer otel = tracerProvider.get("petrel-test");
    OtelCurrentTraceContext current = new OtelCurrentTraceContext();
    OtelTracer tracer = new OtelTracer(otel, current, event -> { },
        new OtelBaggageManager(current, List.of(), List.of()));
    OtelPropagator propagator = new OtelPropagator(w3c, otel);
    meters.config().meterFilter(RpcObservations.ignoreObservationMeters());
    observations.observationConfig()
        // As Spring Boot sets it up: a meter handler for every observation, next to the tracing handlers.
        .observationHandler(new DefaultMeterObservationHandler(meters))
        .observationHandler(new ObservationHandler.FirstMatchingCompositeObservationHandler(
            new PropagatingSenderTracingObservationHandler<>(tracer, propagator),
            new PropagatingReceiverTracingObservationHandler<>(tracer, propagator),
            new DefaultTracingObservationHandler(tracer)));

    back = RpcServer.builder().bindAddress("127.0.0.1", 0).name("back").meterRegistry(meters)
        .intercept(new ObservationServerInterceptor(observations))
        .addService(ServiceDefinition.builder("test.Back")
            .unary(BACK_ECHO, request -> {
              seenByBack.put("traceparent", String.valueOf(ServerContext.current().metadata().get("traceparent")));
              return "back:" + request;
            })
            .unary(BACK_FAIL, request -> {
              throw Status.NOT_FOUND.withDescription("no " + request).asException();
            })
            .unary(BACK_HOLD, request -> {
              ServerContext.current().onCancel(release::countDown); // answers OK once its caller gave up
              holding.countDown();
              release.await(10, TimeUnit.SECONDS);
              return request;
            })
            .build())
        .build().start();
    String backTarget = "127.0.0.1:" + back.port();
    backClient = RpcClient.builder().target(backTarget).meterRegistry(meters)
        .intercept(new ObservationClientInterceptor(observations, backTarget)).build();
    front = RpcServer.builder().bindAddress("127.0.0.1", 0).name("front").meterRegistry(meters)
        .intercept(new ObservationServerInterceptor(observations))
        .addService(ServiceDefinition.builder("test.Front")
            .unary(FRONT_CALL, request -> "front:" + backClient.unaryCall(BACK_ECHO, request))
            .build())
        .build().start();
    String frontTarget = "127.0.0.1:" + front.port();
    frontClient = RpcClient.builder().target(frontTarget)
        .intercept(new ObservationClientInterceptor(observations, frontTarget)).build();
  }

  @AfterEach
  void tearDown() throws Exception {
    release.countDown();
    for (RpcClient c : new RpcClient[] {frontClient, backClient}) {
      if (c != null) {
        c.close();
      }
    }
    for (RpcServer s : new RpcServer[] {front, back}) {
      if (s != null) {
        s.shutdownNow();
        s.awaitTermination(10, TimeUnit.SECONDS);
      }
    }
    tracerProvider.close();
  }

  /** The spans once {@code n} have ended: a server ends its span just after it queued the response. */
  private List<SpanData> awaitSpans(int n) {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (exporter.getFinishedSpanItems().size() < n && System.nanoTime() < until) {
      Thread.onSpinWait();
    }
    return exporter.getFinishedSpanItems();
  }

  private static SpanData span(List<SpanData> spans, String name, SpanKind kind) {
    List<SpanData> found = spans.stream().filter(s -> s.getName().equals(name) && s.getKind() == kind).toList();
    assertThat(found).as("one %s span %s among %s", kind, name, spans).hasSize(1);
    return found.get(0);
  }

  @Test
  void aCallAndTheCallItsHandlerMakesAreOneTraceOfClientAndServerSpans() {
    Observation root = Observation.start("test", observations);
    String answer;
    try (Observation.Scope scope = root.openScope()) {
      answer = frontClient.unaryCall(FRONT_CALL, "hi");
    } finally {
      root.stop();
    }
    assertThat(answer).isEqualTo("front:back:hi");

    List<SpanData> spans = awaitSpans(5);
    assertThat(spans).hasSize(5);
    SpanData test = span(spans, "test", SpanKind.INTERNAL);
    SpanData frontCallClient = span(spans, "test.Front/call", SpanKind.CLIENT);
    SpanData frontCallServer = span(spans, "test.Front/call", SpanKind.SERVER);
    SpanData backEchoClient = span(spans, "test.Back/echo", SpanKind.CLIENT);
    SpanData backEchoServer = span(spans, "test.Back/echo", SpanKind.SERVER);

    assertThat(spans).extracting(SpanData::getTraceId).containsOnly(test.getTraceId());
    assertThat(frontCallClient.getParentSpanId()).isEqualTo(test.getSpanId());
    assertThat(frontCallServer.getParentSpanId()).isEqualTo(frontCallClient.getSpanId());
    assertThat(backEchoClient.getParentSpanId()).as("the handler's call is a child of the server span")
        .isEqualTo(frontCallServer.getSpanId());
    assertThat(backEchoServer.getParentSpanId()).isEqualTo(backEchoClient.getSpanId());

    // W3C trace context in the request metadata: version 00, the trace, the calling span, then the flags.
    assertThat(seenByBack.get("traceparent"))
        .matches("00-" + test.getTraceId() + "-" + backEchoClient.getSpanId() + "-[0-9a-f]{2}");

    // The peer on client spans, the tags on both sides.
    assertThat(frontCallClient.getAttributes().get(AttributeKey.stringKey("server.address")))
        .isEqualTo("127.0.0.1:" + front.port());
    assertThat(frontCallClient.getAttributes().get(AttributeKey.stringKey("rpc.petrel.peer.port")))
        .isEqualTo(String.valueOf(front.port()));
    // ... and the tracer's own peer attributes (network.peer.address/port with the OpenTelemetry bridge).
    Map<String, Object> peer = frontCallClient.getAttributes().asMap().entrySet().stream()
        .filter(e -> e.getKey().getKey().contains("peer.")).collect(Collectors.toMap(e -> e.getKey().getKey(),
            Map.Entry::getValue));
    assertThat(peer).as("peer attributes of %s", frontCallClient.getAttributes())
        .containsValues("127.0.0.1", (long) front.port());
    Map<String, Object> serverPeer = backEchoServer.getAttributes().asMap().entrySet().stream()
        .filter(e -> e.getKey().getKey().contains("peer.")).collect(Collectors.toMap(e -> e.getKey().getKey(),
            Map.Entry::getValue));
    assertThat(serverPeer).as("peer attributes of %s", backEchoServer.getAttributes()).containsValue("127.0.0.1");
    assertThat(backEchoServer.getAttributes().get(AttributeKey.stringKey("client.address"))).isEqualTo("127.0.0.1");
    assertThat(backEchoServer.getAttributes().get(AttributeKey.stringKey("client.port"))).matches("[0-9]+");
    for (SpanData s : List.of(frontCallClient, frontCallServer, backEchoClient, backEchoServer)) {
      assertThat(s.getAttributes().get(AttributeKey.stringKey("rpc.system"))).isEqualTo("petrel");
      assertThat(s.getAttributes().get(AttributeKey.stringKey("rpc.petrel.status_code"))).isEqualTo("OK");
    }
    assertThat(backEchoServer.getAttributes().get(AttributeKey.stringKey("rpc.method"))).isEqualTo("echo");
  }

  @Test
  void aClientOfTwoServersPutsTheEndpointEachCallWentToOnItsSpan() throws Exception {
    // A second Back; each answers with its own port, so the test knows which one served a call.
    RpcServer[] backs = new RpcServer[2];
    RpcClient both = null;
    try {
      for (int i = 0; i < backs.length; i++) {
        int[] port = new int[1];
        backs[i] = RpcServer.builder().bindAddress("127.0.0.1", 0).name("back" + i)
            .addService(ServiceDefinition.builder("test.Back")
                .unary(BACK_ECHO, request -> String.valueOf(port[0]))
                .build())
            .build().start();
        port[0] = backs[i].port();
      }
      String target = "static://127.0.0.1:" + backs[0].port() + ",127.0.0.1:" + backs[1].port();
      both = RpcClient.builder().target(target).loadBalancer("round_robin")
          .intercept(new ObservationClientInterceptor(observations, target)).build();
      java.util.Set<String> served = new java.util.TreeSet<>();
      for (int call = 1; call <= 4; call++) {
        String port = both.unaryCall(BACK_ECHO, "which");
        served.add(port);
        SpanData client = awaitSpans(call).get(call - 1);
        assertThat(client.getKind()).isEqualTo(SpanKind.CLIENT);
        assertThat(client.getAttributes().get(AttributeKey.stringKey("rpc.petrel.peer.address")))
            .isEqualTo("127.0.0.1");
        assertThat(client.getAttributes().get(AttributeKey.stringKey("rpc.petrel.peer.port")))
            .as("the span of call %d names the server that answered it", call).isEqualTo(port);
        assertThat(client.getAttributes().get(AttributeKey.stringKey("server.address"))).isEqualTo(target);
      }
      assertThat(served).as("round robin used both servers")
          .containsExactlyInAnyOrder(String.valueOf(backs[0].port()), String.valueOf(backs[1].port()));
    } finally {
      if (both != null) {
        both.close();
      }
      for (RpcServer s : backs) {
        if (s != null) {
          s.shutdownNow();
          s.awaitTermination(10, TimeUnit.SECONDS);
        }
      }
    }
  }

  @Test
  void aFailedCallEndsBothSpansInErrorWithItsStatusCode() {
    assertThatThrownBy(() -> backClient.unaryCall(BACK_FAIL, "x")).isInstanceOfSatisfying(StatusException.class,
        e -> assertThat(e.code()).isEqualTo(Status.Code.NOT_FOUND));
    List<SpanData> spans = awaitSpans(2);
    SpanData client = span(spans, "test.Back/fail", SpanKind.CLIENT);
    SpanData server = span(spans, "test.Back/fail", SpanKind.SERVER);
    assertThat(server.getParentSpanId()).isEqualTo(client.getSpanId());
    for (SpanData s : List.of(client, server)) {
      assertThat(s.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
      assertThat(s.getAttributes().get(AttributeKey.stringKey("rpc.petrel.status_code"))).isEqualTo("NOT_FOUND");
    }
  }

  @Test
  void aCallItsCallerCancelsEndsItsSpanCancelledOnBothSides() throws Exception {
    java.util.concurrent.CompletableFuture<String> call = backClient.unaryCallAsync(BACK_HOLD, "x",
        io.petrel.rpc.CallOptions.DEFAULT);
    assertThat(holding.await(10, TimeUnit.SECONDS)).as("the handler runs").isTrue();
    assertThat(call.cancel(true)).isTrue();
    List<SpanData> spans = awaitSpans(2);
    // The handler answers OK after its caller cancelled: nobody received it, so its span is CANCELLED too.
    for (SpanKind kind : List.of(SpanKind.CLIENT, SpanKind.SERVER)) {
      assertThat(span(spans, "test.Back/hold", kind).getAttributes()
          .get(AttributeKey.stringKey("rpc.petrel.status_code"))).as(kind.name()).isEqualTo("CANCELLED");
    }
    // The client's span says why it ended in error (the bare CancellationException has no message).
    assertThat(span(spans, "test.Back/hold", SpanKind.CLIENT).getStatus().getDescription())
        .contains("the caller cancelled the call");
  }

  /** A handler that answers after its caller's deadline: both spans end in error, as DEADLINE_EXCEEDED. */
  @Test
  void aCallWhoseDeadlinePassesEndsBothSpansInError() throws Exception {
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> backClient.unaryCall(BACK_HOLD, "x",
        io.petrel.rpc.CallOptions.DEFAULT.withTimeout(java.time.Duration.ofMillis(300))))
        .isInstanceOf(io.petrel.rpc.StatusException.class);
    List<SpanData> spans = awaitSpans(2);
    for (SpanKind kind : List.of(SpanKind.CLIENT, SpanKind.SERVER)) {
      SpanData s = span(spans, "test.Back/hold", kind);
      assertThat(s.getAttributes().get(AttributeKey.stringKey("rpc.petrel.status_code"))).as(kind.name())
          .isEqualTo("DEADLINE_EXCEEDED");
      assertThat(s.getStatus().getStatusCode()).as(kind.name())
          .isEqualTo(io.opentelemetry.api.trace.StatusCode.ERROR);
    }
    assertThat(span(spans, "test.Back/hold", SpanKind.SERVER).getStatus().getDescription())
        .contains("answered after its caller's deadline had passed (by the server's clock)");
  }

  @Test
  void anInProcessCallHasNoNetworkPeer() throws Exception {
    RpcServer server = RpcServer.builder().inProcess("tracing-test").intercept(new ObservationServerInterceptor(
        observations)).addService(ServiceDefinition.builder("test.Back").unary(BACK_ECHO, r -> "in:" + r).build())
        .build().start();
    try (RpcClient client = RpcClient.builder().inProcess("tracing-test")
        .intercept(new ObservationClientInterceptor(observations, "inprocess:tracing-test")).build()) {
      assertThat(client.unaryCall(BACK_ECHO, "x")).isEqualTo("in:x");
      List<SpanData> spans = awaitSpans(2);
      SpanData c = span(spans, "test.Back/echo", SpanKind.CLIENT);
      SpanData srv = span(spans, "test.Back/echo", SpanKind.SERVER);
      assertThat(c.getAttributes().asMap().keySet()).extracting(AttributeKey::getKey)
          .as("no peer made up from the in-process name")
          .noneMatch(k -> k.startsWith("network.peer") || k.startsWith("rpc.petrel.peer"));
      assertThat(srv.getAttributes().get(AttributeKey.stringKey("client.address"))).startsWith("inprocess:");
      assertThat(srv.getAttributes().get(AttributeKey.stringKey("client.port"))).isNull();
    } finally {
      server.shutdownNow();
      server.awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void petrelsOwnMetersTimeEachCallOnceAndTheObservationsAddNoTimer() {
    assertThat(frontClient.unaryCall(FRONT_CALL, "m")).isEqualTo("front:back:m");
    awaitSpans(4);
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (meters.find("rpc.server.calls").tags("server", "front").timer() == null && System.nanoTime() < until) {
      Thread.onSpinWait();
    }
    assertThat(meters.get("rpc.server.calls").tags("server", "front", "method", "call").timer().count())
        .isEqualTo(1);
    assertThat(meters.get("rpc.client.calls").tags("method", "echo").timer().count()).isEqualTo(1);
    Map<String, Long> byName = meters.getMeters().stream()
        .collect(Collectors.groupingBy(m -> m.getId().getName(), Collectors.counting()));
    assertThat(byName.keySet()).noneMatch(name -> name.startsWith("petrel.rpc"));
  }
}
