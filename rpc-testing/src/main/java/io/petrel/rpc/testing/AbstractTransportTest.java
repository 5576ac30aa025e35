package io.petrel.rpc.testing;

import static io.petrel.rpc.testing.CallFailures.assertFails;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.StringValue;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.ClientInterceptor;
import io.petrel.rpc.ExceptionDetails;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcClientBuilder;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.RpcServerBuilder;
import io.petrel.rpc.ServerInterceptor;
import io.petrel.rpc.ServerLifecycleListener;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.stub.DeclaredExceptions;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;
import javax.security.auth.x500.X500Principal;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The conformance suite of a Petrel transport: what every transport must do the same, as a caller sees it.
 * Subclass it for a transport with the two factories; a transport that legitimately differs says so by
 * overriding a hook (documented on each), never by skipping a test. Every failed call is checked with
 * {@link CallFailures}: status code and the message fragments common to all transports.
 *
 * <p>Covers: round trips of every kind of call (the handler never gets the caller's own request object);
 * server errors; unknown methods; deadlines (on time, the server's call cancelled) and cancellation; the limits
 * ({@code maxConcurrentCallsPerConnection}, {@code maxFrameSize} and {@code maxMetadataSize} on both sides,
 * {@code maxPendingCalls}); metadata both ways; interceptors on both sides; callback executors; client call
 * metrics; retries (idempotent calls retried on UNAVAILABLE within the retry budget, others run at most once;
 * a call refused before it ran fails with the server's status as it came when there is no other endpoint);
 * graceful drain, the lifecycle listeners and the drain delay; and a closed server or client failing only its own calls.
 */
public abstract class AbstractTransportTest {
  private static final long WAIT_SECONDS = 10;

  private final ConformanceService service = new ConformanceService();
  private final Deque<AutoCloseable> resources = new ArrayDeque<>();

  /** A server builder of the transport under test, its address set (an in-process name, 127.0.0.1 port 0). */
  protected abstract RpcServerBuilder serverBuilder();

  /** A client builder of the transport under test, pointed at {@code server} (made from {@link #serverBuilder}). */
  protected abstract RpcClientBuilder clientBuilder(RpcServer server);

  /**
   * Whether a client holds calls beyond the server's {@code maxConcurrentCallsPerConnection} until earlier calls
   * end (true for Netty: the server announces the limit in its SETTINGS frame), rather than having the server
   * refuse them with RESOURCE_EXHAUSTED (the default, and the in-process transport, whose client does not
   * queue).
   */
  protected boolean clientQueuesCallsBeyondTheServersLimit() {
    return false;
  }

  // ---- fixture ----

  private RpcServer startServer(ConformanceService svc, UnaryOperator<RpcServerBuilder> options) throws Exception {
    RpcServer server = options.apply(serverBuilder().addService(svc.definition())).build().start();
    resources.addLast(() -> {
      svc.releaseAll();
      server.shutdownNow();
      assertThat(server.awaitTermination(20, TimeUnit.SECONDS)).as("server %s terminated", server).isTrue();
    });
    return server;
  }

  private RpcServer startServer(UnaryOperator<RpcServerBuilder> options) throws Exception {
    return startServer(service, options);
  }

  private RpcClient client(RpcServer server, UnaryOperator<RpcClientBuilder> options) {
    RpcClient client = options.apply(clientBuilder(server)).build();
    resources.addFirst(() -> {
      client.shutdownNow();
      assertThat(client.awaitTermination(20, TimeUnit.SECONDS)).as("client %s terminated", client).isTrue();
    });
    return client;
  }

  private RpcClient client(RpcServer server) {
    return client(server, b -> b);
  }

  private ExecutorService executor(String threadName) {
    ExecutorService e = Executors.newSingleThreadExecutor(r -> new Thread(r, threadName));
    resources.addFirst(e::shutdownNow);
    return e;
  }

  @AfterEach
  public void closeAll() throws Exception {
    service.releaseAll();
    AutoCloseable r;
    while ((r = resources.pollFirst()) != null) {
      r.close();
    }
  }

  private static StringValue text(String s) {
    return StringValue.of(s);
  }

  private String nextHolding(ConformanceService svc) throws InterruptedException {
    String s = svc.holding.poll(WAIT_SECONDS, TimeUnit.SECONDS);
    assertThat(s).as("a HOLD call reached the handler within %d s", WAIT_SECONDS).isNotNull();
    return s;
  }

  private String nextCancelled(ConformanceService svc) throws InterruptedException {
    String s = svc.cancelled.poll(WAIT_SECONDS, TimeUnit.SECONDS);
    assertThat(s).as("a HOLD call was cancelled on the server within %d s", WAIT_SECONDS).isNotNull();
    return s;
  }

  // ---- round trips ----

  @Test
  public void everyKindOfCallRoundTripsAndTheHandlerNeverSharesTheCallersObjects() throws Exception {
    RpcServer server = startServer(b -> b);
    RpcClient client = client(server);

    StringValue hello = text("hello");
    assertThat(client.unaryCall(ConformanceService.ECHO, hello)).isEqualTo(hello);
    assertThat(service.requestsSeen.poll()).as("the handler decodes a request of its own").isEqualTo(hello)
        .isNotSameAs(hello);
    assertThat(client.unaryCall(ConformanceService.ADD, new Object[] {40, 2})).isEqualTo(42);
    assertThat(client.unaryCallAsync(ConformanceService.ASYNC_ECHO, text("a"), CallOptions.DEFAULT)
        .get(WAIT_SECONDS, TimeUnit.SECONDS).getValue()).isEqualTo("async:a");

    byte[] bytes = {1, 2, 3, 4};
    byte[] reversed = client.unaryCall(ConformanceService.REVERSE, bytes);
    assertThat(reversed).isEqualTo(new byte[] {4, 3, 2, 1}).isNotSameAs(bytes);
    assertThat(bytes).as("the handler reversed its own copy, not the caller's array").isEqualTo(new byte[] {1, 2, 3, 4});

    assertThat(client.oneway(ConformanceService.LOG, text("a line"), CallOptions.DEFAULT)
        .get(WAIT_SECONDS, TimeUnit.SECONDS)).isNull();
    assertThat(service.logged.poll(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("a line");

    List<CompletableFuture<Integer>> many = new ArrayList<>();
    for (int i = 0; i < 500; i++) {
      many.add(client.unaryCallAsync(ConformanceService.ADD, new Object[] {i, 1}, CallOptions.DEFAULT));
    }
    for (int i = 0; i < many.size(); i++) {
      assertThat(many.get(i).get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo(i + 1);
    }
    assertThat(client.pendingCalls()).isZero();
  }

  // ---- failures from the server ----

  @Test
  public void aServersErrorReachesTheCallerWithItsStatusAndMessage() throws Exception {
    RpcServer server = startServer(b -> b);
    RpcClient client = client(server);
    assertFails(() -> client.unaryCall(ConformanceService.NOT_FOUND, text("x")), Status.Code.NOT_FOUND,
        "no such thing: x");
    assertFails(client.unaryCallAsync(ConformanceService.NOT_FOUND, text("y"), CallOptions.DEFAULT),
        Status.Code.NOT_FOUND, "no such thing: y");
    // An exception the method does not declare: UNKNOWN, without its class or message (exceptionDetails default).
    StatusException crash = assertFails(() -> client.unaryCall(ConformanceService.CRASH, text("z")),
        Status.Code.UNKNOWN, UNDECLARED_CRASH);
    assertThat(crash.status().description()).doesNotContain("IllegalStateException", "crashed");
    assertThat(client.unaryCall(ConformanceService.ECHO, text("still serving")).getValue())
        .isEqualTo("still serving");
  }

  private static final String UNDECLARED_CRASH = "conformance.Echo/crash failed on the server: its handler threw"
      + " an exception the method does not declare (the server logs it; declare it on the method, map it with"
      + " RpcServer.builder().exceptionMapper, or let the server send it with exceptionDetails(ALL))";

  /**
   * An exception the method declares arrives as itself, as the generated stubs rebuild it (blocking and async,
   * with {@link DeclaredExceptions} as they use it), from a blocking and an asynchronous handler; one it does not
   * declare sends neither its class nor its message, in the description or the response metadata.
   */
  @Test
  public void aDeclaredExceptionArrivesAsItselfAndAnUndeclaredOneNamesNothing() throws Exception {
    RpcServer server = startServer(b -> b);
    RpcClient client = client(server);
    for (var method : List.of(ConformanceService.OPEN, ConformanceService.OPEN_ASYNC)) {
      // The blocking stub: catch the StatusException, match the declared names, throw new X(message).
      DeclaredExceptions blocking = DeclaredExceptions.capture(CallOptions.DEFAULT);
      StatusException e = assertFails(() -> client.unaryCall(method, text("a.txt"), blocking.options()),
          Status.Code.UNKNOWN, "java.io.FileNotFoundException: no file a.txt");
      assertThat(blocking.match(e, "java.io.FileNotFoundException")).as(method.fullName()).isZero();
      assertThat(blocking.message()).isEqualTo("no file a.txt");
      // The async stub: its future fails with the declared exception itself.
      DeclaredExceptions async = DeclaredExceptions.capture(CallOptions.DEFAULT);
      CompletableFuture<StringValue> f = async.map(client.unaryCallAsync(method, text("b.txt"), async.options()),
          (index, message) -> new java.io.FileNotFoundException(message), "java.io.FileNotFoundException");
      Throwable thrown = org.assertj.core.api.Assertions.catchThrowable(() -> f.get(WAIT_SECONDS, TimeUnit.SECONDS));
      assertThat(thrown).isInstanceOf(java.util.concurrent.ExecutionException.class);
      Throwable failure = java.util.Objects.requireNonNull(thrown, "the future's failure").getCause();
      assertThat(failure).as(method.fullName()).isInstanceOf(java.io.FileNotFoundException.class)
          .hasMessage("no file b.txt").hasCauseInstanceOf(StatusException.class);
      // An exception the same method does not declare names nothing.
      AtomicReference<Metadata> metadata = new AtomicReference<>();
      StatusException undeclared = assertFails(() -> client.unaryCall(method, text("crash"),
          CallOptions.DEFAULT.withResponseMetadataListener(metadata::set)), Status.Code.UNKNOWN,
          method.fullName() + " failed on the server: its handler threw an exception the method does not declare");
      assertThat(undeclared.status().description()).doesNotContain("IllegalStateException", "secret");
      Metadata answered = java.util.Objects.requireNonNull(metadata.get(), "the response metadata");
      assertThat(answered.get(DeclaredExceptions.CLASS_KEY)).isNull();
      assertThat(answered.get(DeclaredExceptions.MESSAGE_KEY)).isNull();
    }
  }

  /** With exceptionDetails(ALL), an undeclared exception's class and message travel, as a stub reads them. */
  @Test
  public void withAllDetailsAnUndeclaredExceptionIsNamed() throws Exception {
    RpcServer server = startServer(b -> b.exceptionDetails(ExceptionDetails.ALL));
    RpcClient client = client(server);
    AtomicReference<Metadata> metadata = new AtomicReference<>();
    assertFails(() -> client.unaryCall(ConformanceService.CRASH, text("z"),
        CallOptions.DEFAULT.withResponseMetadataListener(metadata::set)), Status.Code.UNKNOWN,
        "java.lang.IllegalStateException: crashed on z");
    Metadata answered = java.util.Objects.requireNonNull(metadata.get(), "the response metadata");
    assertThat(answered.getAll(DeclaredExceptions.CLASS_KEY)).containsExactly("java.lang.IllegalStateException");
    assertThat(answered.get(DeclaredExceptions.MESSAGE_KEY)).isEqualTo("crashed on z");
  }

  @Test
  public void aLongErrorDescriptionIsCutWithAVisibleMarkAndTheExceptionIsNamedInMetadata() throws Exception {
    // exceptionDetails(ALL): CRASH does not declare its exception; with ALL its class and message are sent.
    RpcServer server = startServer(b -> b.exceptionDetails(ExceptionDetails.ALL));
    RpcClient client = client(server);
    String full = "java.lang.IllegalStateException: crashed on " + "x".repeat(100_000);
    AtomicReference<Metadata> metadata = new AtomicReference<>();
    StatusException e = assertFails(() -> client.unaryCall(ConformanceService.CRASH, text("x".repeat(100_000)),
        CallOptions.DEFAULT.withResponseMetadataListener(metadata::set)), Status.Code.UNKNOWN);
    String description = e.status().description();
    assertThat(description).isNotNull();
    assertThat(description.length()).isLessThanOrEqualTo(64 * 1024).isGreaterThan(64 * 1024 - 40);
    String kept = description.substring(0, description.indexOf("... [truncated "));
    assertThat(full).startsWith(kept);
    assertThat(description).endsWith("... [truncated " + (full.length() - kept.length()) + " bytes]");
    // What a generated stub reads to rethrow a declared exception: the class names and the (capped) message.
    Metadata answered = metadata.get();
    assertThat(answered).isNotNull();
    assertThat(answered.getAll("petrel-exception-class")).containsExactly("java.lang.IllegalStateException");
    String message = answered.get("petrel-exception-message");
    assertThat(message).isNotNull();
    assertThat(message).startsWith("crashed on xxx").endsWith(" bytes]");
    assertThat(message.length()).isLessThanOrEqualTo(4096);
  }

  @Test
  public void anUnknownMethodIsUnimplemented() throws Exception {
    RpcServer server = startServer(b -> b);
    RpcClient client = client(server);
    assertFails(() -> client.unaryCall(ConformanceService.MISSING, text("?")), Status.Code.UNIMPLEMENTED,
        "conformance.Echo/missing is not implemented by", "no method with id", "conformance.Echo");
    assertThat(client.unaryCall(ConformanceService.ECHO, text("next")).getValue()).isEqualTo("next");
  }

  // ---- deadlines and cancellation ----

  @Test
  public void theDeadlineEndsTheCallOnTimeAndCancelsItOnTheServer() throws Exception {
    RpcServer server = startServer(b -> b);
    RpcClient client = client(server);
    long start = System.nanoTime();
    CompletableFuture<StringValue> slow = client.unaryCallAsync(ConformanceService.HOLD, text("slow"),
        CallOptions.DEFAULT.withTimeout(Duration.ofMillis(300)));
    assertThat(nextHolding(service)).isEqualTo("slow");
    assertFails(slow, Status.Code.DEADLINE_EXCEEDED, "deadline exceeded", "conformance.Echo/hold");
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    assertThat(tookMs).as("ended near its 300 ms deadline").isBetween(250L, 5_000L);
    assertThat(nextCancelled(service)).isEqualTo("slow");
    assertThat(client.pendingCalls()).isZero();

    // A blocking call with the client's default deadline.
    RpcClient impatient = client(server, b -> b.defaultDeadline(Duration.ofMillis(200)));
    assertFails(() -> impatient.unaryCall(ConformanceService.HOLD, text("blocking")), Status.Code.DEADLINE_EXCEEDED);
    assertThat(nextCancelled(service)).isEqualTo("blocking");
    assertThat(client.unaryCall(ConformanceService.ECHO, text("after")).getValue()).isEqualTo("after");
  }

  @Test
  public void cancellingTheFutureCancelsTheCallOnTheServer() throws Exception {
    RpcServer server = startServer(b -> b);
    RpcClient client = client(server);
    CompletableFuture<StringValue> doomed =
        client.unaryCallAsync(ConformanceService.HOLD, text("doomed"), CallOptions.DEFAULT);
    assertThat(nextHolding(service)).isEqualTo("doomed");
    assertThat(doomed.cancel(true)).isTrue();
    assertThat(doomed).isCancelled();
    assertThat(nextCancelled(service)).isEqualTo("doomed");
    assertThat(client.pendingCalls()).isZero();
    assertThat(client.unaryCall(ConformanceService.ECHO, text("after")).getValue()).isEqualTo("after");
  }

  @Test
  public void cancellingACallCancelsTheCallsItsHandlerMadeForIt() throws Exception {
    ConformanceService back = new ConformanceService();
    RpcClient toBack = client(startServer(back, b -> b));
    service.downstream = toBack;
    RpcClient client = client(startServer(b -> b));
    // Deadlines of a minute: only the cancellation can end these calls within the test's waits.
    CallOptions aMinute = CallOptions.DEFAULT.withTimeout(Duration.ofMinutes(1));
    CompletableFuture<StringValue> outer = client.unaryCallAsync(ConformanceService.RELAY, text("nested"), aMinute);
    assertThat(nextHolding(back)).isEqualTo("nested");
    assertThat(outer.cancel(true)).isTrue();
    assertThat(nextCancelled(back)).as("the nested call cancelled on the next server").isEqualTo("nested");
    assertThat(service.relayed.poll(WAIT_SECONDS, TimeUnit.SECONDS)).as("how the middle tier's call ended")
        .startsWith("CANCELLED: conformance.Echo/hold was cancelled because the call it was made for,"
            + " conformance.Echo/relay, was cancelled: the caller cancelled the call");
    assertThat(toBack.pendingCalls()).isZero();

    // A call made for a call already cancelled is not sent.
    CompletableFuture<StringValue> waiting = client.unaryCallAsync(ConformanceService.RELAY, text("wait:late"),
        aMinute);
    assertThat(service.relayWaiting.poll(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("wait:late");
    assertThat(waiting.cancel(true)).isTrue();
    assertThat(service.relayed.poll(WAIT_SECONDS, TimeUnit.SECONDS))
        .startsWith("CANCELLED: conformance.Echo/hold not sent: cancelled because the call it was made for,"
            + " conformance.Echo/relay, was cancelled: the caller cancelled the call");

    // The same from an async handler's stage on another thread, the served call's context carried there.
    CompletableFuture<StringValue> async = client.unaryCallAsync(ConformanceService.RELAY_ASYNC, text("async"),
        aMinute);
    assertThat(nextHolding(back)).isEqualTo("async");
    assertThat(async.cancel(true)).isTrue();
    assertThat(nextCancelled(back)).as("the async stage's call cancelled on the next server").isEqualTo("async");
    assertThat(service.relayed.poll(WAIT_SECONDS, TimeUnit.SECONDS))
        .startsWith("CANCELLED: conformance.Echo/hold was cancelled because the call it was made for,"
            + " conformance.Echo/relayAsync, was cancelled: the caller cancelled the call");

    // A deadline the middle tier's call took from the call it serves: its failure says where it came from,
    // whichever ends it first (its own timer, or the served call's CANCEL).
    assertFails(client.unaryCallAsync(ConformanceService.RELAY, text("timed"),
        CallOptions.DEFAULT.withTimeout(Duration.ofMillis(300))), Status.Code.DEADLINE_EXCEEDED);
    assertThat(nextHolding(back)).isEqualTo("timed");
    assertThat(service.relayed.poll(WAIT_SECONDS, TimeUnit.SECONDS)).startsWith("DEADLINE_EXCEEDED: ")
        .contains("conformance.Echo/hold").containsAnyOf(
            "the deadline was that of conformance.Echo/relay, the call this one was made for",
            "cancelled because the deadline of the call it was made for, conformance.Echo/relay, passed");

    // Calls that are not cancelled go through the middle tier as before.
    back.releaseAll();
    assertThat(client.unaryCall(ConformanceService.RELAY, text("after"), aMinute).getValue()).isEqualTo("held:after");
    assertThat(service.relayed.poll(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("OK");
    assertThat(back.holding).containsExactly("after"); // "wait:late" did not reach the next server
  }

  @Test
  public void anAnswerGivenAfterTheCallerGaveUpIsNotCountedAsASuccess() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    // One business thread: a call served after a LATE one runs once that one's run, its counting included, is over.
    RpcServer server = startServer(b -> b.meterRegistry(registry).name("late").businessThreads(1));
    RpcClient client = client(server);
    CompletableFuture<StringValue> cancelled = client.unaryCallAsync(ConformanceService.LATE, text("c"),
        CallOptions.DEFAULT.withTimeout(Duration.ofMinutes(1)));
    assertThat(service.lateRunning.poll(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("c");
    assertThat(cancelled.cancel(true)).isTrue();
    assertThat(service.lateCancelCodes.poll(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("c CANCELLED: the caller cancelled the call");
    assertThat(service.lateAnswered.poll(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("c");
    assertServerCalls(client, registry, "CANCELLED", 1);

    CompletableFuture<StringValue> expired = client.unaryCallAsync(ConformanceService.LATE, text("d"),
        CallOptions.DEFAULT.withTimeout(Duration.ofMillis(300)));
    assertFails(expired, Status.Code.DEADLINE_EXCEEDED, "deadline exceeded");
    // As soon as the server hears of it, before its own reading of the deadline (rounded up to whole ms, and
    // taken when the request arrived) has passed: the client says why it cancelled.
    assertThat(service.lateCancelCodes.poll(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("d DEADLINE_EXCEEDED: the caller's deadline passed");
    assertThat(service.lateAnswered.poll(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("d");
    assertServerCalls(client, registry, "DEADLINE_EXCEEDED", 1);
    assertThat(registry.find("rpc.server.calls").tag("method", "late").tag("status", "OK").timer())
        .as("late answers counted OK").isNull();
  }

  /**
   * Asserts that the server has counted {@code n} calls of "late" with {@code status}: first an ECHO through the
   * same single business thread, whose answer comes only after the LATE call before it has been counted (the
   * server counts a call on its thread just after its handler returns).
   */
  private static void assertServerCalls(RpcClient client, SimpleMeterRegistry registry, String status, long n) {
    assertThat(client.unaryCall(ConformanceService.ECHO, text("barrier")).getValue()).isEqualTo("barrier");
    Timer t = registry.find("rpc.server.calls").tag("method", "late").tag("status", status).timer();
    assertThat(t).as("rpc.server.calls{method=late,status=%s}", status).isNotNull();
    assertThat(t.count()).isEqualTo(n);
  }

  // ---- limits ----

  @Test
  public void aConnectionHasAtMostTheServersMaxConcurrentCallsPerConnectionInFlight() throws Exception {
    RpcServer server = startServer(b -> b.maxConcurrentCallsPerConnection(1));
    RpcClient client = client(server);
    CompletableFuture<StringValue> first =
        client.unaryCallAsync(ConformanceService.HOLD, text("first"), CallOptions.DEFAULT);
    assertThat(nextHolding(service)).isEqualTo("first");
    CompletableFuture<StringValue> second =
        client.unaryCallAsync(ConformanceService.ECHO, text("second"), CallOptions.DEFAULT);
    // The limit is per connection: another client is served meanwhile.
    assertThat(client(server).unaryCall(ConformanceService.ECHO, text("other")).getValue()).isEqualTo("other");
    if (clientQueuesCallsBeyondTheServersLimit()) {
      assertThat(second).as("held by the client until the first call ends").isNotDone();
      service.releaseAll();
      assertThat(second.get(WAIT_SECONDS, TimeUnit.SECONDS).getValue()).isEqualTo("second");
    } else {
      assertFails(second, Status.Code.RESOURCE_EXHAUSTED, "this connection already has 1 calls in flight",
          "maxConcurrentCallsPerConnection");
      service.releaseAll();
    }
    assertThat(first.get(WAIT_SECONDS, TimeUnit.SECONDS).getValue()).isEqualTo("held:first");
    for (int i = 0; i < 200; i++) {
      assertThat(client.unaryCall(ConformanceService.ADD, new Object[] {i, 1})).isEqualTo(i + 1);
    }
  }

  @Test
  public void framesOverTheSizeLimitsFailWithResourceExhaustedAndTheConnectionGoesOn() throws Exception {
    RpcServer server = startServer(b -> b.maxFrameSize(64 * 1024).maxMetadataSize(64));
    RpcClient client = client(server);
    // A request over the server's limit.
    assertFails(() -> client.unaryCall(ConformanceService.REVERSE, new byte[100_000]),
        Status.Code.RESOURCE_EXHAUSTED, "request of 100032 bytes exceeds the server's maxFrameSize 65536",
        "RpcServer.builder().maxFrameSize");
    assertThat(client.unaryCall(ConformanceService.REVERSE, new byte[5000])).hasSize(5000);
    // Metadata over the server's limit.
    CallOptions bigMetadata = CallOptions.DEFAULT.withMetadata(Metadata.of("x-test", "m".repeat(100)));
    assertFails(() -> client.unaryCall(ConformanceService.META, text("big"), bigMetadata),
        Status.Code.RESOURCE_EXHAUSTED, "exceeds the server's maxMetadataSize 64",
        "RpcServer.builder().maxMetadataSize");
    // A response over the server's limit.
    assertFails(() -> client.unaryCall(ConformanceService.BIG_RESPONSE, new Object[] {100_000}),
        Status.Code.RESOURCE_EXHAUSTED, "response of 100032 bytes exceeds maxFrameSize 65536");

    RpcClient small = client(server, b -> b.maxFrameSize(32 * 1024));
    // A request over the client's own limit, and a response over it.
    assertFails(() -> small.unaryCall(ConformanceService.REVERSE, new byte[50_000]),
        Status.Code.RESOURCE_EXHAUSTED, "request of 50032 bytes exceeds maxFrameSize 32768",
        "RpcClient.builder().maxFrameSize");
    assertFails(() -> small.unaryCall(ConformanceService.BIG_RESPONSE, new Object[] {50_000}),
        Status.Code.RESOURCE_EXHAUSTED, "response of 50032 bytes exceeds the client's maxFrameSize 32768",
        "RpcClient.builder().maxFrameSize");
    assertThat(small.unaryCall(ConformanceService.BIG_RESPONSE, new Object[] {1000})).hasSize(1000);
    assertThat(client.unaryCall(ConformanceService.ECHO, text("after")).getValue()).isEqualTo("after");
  }

  @Test
  public void aClientHasAtMostMaxPendingCallsPending() throws Exception {
    RpcServer server = startServer(b -> b);
    RpcClient client = client(server, b -> b.maxPendingCalls(1));
    CompletableFuture<StringValue> held =
        client.unaryCallAsync(ConformanceService.HOLD, text("one"), CallOptions.DEFAULT);
    assertThat(nextHolding(service)).isEqualTo("one");
    assertFails(() -> client.unaryCall(ConformanceService.ECHO, text("two")), Status.Code.RESOURCE_EXHAUSTED,
        "client has 1 calls pending", "maxPendingCalls");
    service.releaseAll();
    assertThat(held.get(WAIT_SECONDS, TimeUnit.SECONDS).getValue()).isEqualTo("held:one");
    assertThat(client.unaryCall(ConformanceService.ECHO, text("two")).getValue()).isEqualTo("two");
  }

  // ---- metadata, interceptors, executors, metrics ----

  @Test
  public void metadataTravelsBothWaysWithResponsesAndWithErrors() throws Exception {
    RpcServer server = startServer(b -> b);
    RpcClient client = client(server);
    AtomicReference<Metadata> received = new AtomicReference<>();
    StringValue reply = client.unaryCall(ConformanceService.META, text("m"), CallOptions.DEFAULT
        .withMetadata(Metadata.of("x-test", "sent")).withResponseMetadataListener(received::set));
    assertThat(reply.getValue()).isEqualTo("sent|null|-");
    Metadata served = received.get();
    assertThat(served).isNotNull();
    assertThat(served.get("x-served")).isEqualTo("m");

    AtomicReference<Metadata> withError = new AtomicReference<>();
    assertFails(() -> client.unaryCall(ConformanceService.NOT_FOUND, text("q"),
        CallOptions.DEFAULT.withResponseMetadataListener(withError::set)), Status.Code.NOT_FOUND, "no such thing: q");
    Metadata failed = withError.get();
    assertThat(failed).isNotNull();
    assertThat(failed.get("x-failed")).isEqualTo("q");
  }

  @Test
  public void interceptorsRunOnBothSides() throws Exception {
    List<String> seen = new CopyOnWriteArrayList<>();
    ServerInterceptor authenticate = new ServerInterceptor() {
      @Override
      public <Req, Resp> CompletionStage<Resp> intercept(Chain<Req, Resp> chain) throws Exception {
        seen.add("server:" + chain.method().methodName());
        if (!"yes".equals(chain.context().metadata().get("x-intercepted"))) {
          throw Status.UNAUTHENTICATED.withDescription("no x-intercepted metadata").asException();
        }
        chain.context().setPrincipal(new X500Principal("CN=tester"));
        return chain.proceed();
      }
    };
    ClientInterceptor tag = new ClientInterceptor() {
      @Override
      public <Req, Resp> CompletableFuture<Resp> intercept(Chain<Req, Resp> chain) {
        seen.add("client:" + chain.method().methodName());
        return chain.proceed(chain.request(), chain.options().withMetadata(Metadata.of("x-intercepted", "yes")));
      }
    };
    RpcServer server = startServer(b -> b.intercept(authenticate));
    RpcClient client = client(server, b -> b.intercept(tag));
    StringValue reply = client.unaryCall(ConformanceService.META, text("i"),
        CallOptions.DEFAULT.withMetadata(Metadata.of("x-test", "t")));
    assertThat(reply.getValue()).isEqualTo("t|yes|CN=tester");
    assertThat(seen).containsExactly("client:meta", "server:meta");

    // A server interceptor's refusal reaches the caller; the handler never runs.
    RpcClient untagged = client(server);
    assertFails(() -> untagged.unaryCall(ConformanceService.ECHO, text("no tag")), Status.Code.UNAUTHENTICATED,
        "no x-intercepted metadata");
    assertThat(service.requestsSeen).isEmpty();
  }

  @Test
  public void responsesCompleteOnTheClientsCallbackExecutorOrTheCallsOwn() throws Exception {
    RpcServer server = startServer(b -> b);
    RpcClient client = client(server, b -> b.callbackExecutor(executor("conformance-callbacks")));
    CompletableFuture<StringValue> viaClient =
        client.unaryCallAsync(ConformanceService.HOLD, text("client's"), CallOptions.DEFAULT);
    CompletableFuture<StringValue> viaCall = client.unaryCallAsync(ConformanceService.HOLD, text("call's"),
        CallOptions.DEFAULT.withExecutor(executor("conformance-per-call")));
    assertThat(Set.of(nextHolding(service), nextHolding(service))).containsExactlyInAnyOrder("client's", "call's");
    CompletableFuture<String> clientThread = viaClient.thenApply(r -> Thread.currentThread().getName());
    CompletableFuture<String> callThread = viaCall.thenApply(r -> Thread.currentThread().getName());
    service.releaseAll();
    assertThat(clientThread.get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("conformance-callbacks");
    assertThat(callThread.get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("conformance-per-call");
  }

  @Test
  public void theClientRecordsItsCallsInItsMeterRegistry() throws Exception {
    RpcServer server = startServer(b -> b);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    RpcClient client = client(server, b -> b.meterRegistry(registry).name("measured"));
    client.unaryCall(ConformanceService.ECHO, text("m"));
    assertFails(() -> client.unaryCall(ConformanceService.NOT_FOUND, text("n")), Status.Code.NOT_FOUND);
    Timer ok = registry.find("rpc.client.calls").tag("client", "measured").tag("method", "echo")
        .tag("status", "OK").timer();
    assertThat(ok).as("rpc.client.calls{method=echo,status=OK}").isNotNull();
    assertThat(ok.count()).isEqualTo(1);
    Timer notFound = registry.find("rpc.client.calls").tag("method", "notFound").tag("status", "NOT_FOUND").timer();
    assertThat(notFound).as("rpc.client.calls{method=notFound,status=NOT_FOUND}").isNotNull();
    assertThat(notFound.count()).isEqualTo(1);
    assertThat(registry.get("rpc.client.request.size").tag("method", "echo").summary().totalAmount())
        .isEqualTo(text("m").getSerializedSize());
    assertThat(registry.get("rpc.client.calls.pending").gauge().value()).isZero();
  }

  // ---- attempts and retries (docs/cluster.md, "Retry rules") ----

  @Test
  public void anIdempotentCallIsRetriedOnUnavailableAndAnotherRunsAtMostOnce() throws Exception {
    RpcServer server = startServer(b -> b);
    RpcClient client = client(server);
    assertThat(client.unaryCall(ConformanceService.FLAKY_IDEMPOTENT, text("twice:2")).getValue())
        .as("failed twice, answered on the third attempt").isEqualTo("twice");
    assertThat(service.executionsOf("twice")).isEqualTo(3);

    assertFails(() -> client.unaryCall(ConformanceService.FLAKY_IDEMPOTENT, text("down:100")),
        Status.Code.UNAVAILABLE, "flaky down failed execution 3");
    assertThat(service.executionsOf("down")).as("the first attempt and maxRetries (2) more").isEqualTo(3);

    assertFails(() -> client.unaryCall(ConformanceService.FLAKY, text("once:1")), Status.Code.UNAVAILABLE,
        "flaky once failed execution 1");
    assertThat(service.executionsOf("once")).as("not idempotent: never run twice").isEqualTo(1);

    RpcClient noRetries = client(server, b -> b.maxRetries(0));
    assertFails(() -> noRetries.unaryCall(ConformanceService.FLAKY_IDEMPOTENT, text("off:1")),
        Status.Code.UNAVAILABLE);
    assertThat(service.executionsOf("off")).isEqualTo(1);
  }

  @Test
  public void aCallTheServerRefusedBeforeItRanFailsWithTheServersStatusAndMessageUnchanged() throws Exception {
    // An executor that takes nothing: every call is refused before any handler sees it. The attempt ends REFUSED;
    // with no other endpoint to send it to, the caller gets the server's refusal as it came.
    RpcServer server = startServer(b -> b.executor(task -> {
      throw new java.util.concurrent.RejectedExecutionException("this executor takes nothing");
    }));
    RpcClient client = client(server);
    StatusException e = assertFails(() -> client.unaryCall(ConformanceService.FLAKY_IDEMPOTENT, text("refused:0")),
        Status.Code.RESOURCE_EXHAUSTED);
    assertThat(e.status().description()).isEqualTo("the server's executor rejected the call (this executor takes"
        + " nothing); give it more capacity");
    assertThat(service.executionsOf("refused")).as("never ran").isZero();
  }

  @Test
  public void withEveryCallFailingTheRetryBudgetKeepsExecutionsWithinCallsTimesOnePlusItsRatio() throws Exception {
    RpcServer server = startServer(b -> b);
    double ratio = 0.1;
    RpcClient client = client(server, b -> b.retryBudget(10, ratio));
    int calls = 100;
    for (int i = 0; i < calls; i++) {
      assertFails(() -> client.unaryCall(ConformanceService.FLAKY_IDEMPOTENT, text("outage:" + Integer.MAX_VALUE)),
          Status.Code.UNAVAILABLE);
    }
    assertThat(service.executionsOf("outage")).as("executions of %d calls, every one failing", calls)
        .isGreaterThan(calls).isLessThanOrEqualTo((int) (calls * (1 + ratio)));
  }

  // ---- shutdown and closed connections ----

  @Test
  public void aGracefulShutdownLetsCallsInFlightFinishAndRefusesNewOnes() throws Exception {
    RpcServer server = startServer(b -> b.shutdownGracePeriod(Duration.ofSeconds(60)));
    RpcClient client = client(server);
    CompletableFuture<StringValue> inFlight =
        client.unaryCallAsync(ConformanceService.HOLD, text("draining"), CallOptions.DEFAULT);
    assertThat(nextHolding(service)).isEqualTo("draining");
    server.shutdown();
    assertThat(server.isShutdown()).isTrue();
    assertFails(() -> client.unaryCall(ConformanceService.ECHO, text("late")), Status.Code.UNAVAILABLE);
    assertThat(inFlight).isNotDone();
    assertThat(server.isTerminated()).isFalse();
    service.releaseAll();
    assertThat(inFlight.get(WAIT_SECONDS, TimeUnit.SECONDS).getValue()).isEqualTo("held:draining");
    assertThat(server.awaitTermination(20, TimeUnit.SECONDS)).as("terminated once its last call ended").isTrue();
    assertFails(() -> client.unaryCall(ConformanceService.ECHO, text("after")), Status.Code.UNAVAILABLE);
  }

  /** A registry's view: what the listeners heard, in order, with the address the server had when serving. */
  private static final class Recording implements ServerLifecycleListener {
    final List<String> events = new CopyOnWriteArrayList<>();

    @Override
    public void onServing(RpcServer server) {
      events.add("serving " + server.address());
    }

    @Override
    public void onDraining(RpcServer server) {
      events.add("draining " + server.isShutdown());
    }
  }

  @Test
  public void lifecycleListenersHearServingOnceBoundAndDrainingBeforeTheServerStopsTakingCalls() throws Exception {
    Recording first = new Recording();
    Recording second = new Recording();
    RpcServer server = startServer(b -> b.addLifecycleListener(first).addLifecycleListener(second)
        .addLifecycleListener(new ServerLifecycleListener() {
          @Override
          public void onServing(RpcServer s) {
            throw new IllegalStateException("a broken listener is logged and skipped");
          }
        }).drainDelay(Duration.ofSeconds(60)).shutdownGracePeriod(Duration.ofSeconds(60)));
    assertThat(first.events).containsExactly("serving " + server.address());
    assertThat(second.events).isEqualTo(first.events);
    assertThat(server.services()).as("what a registrar checks before registering")
        .extracting(ServiceDefinition::name).containsExactly(ConformanceService.NAME);
    RpcClient client = client(server);
    assertThat(client.unaryCall(ConformanceService.ECHO, text("before")).getValue()).isEqualTo("before");

    server.shutdown();
    assertThat(first.events).as("told before shutdown() returns").endsWith("draining true");
    // During the drain delay the server serves as before (no GOAWAY yet): existing and new clients are answered.
    assertThat(client.unaryCall(ConformanceService.ECHO, text("during")).getValue()).isEqualTo("during");
    assertThat(client(server).unaryCall(ConformanceService.ECHO, text("new")).getValue()).isEqualTo("new");
    assertThat(server.isTerminated()).isFalse();

    server.shutdownNow(); // does not wait out the delay, and does not tell the listeners again
    assertThat(server.awaitTermination(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
    assertThat(first.events).hasSize(2);
    assertFails(() -> client.unaryCall(ConformanceService.ECHO, text("after")), Status.Code.UNAVAILABLE);
  }

  @Test
  public void aGracefulShutdownWaitsTheDrainDelayBeforeItStops() throws Exception {
    Recording listener = new Recording();
    Duration delay = Duration.ofMillis(300);
    RpcServer server = startServer(b -> b.addLifecycleListener(listener).drainDelay(delay));
    RpcClient client = client(server);
    assertThat(client.unaryCall(ConformanceService.ECHO, text("x")).getValue()).isEqualTo("x");
    long start = System.nanoTime();
    server.shutdown(); // no call in flight: without the delay it would stop at once
    assertThat(listener.events).endsWith("draining true");
    assertThat(server.awaitTermination(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(delay);
    RpcServer never = serverBuilder().addLifecycleListener(listener).build();
    never.shutdown(); // never started: no listener is told anything
    assertThat(listener.events).hasSize(2);
  }

  @Test
  public void aServerStoppedAtOnceFailsOnlyItsOwnCallsInFlight() throws Exception {
    ConformanceService other = new ConformanceService();
    RpcServer doomed = startServer(b -> b);
    RpcServer survivor = startServer(other, b -> b);
    RpcClient toDoomed = client(doomed);
    RpcClient toSurvivor = client(survivor);
    CompletableFuture<StringValue> lost =
        toDoomed.unaryCallAsync(ConformanceService.HOLD, text("lost"), CallOptions.DEFAULT);
    CompletableFuture<StringValue> kept =
        toSurvivor.unaryCallAsync(ConformanceService.HOLD, text("kept"), CallOptions.DEFAULT);
    assertThat(nextHolding(service)).isEqualTo("lost");
    assertThat(nextHolding(other)).isEqualTo("kept");
    doomed.shutdownNow();
    assertFails(lost, Status.Code.UNAVAILABLE, "closed", "conformance.Echo/hold");
    assertThat(nextCancelled(service)).isEqualTo("lost");
    assertThat(kept).isNotDone();
    other.releaseAll();
    assertThat(kept.get(WAIT_SECONDS, TimeUnit.SECONDS).getValue()).isEqualTo("held:kept");
    assertThat(doomed.awaitTermination(20, TimeUnit.SECONDS)).isTrue();
    assertThat(toSurvivor.unaryCall(ConformanceService.ECHO, text("still")).getValue()).isEqualTo("still");
  }

  @Test
  public void aClientShutDownAtOnceFailsOnlyItsOwnCallsAndTheServerCancelsThem() throws Exception {
    RpcServer server = startServer(b -> b);
    RpcClient gone = client(server);
    RpcClient stays = client(server);
    CompletableFuture<StringValue> lost =
        gone.unaryCallAsync(ConformanceService.HOLD, text("gone"), CallOptions.DEFAULT);
    CompletableFuture<StringValue> kept =
        stays.unaryCallAsync(ConformanceService.HOLD, text("stays"), CallOptions.DEFAULT);
    assertThat(Set.of(nextHolding(service), nextHolding(service))).containsExactlyInAnyOrder("gone", "stays");
    gone.shutdownNow();
    assertFails(lost, Status.Code.UNAVAILABLE);
    assertThat(nextCancelled(service)).isEqualTo("gone");
    assertThat(gone.awaitTermination(20, TimeUnit.SECONDS)).isTrue();
    assertFails(() -> gone.unaryCall(ConformanceService.ECHO, text("after")), Status.Code.UNAVAILABLE,
        "shut down");
    assertThat(kept).isNotDone();
    service.releaseAll();
    assertThat(kept.get(WAIT_SECONDS, TimeUnit.SECONDS).getValue()).isEqualTo("held:stays");
  }
}
