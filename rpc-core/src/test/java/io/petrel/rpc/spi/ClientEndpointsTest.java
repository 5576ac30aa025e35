package io.petrel.rpc.spi;

import io.petrel.rpc.ConnectivityState;
import io.petrel.rpc.Subchannel;
import io.petrel.rpc.NameResolver;
import io.petrel.rpc.LoadBalancer;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.Endpoint;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.internal.InternalSubchannel;
import io.petrel.rpc.marshal.Marshallers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The core's side of a client over several endpoints, whatever the transport: subchannels made and closed as
 * the resolver says, each call counted on the endpoint picked for it until it ends (what least-pending compares),
 * weights passed on, and a clear status while no endpoint is known.
 */
class ClientEndpointsTest {
  private static final MethodDescriptor<byte[], byte[]> ECHO = MethodDescriptor.<byte[], byte[]>newBuilder()
      .serviceName("test.Svc").methodName("echo").requestMarshaller(Marshallers.bytes())
      .responseMarshaller(Marshallers.bytes()).build();

  private static final String LOGGER = "io.petrel.rpc.internal.ClientEndpoints";

  /** A resolver the test drives. */
  static final class Manual implements NameResolver {
    @Nullable Listener listener;
    boolean shutdown;
    int refreshes;

    @Override
    public void refresh() {
      refreshes++;
    }

    @Override
    public void start(Listener l) {
      listener = l;
    }

    @Override
    public void shutdown() {
      shutdown = true;
    }
  }

  private final List<RpcClient> clients = new ArrayList<>();

  @AfterEach
  void close() {
    clients.forEach(RpcClient::shutdownNow);
  }

  private RecordingTransport.Client client(RpcClient built) {
    clients.add(built);
    return RecordingTransport.of(built);
  }

  private static Status statusOf(CompletableFuture<?> f) throws Exception {
    try {
      f.get(10, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      return ((StatusException) e.getCause()).status();
    }
    throw new AssertionError("the call succeeded");
  }

  private static void answer(RecordingTransport.Call call) {
    var b = Unpooled.copiedBuffer("ok", UTF_8);
    try {
      call.onMessage(b, true);
    } finally {
      b.release();
    }
  }

  @Test
  void callsAreCountedOnTheirEndpointUntilTheyEnd() throws Exception {
    RecordingTransport.Client c = client(RpcClient.builder().target("static://a:1,b:2").transport("recording")
        .loadBalancer("round_robin").build());
    List<InternalSubchannel> subs = c.endpoints.subchannels();
    assertThat(subs).extracting(s -> s.endpoint().authority()).containsExactly("a:1", "b:2");
    List<CompletableFuture<byte[]>> calls = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      calls.add(c.unaryCallAsync(ECHO, new byte[] {1}, CallOptions.DEFAULT));
    }
    assertThat(subs).extracting(Subchannel::pendingCalls).containsExactly(2, 2);
    RecordingTransport.Call first = c.started.take();
    RecordingTransport.Call second = c.started.take();
    assertThat(first.subchannel).isNotSameAs(second.subchannel);
    answer(first);
    calls.get(1).cancel(false);
    assertThat(subs).extracting(Subchannel::pendingCalls).containsExactly(1, 1);
    c.started.take().fail(Status.UNAVAILABLE);
    c.started.take().deadlineExceeded("");
    assertThat(subs).extracting(Subchannel::pendingCalls).containsExactly(0, 0);
    assertThat(c.pendingCalls()).isZero();
  }

  @Test
  void theEndpointListenerHearsWhereEachCallGoesAndOneThatThrowsIsIgnored() throws Exception {
    RecordingTransport.Client c = client(RpcClient.builder().target("static://a:1,b:2").transport("recording")
        .loadBalancer("round_robin").build());
    List<String> heard = new java.util.concurrent.CopyOnWriteArrayList<>();
    CallOptions listening = CallOptions.DEFAULT.withEndpointListener(e -> heard.add(e.authority()))
        .withEndpointListener(e -> {
          throw new IllegalStateException("a listener's bug");
        });
    c.unaryCallAsync(ECHO, new byte[] {1}, listening);
    c.unaryCallAsync(ECHO, new byte[] {2}, listening);
    RecordingTransport.Call first = c.started.take();
    RecordingTransport.Call second = c.started.take();
    assertThat(heard).as("each call's endpoint, in order, though the second listener threw")
        .containsExactly(first.subchannel.endpoint().authority(), second.subchannel.endpoint().authority())
        .containsExactlyInAnyOrder("a:1", "b:2");
    answer(first);
    answer(second);
  }

  @Test
  void oneEndpointIsPickedWithoutCounting() throws Exception {
    RecordingTransport.Client c = client(RpcClient.builder().target("a:1").transport("recording").build());
    c.unaryCallAsync(ECHO, new byte[] {1}, CallOptions.DEFAULT);
    RecordingTransport.Call call = c.started.take();
    assertThat(call.subchannel.endpoint().authority()).isEqualTo("a:1");
    assertThat(call.subchannel.pendingCalls()).as("no balancer to count for").isZero();
    assertThat(c.pendingCalls()).isEqualTo(1);
  }

  @Test
  void resolverUpdatesKeepMakeAndCloseSubchannelsAndErrorsSayWhy() throws Exception {
    Manual resolver = new Manual();
    RecordingTransport.Client c = client(RpcClient.builder().nameResolver("manual://svc", resolver)
        .transport("recording").build());
    Status none = statusOf(c.unaryCallAsync(ECHO, new byte[] {1}, CallOptions.DEFAULT));
    assertThat(none.description()).isEqualTo("no endpoint for manual://svc yet; test.Svc/echo not sent");
    resolver.listener.onError(Status.UNAVAILABLE.withDescription("registry down"));
    assertThat(statusOf(c.unaryCallAsync(ECHO, new byte[] {1}, CallOptions.DEFAULT)).description())
        .isEqualTo("no endpoint for manual://svc yet: registry down; test.Svc/echo not sent");

    resolver.listener.onEndpoints(List.of(Endpoint.of("a", 1), Endpoint.of("b", 2)));
    List<InternalSubchannel> first = c.endpoints.subchannels();
    resolver.listener.onEndpoints(List.of(new Endpoint("b", 2, 5), Endpoint.of("c", 3)));
    List<InternalSubchannel> second = c.endpoints.subchannels();
    assertThat(second.get(0)).as("b kept").isSameAs(first.get(1));
    assertThat(second.get(0).endpoint().weight()).as("its new weight").isEqualTo(5);
    assertThat(first.get(0).state()).as("a closed").isEqualTo(ConnectivityState.SHUTDOWN);
    assertThat(second.get(0).state()).isNotEqualTo(ConnectivityState.SHUTDOWN);
    // An error keeps the endpoints it had.
    resolver.listener.onError(Status.UNAVAILABLE.withDescription("registry down"));
    assertThat(c.endpoints.subchannels()).isSameAs(second);

    c.shutdownNow();
    assertThat(c.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(resolver.shutdown).isTrue();
    assertThat(second).allSatisfy(s -> assertThat(s.state()).isEqualTo(ConnectivityState.SHUTDOWN));
    resolver.listener.onEndpoints(List.of(Endpoint.of("d", 4)));
    assertThat(c.endpoints.subchannels()).as("nothing made after shutdown").isSameAs(second);
  }

  /** What to run while the endpoints' INFO lines are captured. */
  private interface Steps {
    void run() throws Exception;
  }

  /** The INFO lines "client ... : endpoints X" logged while {@code steps} run, as X. */
  private static List<String> endpointsLines(Steps steps) throws Exception {
    ch.qos.logback.classic.Logger logger = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(
        ClientEndpointsTest.LOGGER);
    ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> seen =
        new ch.qos.logback.core.read.ListAppender<>();
    seen.start();
    logger.addAppender(seen);
    try {
      steps.run();
    } finally {
      logger.detachAppender(seen);
    }
    return seen.list.stream().filter(e -> e.getLevel() == ch.qos.logback.classic.Level.INFO)
        .map(e -> e.getFormattedMessage().replaceAll(".*: endpoints ", "")).toList();
  }

  /** A resolver that tells the same list again (a refresh, a registry reconnecting) logs no new INFO line. */
  @Test
  void theEndpointsLineIsLoggedOnlyWhenTheListChanges() throws Exception {
    List<String> lines = endpointsLines(() -> {
      Manual resolver = new Manual();
      client(RpcClient.builder().nameResolver("manual://svc", resolver).transport("recording").build());
      List<Endpoint> two = List.of(Endpoint.of("a", 1), Endpoint.of("b", 2));
      resolver.listener.onEndpoints(two);
      resolver.listener.onEndpoints(two);
      resolver.listener.onEndpoints(List.of(Endpoint.of("b", 2), Endpoint.of("a", 1))); // another order only
      resolver.listener.onEndpoints(List.of(Endpoint.of("a", 1), new Endpoint("b", 2, 5))); // a new weight
      resolver.listener.onEndpoints(List.of(Endpoint.of("a", 1)));
      resolver.listener.onEndpoints(List.of(Endpoint.of("a", 1)));
    });
    assertThat(lines).containsExactly("[a:1, b:2]", "[a:1, b:2;weight=5]", "[a:1]");
  }

  /**
   * An address listed twice (a registry with two nodes naming one server) gets one subchannel, the first entry's;
   * a long list is named in the INFO line up to 20 endpoints, then counted.
   */
  @Test
  void anAddressListedTwiceIsOneEndpointAndALongListIsCountedInItsLogLine() throws Exception {
    List<String> lines = endpointsLines(() -> {
      Manual resolver = new Manual();
      RecordingTransport.Client c = client(RpcClient.builder().nameResolver("manual://svc", resolver)
          .transport("recording").build());
      resolver.listener.onEndpoints(List.of(Endpoint.of("a", 1), new Endpoint("a", 1, 7), Endpoint.of("b", 2)));
      assertThat(c.endpoints.subchannels()).extracting(x -> x.endpoint().toString()).containsExactly("a:1", "b:2");
      List<Endpoint> many = new ArrayList<>();
      for (int i = 0; i < 30; i++) {
        many.add(Endpoint.of("h" + i, 7000));
      }
      many.add(Endpoint.of("h3", 7000)); // again
      resolver.listener.onEndpoints(many);
      assertThat(c.endpoints.subchannels()).hasSize(30);
    });
    assertThat(lines).containsExactly("[a:1, b:2]", "[h0:7000, h1:7000, h2:7000, h3:7000, h4:7000, h5:7000, h6:7000,"
        + " h7:7000, h8:7000, h9:7000, h10:7000, h11:7000, h12:7000, h13:7000, h14:7000, h15:7000, h16:7000,"
        + " h17:7000, h18:7000, h19:7000, ... and 10 more (30 in all)]");
  }

  /** A balancer that records what it is given and hears, and picks round robin. */
  static final class Recorder implements LoadBalancer, LoadBalancer.Factory {
    final List<String> events = new java.util.concurrent.CopyOnWriteArrayList<>();
    final List<Long> latencies = new java.util.concurrent.CopyOnWriteArrayList<>();
    volatile List<? extends Subchannel> subs = List.of();
    int next;

    @Override
    public String name() {
      return "recorder";
    }

    @Override
    public LoadBalancer newLoadBalancer() {
      return this;
    }

    @Override
    public @Nullable Subchannel pick(PickArgs call) {
      events.add("pick " + call.method().fullName() + " " + call.metadata().get("tenant") + " " + call.hashKey());
      List<? extends Subchannel> s = subs;
      return s.isEmpty() ? null : s.get(next++ % s.size());
    }

    @Override
    public void update(List<? extends Subchannel> subchannels) {
      subs = subchannels;
      events.add("update " + subchannels.stream().map(x -> x.endpoint().toString()).toList());
    }

    @Override
    public void onAttemptEnded(Subchannel subchannel, Status status, long latencyNanos) {
      events.add("ended " + subchannel.endpoint().authority() + " " + status.code());
      latencies.add(latencyNanos);
    }

    @Override
    public void onStateChange(Subchannel subchannel, ConnectivityState state, @Nullable Status cause) {
      events.add("state " + subchannel.endpoint().authority() + " " + state
          + (cause == null ? "" : " " + cause.description()));
    }
  }

  @Test
  void theBalancerPicksWithTheCallAndHearsEachOutcomeAndStateChange() throws Exception {
    Recorder lb = new Recorder();
    RecordingTransport.Client c = client(RpcClient.builder().target("static://a:1,b:2").transport("recording")
        .loadBalancer(lb).build());
    lb.events.clear();
    io.petrel.rpc.Metadata md = io.petrel.rpc.Metadata.of("tenant", "acme");
    CompletableFuture<byte[]> ok = c.unaryCallAsync(ECHO, new byte[] {1},
        CallOptions.DEFAULT.withMetadata(md).withHashKey("user-7"));
    CompletableFuture<byte[]> failed = c.unaryCallAsync(ECHO, new byte[] {1}, CallOptions.DEFAULT);
    assertThat(lb.events).filteredOn(e -> e.startsWith("pick"))
        .containsExactly("pick test.Svc/echo acme user-7", "pick test.Svc/echo null null");
    assertThat(lb.events).as("the core reports the states of the connections it made").containsSubsequence(
        "state a:1 CONNECTING", "state a:1 READY");
    answer(c.started.take());
    c.started.take().fail(Status.UNAVAILABLE.withDescription("gone"));
    assertThat(ok.get(10, TimeUnit.SECONDS)).isEqualTo("ok".getBytes(UTF_8));
    assertThat(statusOf(failed).code()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(lb.events).endsWith("ended a:1 OK", "ended b:2 UNAVAILABLE");
    assertThat(lb.latencies).allSatisfy(n -> assertThat(n).isPositive());

    InternalSubchannel a = c.endpoints.subchannels().get(0);
    assertThat(a.state()).as("its connection carried the first call").isEqualTo(ConnectivityState.READY);
    c.connectionsTo(a).get(0).lose(true); // lost after the server had answered: idle until the next call
    assertThat(a.state()).isEqualTo(ConnectivityState.IDLE);
    c.refused.add("a:1");
    lb.subs = List.of(a); // the next call goes to a, whose connect now fails
    // With a hash key the call follows its balancer (to a) rather than going to b when a cannot be reached.
    CompletableFuture<byte[]> refused = c.unaryCallAsync(ECHO, new byte[] {1},
        CallOptions.DEFAULT.withHashKey("k"));
    assertThat(statusOf(refused).description()).startsWith("cannot connect to a:1: refused by the test");
    assertThat(a.state()).isEqualTo(ConnectivityState.BACKING_OFF);
    assertThat(a.stateCause().description()).isEqualTo("cannot connect to a:1: refused by the test");
    assertThat(lb.events).containsSubsequence("state a:1 READY", "state a:1 IDLE", "state a:1 CONNECTING",
        "state a:1 BACKING_OFF cannot connect to a:1: refused by the test");
  }

  /**
   * Calls that cannot be sent to the endpoint their balancer insists on go to the others, spread over them, not
   * all to the first one listed (before: every one of them went to b:2), and evenly.
   */
  @Test
  void callsSentAwayFromAnUnreachableEndpointSpreadOverTheOthers() throws Exception {
    Recorder lb = new Recorder();
    RecordingTransport.Client c = client(RpcClient.builder().target("static://a:1,b:2,c:3,d:4")
        .transport("recording").loadBalancer(lb).build());
    c.refused.add("a:1");
    lb.subs = List.of(c.endpoints.subchannels().get(0)); // the balancer always says a:1, which cannot be reached
    int calls = 600;
    List<CompletableFuture<byte[]>> futures = new ArrayList<>();
    for (int i = 0; i < calls; i++) {
      futures.add(c.unaryCallAsync(ECHO, new byte[] {1}, CallOptions.DEFAULT));
    }
    java.util.Map<String, Integer> sentTo = new java.util.TreeMap<>();
    for (int i = 0; i < calls; i++) {
      RecordingTransport.Call attempt = c.started.poll(10, TimeUnit.SECONDS);
      assertThat(attempt).as("attempt " + i).isNotNull();
      sentTo.merge(java.util.Objects.requireNonNull(attempt.subchannel).endpoint().authority(), 1, Integer::sum);
      answer(attempt);
    }
    for (CompletableFuture<byte[]> f : futures) {
      assertThat(f.get(10, TimeUnit.SECONDS)).isEqualTo("ok".getBytes(UTF_8));
    }
    // 200 each expected (binomial, sd 11.5); 140-260 fails by chance about once in 10^7 runs. Before: all 600 on
    // b:2; with a start drawn at random and the first one after it taken, b:2 had half of them (300).
    assertThat(sentTo).containsOnlyKeys("b:2", "c:3", "d:4")
        .allSatisfy((endpoint, n) -> assertThat(n).as(endpoint).isBetween(140, 260));
  }

  @Test
  void endpointAttributesFromTheResolverReachTheBalancer() throws Exception {
    Manual resolver = new Manual();
    Recorder lb = new Recorder();
    RecordingTransport.Client c = client(RpcClient.builder().nameResolver("manual://svc", resolver)
        .transport("recording").loadBalancer(lb).build());
    Endpoint a = new Endpoint("a", 1, 1, "eu-1", "2.0", java.util.Map.of("rack", "r7"));
    resolver.listener.onEndpoints(List.of(a, Endpoint.of("b", 2)));
    InternalSubchannel sub = c.endpoints.subchannels().get(0);
    assertThat(sub.endpoint().zone()).isEqualTo("eu-1");
    assertThat(sub.endpoint().version()).isEqualTo("2.0");
    assertThat(sub.endpoint().attribute("rack")).isEqualTo("r7");
    // New attributes for the same address: the same subchannel (its connections kept), the new attributes.
    resolver.listener.onEndpoints(List.of(a.withVersion("2.1"), Endpoint.of("b", 2)));
    assertThat(c.endpoints.subchannels().get(0)).isSameAs(sub);
    assertThat(sub.endpoint().version()).isEqualTo("2.1");
    assertThat(lb.events).last().isEqualTo("update [a:1;zone=eu-1;version=2.1;rack=r7, b:2]");
  }

  @Test
  void aResolverThatListsNoEndpointIsToldApartFromOneThatFailed() throws Exception {
    Manual resolver = new Manual();
    RecordingTransport.Client c = client(RpcClient.builder().nameResolver("manual://svc", resolver)
        .transport("recording").build());
    resolver.listener.onEndpoints(List.of(Endpoint.of("a", 1), Endpoint.of("b", 2)));
    List<InternalSubchannel> had = c.endpoints.subchannels();

    // An error says nothing about the endpoints: the client keeps them and its calls go on.
    resolver.listener.onError(Status.UNAVAILABLE.withDescription("registry unreachable"));
    assertThat(c.endpoints.subchannels()).isSameAs(had);
    c.unaryCallAsync(ECHO, new byte[] {1}, CallOptions.DEFAULT);
    assertThat(c.started.take().subchannel).isIn(had);

    // An empty list is the registry saying there is none: the endpoints go, and calls fail saying so.
    resolver.listener.onEndpoints(List.of());
    assertThat(c.endpoints.subchannels()).isEmpty();
    assertThat(had).allSatisfy(s -> assertThat(s.state()).isEqualTo(ConnectivityState.SHUTDOWN));
    assertThat(c.connects).as("the connection that carried the call was drained").anySatisfy(
        x -> assertThat(x.drained).contains("by its resolver"));
    assertThat(statusOf(c.unaryCallAsync(ECHO, new byte[] {1}, CallOptions.DEFAULT)).description())
        .isEqualTo("no endpoint for manual://svc: its resolver lists no endpoint; test.Svc/echo not sent");

    resolver.listener.onEndpoints(List.of(Endpoint.of("c", 3)));
    c.unaryCallAsync(ECHO, new byte[] {1}, CallOptions.DEFAULT);
    assertThat(c.started.take().subchannel.endpoint().authority()).isEqualTo("c:3");
  }

  @Test
  void theResolverIsAskedToRefreshWhenAConnectionIsLostOrAnAttemptFails() throws Exception {
    Manual resolver = new Manual();
    RecordingTransport.Client c = client(RpcClient.builder().nameResolver("manual://svc", resolver)
        .transport("recording").build());
    resolver.listener.onEndpoints(List.of(Endpoint.of("a", 1)));
    InternalSubchannel a = c.endpoints.subchannels().get(0);
    c.unaryCallAsync(ECHO, new byte[] {1}, CallOptions.DEFAULT);
    c.started.take();
    assertThat(a.state()).isEqualTo(ConnectivityState.READY);
    assertThat(resolver.refreshes).isZero();
    c.connectionsTo(a).get(0).lose(true); // the connection was lost
    assertThat(resolver.refreshes).isEqualTo(1);
    c.refused.add("a:1");
    assertThat(statusOf(c.unaryCallAsync(ECHO, new byte[] {1}, CallOptions.DEFAULT)).code())
        .isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(a.state()).isEqualTo(ConnectivityState.BACKING_OFF);
    assertThat(resolver.refreshes).as("the attempt failed").isEqualTo(2);
    c.shutdownNow();
    assertThat(c.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(a.state()).isEqualTo(ConnectivityState.SHUTDOWN);
    assertThat(resolver.refreshes).as("not for the shutdown").isEqualTo(2);
  }

  /**
   * With several connections per endpoint, one lost or sent away (GOAWAY: a server retiring it by age) leaves
   * the endpoint READY on the others, and still asks the resolver to look again.
   */
  @Test
  void oneOfSeveralConnectionsLostOrSentAwayAsksForARefresh() throws Exception {
    Manual resolver = new Manual();
    RecordingTransport.Client c = client(RpcClient.builder().nameResolver("manual://svc", resolver)
        .connectionsPerEndpoint(3).transport("recording").build());
    resolver.listener.onEndpoints(List.of(Endpoint.of("a", 1)));
    InternalSubchannel a = c.endpoints.subchannels().get(0);
    for (int i = 0; i < 3; i++) {
      c.unaryCallAsync(ECHO, new byte[] {1}, CallOptions.DEFAULT);
      answer(c.started.take());
    }
    assertThat(c.connectionsTo(a)).hasSize(3);
    assertThat(resolver.refreshes).isZero();
    RecordingTransport.Conn first = c.connectionsTo(a).get(0);
    first.usable = false;
    first.listener.goaway();
    assertThat(a.state()).isEqualTo(ConnectivityState.READY);
    assertThat(resolver.refreshes).as("a GOAWAY on one connection").isEqualTo(1);
    first.lose(true);
    assertThat(resolver.refreshes).as("not again when that connection then closes").isEqualTo(1);
    c.connectionsTo(a).get(0).lose(true);
    assertThat(a.state()).isEqualTo(ConnectivityState.READY);
    assertThat(resolver.refreshes).as("another connection lost").isEqualTo(2);
  }

  /**
   * A blocking caller whose transport never ends the call (this test's transport has no deadline timer, as a
   * transport whose timer cannot run on time) ends it itself, naming the endpoint and what it was doing; a hedged
   * call names each attempt's.
   */
  @Test
  void aBlockingCallersOwnDeadlineNamesEachAttemptsEndpoint() throws Exception {
    Manual resolver = new Manual();
    RecordingTransport.Client c = client(RpcClient.builder().nameResolver("manual://svc", resolver)
        .transport("recording").build());
    resolver.listener.onEndpoints(List.of(Endpoint.of("a", 1)));
    StatusException e = org.junit.jupiter.api.Assertions.assertThrows(StatusException.class,
        () -> c.rpc.unaryCall(ECHO, new byte[] {1}, CallOptions.DEFAULT.withTimeout(Duration.ofMillis(200))));
    assertThat(e.status().code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(e.status().description()).contains("deadline passed while waiting for test.Svc/echo",
        "(endpoint a:1: connected (the call was sent, or about to be, and no answer came))");

    MethodDescriptor<byte[], byte[]> idempotent = MethodDescriptor.<byte[], byte[]>newBuilder()
        .serviceName("test.Svc").methodName("echo").requestMarshaller(Marshallers.bytes())
        .responseMarshaller(Marshallers.bytes()).idempotent(true).build();
    RecordingTransport.Client h = client(RpcClient.builder().nameResolver("manual://svc", new Manual())
        .hedging(2, Duration.ofMillis(20)).transport("recording").build());
    h.endpoints.onEndpoints(List.of(Endpoint.of("a", 1), Endpoint.of("b", 2)));
    StatusException he = org.junit.jupiter.api.Assertions.assertThrows(StatusException.class,
        () -> h.rpc.unaryCall(idempotent, new byte[] {1}, CallOptions.DEFAULT.withTimeout(Duration.ofMillis(300))));
    assertThat(he.status().description()).containsPattern(
        "\\(attempt 1: endpoint [ab]:[12]: connected [^;]*; attempt 2: endpoint [ab]:[12]: connected");
  }

  /**
   * The core closes a connection whose server has said nothing within the connect timeout (the transport only
   * says when the first frame came), as a failed connect attempt: the endpoint backs off saying why, and the call
   * waiting there fails with that reason, before its deadline.
   */
  @Test
  void aConnectionWhoseServerSaysNothingIsClosedAfterTheConnectTimeout() throws Exception {
    Manual resolver = new Manual();
    RecordingTransport.Client c = client(RpcClient.builder().nameResolver("manual://svc", resolver)
        .connectTimeout(Duration.ofMillis(200)).transport("recording").build());
    c.manualConnects = true;
    resolver.listener.onEndpoints(List.of(Endpoint.of("a", 1)));
    InternalSubchannel a = c.endpoints.subchannels().get(0);
    long start = System.nanoTime();
    CompletableFuture<byte[]> call = c.unaryCallAsync(ECHO, new byte[] {1},
        CallOptions.DEFAULT.withTimeout(Duration.ofMillis(1500)));
    RecordingTransport.Conn silent = c.asked.take();
    silent.connectSilently();
    assertThat(a.state()).isEqualTo(ConnectivityState.CONNECTING);
    RecordingTransport.Call held = c.started.take(); // sent on the connection, which holds it (no first frame)
    assertThat(silent.closed.get(5, TimeUnit.SECONDS)).as("closed by the core").isNull();
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).as("ms to close").isLessThan(5_000);
    assertThat(silent.closedBecause).contains("connected, but the server sent nothing within the connect timeout of"
        + " 200 ms", "(RpcClient.builder().connectTimeout)");
    assertThat(a.state()).isEqualTo(ConnectivityState.BACKING_OFF);
    assertThat(a.stateCause().description()).contains("cannot connect to a:1: connected, but the server sent"
        + " nothing within the connect timeout of 200 ms");
    // The transport ends what it held as never written: the call waits for the next attempt (this transport's
    // connects never complete), and its deadline's message says why the last one failed.
    held.onClose(Status.UNAVAILABLE.withDescription("connection closed"), AttemptProgress.REFUSED);
    assertThat(statusOf(call).description()).contains("sent nothing within the connect timeout");

    // A server that answers in time keeps its connection past the timeout.
    RecordingTransport.Client d = client(RpcClient.builder().nameResolver("manual://svc", new Manual())
        .connectTimeout(Duration.ofMillis(100)).transport("recording").build());
    d.endpoints.onEndpoints(List.of(Endpoint.of("b", 2)));
    CompletableFuture<byte[]> ok = d.unaryCallAsync(ECHO, new byte[] {1}, CallOptions.DEFAULT);
    answer(d.started.take());
    ok.get(10, TimeUnit.SECONDS);
    RecordingTransport.Conn kept = d.connects.get(0);
    // The core's first-frame timer runs on the transport's one scheduler thread: a task scheduled there past the
    // connect timeout runs after it would have.
    java.util.concurrent.CountDownLatch pastTheTimeout = new java.util.concurrent.CountDownLatch(1);
    d.scheduler().schedule(pastTheTimeout::countDown, 200, TimeUnit.MILLISECONDS);
    assertThat(pastTheTimeout.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(kept.closedBecause).isNull();
    assertThat(kept.usable).isTrue();
  }

  /**
   * RpcClient.state(): BACKING_OFF after a failed attempt and while trying again after it (a host that drops
   * connects would otherwise flip to CONNECTING), IDLE once the backoff has passed with no call waiting (a review
   * found it stuck at BACKING_OFF, holding a Spring app out of service).
   */
  @Test
  void theClientsStateIsBackingOffWhileItFailsAndIdleWhenNothingTries() throws Exception {
    Manual resolver = new Manual();
    RecordingTransport.Client c = client(RpcClient.builder().nameResolver("manual://svc", resolver)
        .reconnectBackoff(Duration.ofMillis(100), Duration.ofMillis(100)).transport("recording").build());
    c.manualConnects = true;
    assertThat(c.rpc.state()).as("no endpoint yet").isEqualTo(ConnectivityState.BACKING_OFF);
    resolver.listener.onEndpoints(List.of(Endpoint.of("a", 1)));
    assertThat(c.rpc.state()).isEqualTo(ConnectivityState.IDLE);
    CompletableFuture<byte[]> call = c.unaryCallAsync(ECHO, new byte[] {1}, CallOptions.DEFAULT.withFailFast(true));
    RecordingTransport.Conn first = c.asked.take();
    assertThat(c.rpc.state()).isEqualTo(ConnectivityState.CONNECTING);
    first.fail("refused by the test");
    assertThat(statusOf(call).code()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(c.rpc.state()).isEqualTo(ConnectivityState.BACKING_OFF);
    InternalSubchannel a = c.endpoints.subchannels().get(0);
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (a.state() != ConnectivityState.IDLE) {
      assertThat(System.nanoTime()).as("the backoff ends").isLessThan(until);
      Thread.onSpinWait();
    }
    assertThat(c.rpc.state()).as("idle after the backoff, nothing waiting").isEqualTo(ConnectivityState.IDLE);
    CompletableFuture<byte[]> again = c.unaryCallAsync(ECHO, new byte[] {1},
        CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(5)));
    RecordingTransport.Conn second = c.asked.take();
    assertThat(c.rpc.state()).as("trying again after a failure").isEqualTo(ConnectivityState.BACKING_OFF);
    second.succeed();
    answer(c.started.take());
    again.get(5, TimeUnit.SECONDS);
    assertThat(c.rpc.state()).isEqualTo(ConnectivityState.READY);
    c.rpc.shutdownNow();
    assertThat(c.rpc.state()).isEqualTo(ConnectivityState.SHUTDOWN);
  }
}
