package io.petrel.rpc.transport.netty;

import static io.petrel.rpc.testing.CallFailures.assertFails;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.StringValue;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.HedgingPolicy;
import io.petrel.rpc.LoadBalancer;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcClientBuilder;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.Subchannel;
import io.petrel.rpc.internal.ClientChannel;
import io.petrel.rpc.internal.HedgedCall;
import io.petrel.rpc.internal.lb.LoadBalancers;
import io.petrel.rpc.marshal.ProtobufMarshaller;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Hedging of idempotent calls (docs/cluster.md, "Hedging") on real servers on loopback: a hedged call ends with the
 * first answer and cancels its other attempts on their servers; a server's ledger of executions shows at most
 * maxAttempts runs per call and exactly one for a method that is not idempotent; hedges draw on the retry budget;
 * no attempt starts after the call's deadline.
 */
class HedgingTest extends TransportFixture {
  private static final String SERVICE = "hedging.Ledger";
  /** Idempotent: answered at once by a fast server, held by a slow one until the test ends. */
  private static final MethodDescriptor<StringValue, StringValue> READ = method("read", true);
  /** Not idempotent: the same handlers. */
  private static final MethodDescriptor<StringValue, StringValue> WRITE = method("write", false);

  private static MethodDescriptor<StringValue, StringValue> method(String name, boolean idempotent) {
    return MethodDescriptor.<StringValue, StringValue>newBuilder().serviceName(SERVICE).methodName(name)
        .idempotent(idempotent)
        .requestMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
        .responseMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
        .build();
  }

  enum Behaviour { FAST, HOLD, UNAVAILABLE, SHEDDING }

  /** One server's handlers and its ledger: executions, and cancels its held calls heard. */
  private static final class Ledger {
    final String name;
    final Behaviour behaviour;
    final AtomicInteger runs = new AtomicInteger();
    final Semaphore ran = new Semaphore(0);
    final Semaphore cancelled = new Semaphore(0);
    final List<CompletableFuture<StringValue>> held = new CopyOnWriteArrayList<>();

    Ledger(String name, Behaviour behaviour) {
      this.name = name;
      this.behaviour = behaviour;
    }

    ServiceDefinition definition() {
      return ServiceDefinition.builder(SERVICE).async(READ, this::handle).async(WRITE, this::handle).build();
    }

    private CompletableFuture<StringValue> handle(StringValue req) {
      runs.incrementAndGet();
      ran.release();
      switch (behaviour) {
        case FAST:
          return CompletableFuture.completedFuture(StringValue.of(name + " answered " + req.getValue()));
        case UNAVAILABLE:
          return CompletableFuture.failedFuture(Status.UNAVAILABLE.withDescription(name + " is unavailable")
              .asException());
        case SHEDDING:
          return CompletableFuture.failedFuture(Status.RESOURCE_EXHAUSTED.withDescription(name + " sheds load")
              .asException());
        default:
          ServerContext ctx = ServerContext.current();
          if (ctx != null) {
            ctx.onCancel(cancelled::release);
          }
          CompletableFuture<StringValue> f = new CompletableFuture<>();
          held.add(f);
          return f;
      }
    }

    void release() {
      held.forEach(f -> f.complete(StringValue.of(name + " answered late")));
    }
  }

  private final List<Ledger> ledgers = new ArrayList<>();
  /** The server of each ledger, in the same order. */
  private final List<RpcServer> servers = new ArrayList<>();

  @AfterEach
  void releaseHeldCalls() {
    ledgers.forEach(Ledger::release);
  }

  private RpcServer server(Ledger ledger) throws Exception {
    RpcServer s = startServer(b -> b.addService(ledger.definition()));
    ledgers.add(ledger);
    servers.add(s);
    return s;
  }

  /** A round-robin client of the servers, connected to each. */
  private RpcClient clientOf(UnaryOperator<RpcClientBuilder> options, RpcServer... servers) {
    StringBuilder target = new StringBuilder("static://");
    for (RpcServer s : servers) {
      target.append(target.length() > "static://".length() ? "," : "").append("127.0.0.1:").append(s.port());
    }
    RpcClient client = client(1, b -> options.apply(b.target(target.toString()).loadBalancer("round_robin")));
    client.start(); // connected to every server: the calls below do not wait for connections
    return client;
  }

  private static int total(Ledger... ledgers) {
    int n = 0;
    for (Ledger l : ledgers) {
      n += l.runs.get();
    }
    return n;
  }

  @Test
  void aHedgedCallEndsWithTheFastServersAnswerAndTheSlowServerSeesTheCancel() throws Exception {
    Ledger slow = new Ledger("slow", Behaviour.HOLD);
    Ledger fast = new Ledger("fast", Behaviour.FAST);
    RpcServer slowServer = server(slow);
    RecordingBalancer balancer = new RecordingBalancer();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    RpcClient client = clientOf(b -> b.hedging(2, Duration.ofMillis(50)).loadBalancer(balancer)
        .meterRegistry(registry), slowServer, server(fast));

    long started = System.nanoTime();
    for (int i = 0; i < 4; i++) {
      // The slow server holds its calls until the test ends: only a hedge can answer them.
      StringValue answer = client.unaryCall(READ, StringValue.of("r" + i), CallOptions.DEFAULT.withTimeout(
          Duration.ofSeconds(20)));
      assertThat(answer.getValue()).isEqualTo("fast answered r" + i);
    }
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
    // Each call that went to the slow server first was hedged to the fast one (the hedge avoids the busy server).
    int held = slow.runs.get();
    assertThat(held).as("calls sent to the slow server first").isPositive();
    assertThat(fast.runs.get()).isEqualTo(4);
    assertThat(ClientChannel.runtimeOf(client).hedges()).isEqualTo(held);
    assertThat(tookMs).as("four calls, %s hedged after 50 ms, against 20 s held", held).isLessThan(10_000);
    // The losing attempts were cancelled on the slow server.
    assertThat(slow.cancelled.tryAcquire(held, 10, TimeUnit.SECONDS)).as("the slow server heard every cancel")
        .isTrue();
    awaitNoPendingCall(client);
    // The balancer heard every attempt: the losers as CANCELLED on the slow endpoint, the winners as OK.
    assertThat(balancer.outcomes).containsExactlyInAnyOrderElementsOf(expectedOutcomes(slowServer.port(), held));
    // The meters: each call recorded once, with its outcome; the hedges counted.
    assertThat(registry.get("rpc.client.calls").tag("method", "read").timers()).singleElement()
        .satisfies(t -> {
          assertThat(t.getId().getTag("status")).isEqualTo("OK");
          assertThat(t.count()).isEqualTo(4);
        });
    assertThat(registry.get("rpc.client.hedges").functionCounter().count()).isEqualTo(held);
  }

  private static List<String> expectedOutcomes(int slowPort, int held) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < held; i++) {
      out.add(slowPort + " CANCELLED");
    }
    for (int i = 0; i < 4; i++) {
      out.add("fast OK");
    }
    return out;
  }

  /** Round robin, recording each attempt's outcome as it reaches the balancer ("port STATUS"; "fast" for OK). */
  private static final class RecordingBalancer implements LoadBalancer.Factory {
    final List<String> outcomes = new CopyOnWriteArrayList<>();

    @Override
    public String name() {
      return "recording_round_robin";
    }

    @Override
    public LoadBalancer newLoadBalancer() {
      LoadBalancer rr = LoadBalancers.ROUND_ROBIN_FACTORY.newLoadBalancer();
      return new LoadBalancer() {
        @Override
        public @Nullable Subchannel pick(PickArgs call) {
          return rr.pick(call);
        }

        @Override
        public void update(List<? extends Subchannel> subchannels) {
          rr.update(subchannels);
        }

        @Override
        public void onAttemptEnded(Subchannel s, Status status, long latencyNanos) {
          outcomes.add(status.code() == Status.Code.OK ? "fast OK" : s.endpoint().port() + " " + status.code());
          rr.onAttemptEnded(s, status, latencyNanos);
        }
      };
    }
  }

  @Test
  void aCallRunsAtMostMaxAttemptsTimesAndEndsAtItsDeadlineWithNoAttemptAfterIt() throws Exception {
    Ledger a = new Ledger("a", Behaviour.HOLD);
    Ledger b = new Ledger("b", Behaviour.HOLD);
    Ledger c = new Ledger("c", Behaviour.HOLD);
    // Attempts at 0, 350 and 700 ms; a fourth would come at 1050 ms, after the 1000 ms deadline.
    RpcClient client = clientOf(o -> o.hedging(5, Duration.ofMillis(350)), server(a), server(b), server(c));

    long started = System.nanoTime();
    CompletableFuture<StringValue> f = client.unaryCallAsync(READ, StringValue.of("held"),
        CallOptions.DEFAULT.withTimeout(Duration.ofMillis(1000)));
    StatusException e = assertFails(f, Status.Code.DEADLINE_EXCEEDED, "deadline exceeded");
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
    assertThat(tookMs).as("ended at its deadline: %s", e.status()).isBetween(990L, 2_500L);
    assertThat(a.ran.tryAcquire(1, 10, TimeUnit.SECONDS) && b.ran.tryAcquire(1, 10, TimeUnit.SECONDS)
        && c.ran.tryAcquire(1, 10, TimeUnit.SECONDS)).as("each server ran one attempt").isTrue();
    assertThat(total(a, b, c)).as("one attempt on each server, none after the deadline").isEqualTo(3);
    assertThat(ClientChannel.runtimeOf(client).hedges()).isEqualTo(2);
    assertThat(f).isInstanceOfSatisfying(HedgedCall.class, h -> assertThat(h.attempts()).isEqualTo(3));
    // The attempts still running at the deadline were cancelled on their servers.
    assertThat(a.cancelled.tryAcquire(1, 10, TimeUnit.SECONDS) && b.cancelled.tryAcquire(1, 10, TimeUnit.SECONDS)
        && c.cancelled.tryAcquire(1, 10, TimeUnit.SECONDS)).isTrue();
    awaitNoPendingCall(client);
    assertThat(total(a, b, c)).isEqualTo(3);
    assertThat(((HedgedCall<?>) f).attempts()).as("attempts the client started, after the call ended").isEqualTo(3);
  }

  @Test
  void aMethodThatIsNotIdempotentIsNeverHedged() throws Exception {
    Ledger a = new Ledger("a", Behaviour.HOLD);
    Ledger b = new Ledger("b", Behaviour.HOLD);
    RpcClient client = clientOf(o -> o.hedging(5, Duration.ofMillis(10)), server(a), server(b));

    // Hedging asked for this very call as well: still one execution.
    CompletableFuture<StringValue> f = client.unaryCallAsync(WRITE, StringValue.of("once"),
        CallOptions.DEFAULT.withTimeout(Duration.ofMillis(1000)).withHedging(5, Duration.ZERO));
    assertFails(f, Status.Code.DEADLINE_EXCEEDED);
    assertThat(total(a, b)).isEqualTo(1);
    assertThat(ClientChannel.runtimeOf(client).hedges()).isZero();
    awaitNoPendingCall(client);
    assertThat(total(a, b)).isEqualTo(1);
  }

  @Test
  void aCallCanOptOutOfTheClientsHedgingAndAnotherCanHedgeOnItsOwn() throws Exception {
    Ledger a = new Ledger("a", Behaviour.HOLD);
    Ledger b = new Ledger("b", Behaviour.HOLD);
    RpcClient hedging = clientOf(o -> o.hedging(2, Duration.ofMillis(10)), server(a), server(b));
    assertFails(hedging.unaryCallAsync(READ, StringValue.of("opted out"), CallOptions.DEFAULT
        .withTimeout(Duration.ofMillis(1000)).withoutHedging()), Status.Code.DEADLINE_EXCEEDED);
    awaitNoPendingCall(hedging);
    assertThat(total(a, b)).isEqualTo(1);

    RpcClient plain = clientOf(o -> o, servers(a, b));
    assertFails(plain.unaryCallAsync(READ, StringValue.of("hedged"), CallOptions.DEFAULT
        .withTimeout(Duration.ofMillis(1000)).withHedging(2, Duration.ofMillis(10))), Status.Code.DEADLINE_EXCEEDED);
    awaitNoPendingCall(plain);
    assertThat(total(a, b)).isEqualTo(3);
    assertThat(ClientChannel.runtimeOf(plain).hedges()).isEqualTo(1);
  }

  private RpcServer[] servers(Ledger... of) {
    RpcServer[] out = new RpcServer[of.length];
    for (int i = 0; i < of.length; i++) {
      out[i] = servers.get(ledgers.indexOf(of[i]));
    }
    return out;
  }

  @Test
  void anAttemptFailingWithUnavailableIsReplacedAtOnceAndTheCallFailsOnlyWhenAllHaveFailed() throws Exception {
    Ledger failing = new Ledger("failing", Behaviour.UNAVAILABLE);
    Ledger fast = new Ledger("fast", Behaviour.FAST);
    // No retries and a 10 s hedging delay: only the hedge sent at once after a failure can save a call.
    RpcClient client = clientOf(o -> o.maxRetries(0).hedging(2, Duration.ofSeconds(10)), server(failing),
        server(fast));
    for (int i = 0; i < 4; i++) {
      StringValue answer = client.unaryCall(READ, StringValue.of("r" + i), CallOptions.DEFAULT.withTimeout(
          Duration.ofSeconds(5)));
      assertThat(answer.getValue()).isEqualTo("fast answered r" + i);
    }
    assertThat(failing.runs.get()).as("calls sent to the failing server first").isPositive();
    assertThat(fast.runs.get()).isEqualTo(4);
    assertThat(ClientChannel.runtimeOf(client).hedges()).isEqualTo(failing.runs.get());

    Ledger other = new Ledger("other", Behaviour.UNAVAILABLE);
    RpcClient allFailing = clientOf(o -> o.maxRetries(0).hedging(3, Duration.ofSeconds(10)), servers(failing)[0],
        server(other));
    int before = failing.runs.get();
    assertFails(() -> allFailing.unaryCall(READ, StringValue.of("doomed"), CallOptions.DEFAULT.withTimeout(
        Duration.ofSeconds(5))), Status.Code.UNAVAILABLE, "is unavailable", "the last of 3 hedged attempts");
    assertThat(failing.runs.get() - before + other.runs.get()).isEqualTo(3);
    awaitNoPendingCall(allFailing);

    // Both attempts sent at once (delay 0), both failing: the call fails as soon as the second has failed.
    RpcClient atOnce = clientOf(o -> o.maxRetries(0).hedging(2, Duration.ZERO), servers(failing)[0],
        servers(other)[0]);
    int runs = failing.runs.get() + other.runs.get();
    assertFails(atOnce.unaryCallAsync(READ, StringValue.of("doomed twice"), CallOptions.DEFAULT.withTimeout(
        Duration.ofSeconds(20))), Status.Code.UNAVAILABLE, "is unavailable", "the last of 2 hedged attempts");
    assertThat(failing.runs.get() + other.runs.get() - runs).isEqualTo(2);
    awaitNoPendingCall(atOnce);
  }

  /**
   * A handler's RESOURCE_EXHAUSTED ends a hedged call by default (an answer); a policy that lists it among its
   * non-fatal codes sends another attempt in its place at once, as for UNAVAILABLE.
   */
  @Test
  void aCodeThePolicyCallsNonFatalIsReplacedLikeUnavailableAndOtherwiseEndsTheCall() throws Exception {
    Ledger shedding = new Ledger("shedding", Behaviour.SHEDDING);
    Ledger fast = new Ledger("fast", Behaviour.FAST);
    RpcServer a = server(shedding);
    RpcServer b = server(fast);
    // No retries and a 10 s hedging delay: only a hedge sent at once after a failure can save a call.
    RpcClient client = clientOf(o -> o.maxRetries(0).hedging(2, Duration.ofSeconds(10)), a, b);
    int failed = 0;
    for (int i = 0; i < 4; i++) {
      try {
        assertThat(client.unaryCall(READ, StringValue.of("r" + i), CallOptions.DEFAULT.withTimeout(
            Duration.ofSeconds(5))).getValue()).isEqualTo("fast answered r" + i);
      } catch (StatusException e) {
        assertThat(e.code()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(e.getMessage()).contains("shedding sheds load");
        failed++;
      }
    }
    assertThat(failed).as("calls whose first attempt went to the shedding server, by default")
        .isEqualTo(shedding.runs.get()).isPositive();
    assertThat(ClientChannel.runtimeOf(client).hedges()).as("no hedge after an answer").isZero();

    HedgingPolicy shedAware = HedgingPolicy.of(2, Duration.ofSeconds(10))
        .withNonFatalCodes(Status.Code.UNAVAILABLE, Status.Code.RESOURCE_EXHAUSTED);
    int before = shedding.runs.get();
    for (int i = 0; i < 4; i++) {
      assertThat(client.unaryCall(READ, StringValue.of("s" + i), CallOptions.DEFAULT.withHedging(shedAware)
          .withTimeout(Duration.ofSeconds(5))).getValue()).isEqualTo("fast answered s" + i);
    }
    assertThat(shedding.runs.get() - before).as("first attempts that went to the shedding server").isPositive();
    assertThat(ClientChannel.runtimeOf(client).hedges()).isEqualTo(shedding.runs.get() - before);

    // Both attempts shed: the call fails with the last one's status, as for UNAVAILABLE.
    Ledger alsoShedding = new Ledger("also", Behaviour.SHEDDING);
    RpcClient allShedding = clientOf(o -> o.maxRetries(0), a, server(alsoShedding));
    assertFails(() -> allShedding.unaryCall(READ, StringValue.of("doomed"), CallOptions.DEFAULT
        .withHedging(shedAware).withTimeout(Duration.ofSeconds(5))), Status.Code.RESOURCE_EXHAUSTED, "sheds load",
        "the last of 2 hedged attempts");
    awaitNoPendingCall(allShedding);
  }

  @Test
  void hedgesStopWhenTheRetryBudgetIsDrawnDown() throws Exception {
    Ledger a = new Ledger("a", Behaviour.HOLD);
    Ledger b = new Ledger("b", Behaviour.HOLD);
    Ledger c = new Ledger("c", Behaviour.HOLD);
    // 20 tokens: hedges stop at half, after 10, that is 100 calls x 0.1.
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    RpcClient client = clientOf(o -> o.hedging(3, Duration.ofMillis(20)).retryBudget(20, 0.1)
        .meterRegistry(registry), server(a), server(b), server(c));
    int calls = 100;
    List<CompletableFuture<StringValue>> futures = new ArrayList<>();
    for (int i = 0; i < calls; i++) {
      futures.add(client.unaryCallAsync(READ, StringValue.of("burst " + i), CallOptions.DEFAULT.withTimeout(
          Duration.ofMillis(1500))));
    }
    for (CompletableFuture<StringValue> f : futures) {
      assertFails(f, Status.Code.DEADLINE_EXCEEDED);
    }
    long hedges = ClientChannel.runtimeOf(client).hedges();
    assertThat(hedges).as("hedges sent").isEqualTo(10);
    // Every call the budget kept from hedging had a hedge come due at least once (each 20 ms until its deadline).
    assertThat(registry.get("rpc.client.retries.throttled").tag("reason", "hedge").functionCounter().count())
        .as("hedges the budget held back").isGreaterThanOrEqualTo(calls - hedges);
    assertThat(registry.get("rpc.client.retries.budget").gauge().value()).as("half the bucket").isEqualTo(10.0);
    awaitNoPendingCall(client);
    assertThat(total(a, b, c)).as("executions: each call once, plus the budget's hedges")
        .isEqualTo(calls + (int) hedges);
  }

  @Test
  void aHedgeNotSentForWantOfRoomGivesItsTokenBack() throws Exception {
    Ledger a = new Ledger("a", Behaviour.HOLD);
    Ledger b = new Ledger("b", Behaviour.HOLD);
    // Ten calls fill maxPendingCalls: every hedge their timers bring (every 20 ms until the deadline, about 20 per
    // call) is refused for want of room. Each takes a token and must give it back; before, the budget fell to half
    // (10 of 20 tokens) within the first round of timers, and retries of UNAVAILABLE stopped for every call.
    RpcClient client = clientOf(o -> o.hedging(2, Duration.ofMillis(20)).retryBudget(20, 0.1).maxPendingCalls(10),
        server(a), server(b));
    List<CompletableFuture<StringValue>> futures = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      futures.add(client.unaryCallAsync(READ, StringValue.of("full " + i), CallOptions.DEFAULT.withTimeout(
          Duration.ofMillis(500))));
    }
    for (CompletableFuture<StringValue> f : futures) {
      assertFails(f, Status.Code.DEADLINE_EXCEEDED);
    }
    assertThat(ClientChannel.runtimeOf(client).hedges()).as("hedges sent").isZero();
    assertThat(ClientChannel.runtimeOf(client).retryBudget().milliTokens()).as("the budget's tokens, in thousandths")
        .isEqualTo(20_000);
    awaitNoPendingCall(client);
    assertThat(total(a, b)).as("executions: each call once, no hedge").isEqualTo(10);
  }

  private static void awaitNoPendingCall(RpcClient client) throws InterruptedException {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (client.pendingCalls() > 0 && System.nanoTime() < until) {
      Thread.onSpinWait();
    }
    assertThat(client.pendingCalls()).as("attempts still pending").isZero();
  }
}
