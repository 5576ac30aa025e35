package io.petrel.rpc.transport.netty;

import static io.petrel.rpc.testing.CallFailures.assertFails;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.StringValue;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.marshal.ProtobufMarshaller;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A request the server refuses before any handler saw it, because of a limit, is answered with the REFUSED flag
 * (docs/protocol.md, "Refusals"): the client sends it to another endpoint, where it runs once, without its caller
 * seeing anything; with no other endpoint the caller gets the server's status and message as they came. A
 * handler's own RESOURCE_EXHAUSTED is an answer: never sent again. Each server keeps a ledger of what it ran.
 */
class RefusalTest extends TransportFixture {
  private static final String SERVICE = "refusal.Ledger";
  /** Counted in the ledger, answered at once. */
  private static final MethodDescriptor<StringValue, StringValue> RUN = method("run", false);
  /** Holds a business thread until the test releases it. */
  private static final MethodDescriptor<StringValue, StringValue> HOLD = method("hold", false);
  /** Counted in the ledger, then fails with RESOURCE_EXHAUSTED, as a handler out of quota would. */
  private static final MethodDescriptor<StringValue, StringValue> EXHAUSTED = method("exhausted", true);

  private static MethodDescriptor<StringValue, StringValue> method(String name, boolean idempotent) {
    return MethodDescriptor.<StringValue, StringValue>newBuilder().serviceName(SERVICE).methodName(name)
        .idempotent(idempotent)
        .requestMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
        .responseMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
        .build();
  }

  /** One server's handlers and its ledger of executions, by request. */
  private static final class Ledger {
    final String name;
    final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
    final Semaphore holding = new Semaphore(0);
    final CountDownLatch release = new CountDownLatch(1);

    Ledger(String name) {
      this.name = name;
    }

    ServiceDefinition definition() {
      return ServiceDefinition.builder(SERVICE)
          .unary(RUN, req -> {
            ran(req);
            return StringValue.of(name + " ran " + req.getValue());
          })
          .unary(HOLD, req -> {
            holding.release();
            if (!release.await(30, TimeUnit.SECONDS)) {
              throw new IllegalStateException("the test never released " + req.getValue());
            }
            return req;
          })
          .unary(EXHAUSTED, req -> {
            ran(req);
            throw Status.RESOURCE_EXHAUSTED.withDescription("the handler's quota for " + req.getValue()
                + " is used up").asException();
          })
          .build();
    }

    private void ran(StringValue req) {
      runs.computeIfAbsent(req.getValue(), k -> new AtomicInteger()).incrementAndGet();
    }

    int runsOf(String request) {
      AtomicInteger n = runs.get(request);
      return n == null ? 0 : n.get();
    }

    /** Blocks the server's only business thread with a HOLD call made by {@code client}. */
    CompletableFuture<StringValue> fill(RpcClient client) throws InterruptedException {
      CompletableFuture<StringValue> held = client.unaryCallAsync(HOLD, StringValue.of("hold"), CallOptions.DEFAULT);
      assertThat(holding.tryAcquire(10, TimeUnit.SECONDS)).as("%s: the HOLD call took the business thread", name)
          .isTrue();
      return held;
    }
  }

  private final List<Ledger> ledgers = new ArrayList<>();

  @AfterEach
  void releaseHeldCalls() {
    ledgers.forEach(l -> l.release.countDown());
  }

  /** A server with one business thread and no queue: while a HOLD call runs, every other call is refused. */
  private RpcServer oneThreadServer(Ledger ledger) throws Exception {
    ledgers.add(ledger);
    return startServer(b -> b.addService(ledger.definition()).businessThreads(1).businessQueueSize(0));
  }

  private RpcServer server(Ledger ledger) throws Exception {
    ledgers.add(ledger);
    return startServer(b -> b.addService(ledger.definition()));
  }

  private RpcClient clientOf(RpcServer first, RpcServer second) {
    // Round robin: every other call is picked for the first server first.
    return client(1, b -> b.target("static://127.0.0.1:" + first.port() + ",127.0.0.1:" + second.port())
        .loadBalancer("round_robin"));
  }

  @Test
  void aRefusalByALimitCarriesTheRefusedFlagAndAHandlersErrorDoesNot() throws Exception {
    Ledger ledger = new Ledger("one");
    ledgers.add(ledger);
    io.micrometer.core.instrument.simple.SimpleMeterRegistry registry =
        new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
    RpcServer server = startServer(b -> b.addService(ledger.definition()).businessThreads(1).businessQueueSize(0)
        .maxConcurrentCallsPerConnection(1).meterRegistry(registry));
    try (RawPeer first = new RawPeer(server.port()); RawPeer second = new RawPeer(server.port())) {
      first.send(RawPeer.request(HOLD, 1, 0, StringValue.of("hold")));
      assertThat(ledger.holding.tryAcquire(10, TimeUnit.SECONDS)).isTrue();

      // A client that ignores the server's SETTINGS: over its calls per connection.
      first.send(RawPeer.request(RUN, 2, 0, StringValue.of("over the connection's limit")));
      RawPeer.RawFrame overConnection = first.read();
      assertThat(overConnection.requestId()).isEqualTo(2);
      assertThat(overConnection.status()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED.value());
      assertThat(overConnection.flags()).isEqualTo(Protocol.FLAG_REFUSED);
      assertThat(overConnection.text()).contains("this connection already has 1 calls in flight");

      // Another connection: the business pool has no thread and no queue place for it.
      second.send(RawPeer.request(RUN, 1, 0, StringValue.of("pool full")));
      RawPeer.RawFrame poolFull = second.read();
      assertThat(poolFull.requestId()).isEqualTo(1);
      assertThat(poolFull.status()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED.value());
      assertThat(poolFull.flags()).isEqualTo(Protocol.FLAG_REFUSED);
      assertThat(poolFull.text()).startsWith("server business pool is full");
      // Both refusals are counted for their method, the transport's as the business pool's (recorded before the
      // refusal was written).
      assertThat(registry.find("rpc.server.calls").tag("method", "run").tag("status", "RESOURCE_EXHAUSTED").timer())
          .as("rpc.server.calls{method=run,status=RESOURCE_EXHAUSTED}").isNotNull()
          .satisfies(t -> assertThat(t.count()).isEqualTo(2));

      ledger.release.countDown();
      RawPeer.RawFrame held = first.read();
      assertThat(held.requestId()).isEqualTo(1);
      assertThat(held.status()).isZero();
      assertThat(held.flags()).as("an answer").isZero();

      // The handler's own RESOURCE_EXHAUSTED, and a request no server of this kind can serve: not refusals.
      // (The one business thread counts the held call until just after its answer went out: a request right
      // after that answer may still find the pool full, and is refused unrun; it is sent again.)
      RawPeer.RawFrame exhausted;
      int id = 2;
      do {
        second.send(RawPeer.request(EXHAUSTED, id, 0, StringValue.of("q")));
        exhausted = second.read();
        assertThat(exhausted.requestId()).isEqualTo(id);
        id += 2;
      } while (exhausted.flags() == Protocol.FLAG_REFUSED && exhausted.text().startsWith("server business pool is full")
          && id < 2000);
      assertThat(exhausted.status()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED.value());
      assertThat(exhausted.text()).isEqualTo("the handler's quota for q is used up");
      assertThat(exhausted.flags()).as("the handler ran").isZero();
      second.send(RawPeer.request(TestService.MISSING, 3 + id, 0, StringValue.of("?")));
      RawPeer.RawFrame unknown = second.read();
      assertThat(unknown.status()).isEqualTo(Status.Code.UNIMPLEMENTED.value());
      assertThat(unknown.flags()).isZero();
    }
    assertThat(ledger.runsOf("over the connection's limit") + ledger.runsOf("pool full")).as("refused: never ran")
        .isZero();
    assertThat(ledger.runsOf("q")).isEqualTo(1);
  }

  @Test
  void callsRefusedByAFullServerRunOnceOnTheOtherWithoutTheCallerSeeingIt() throws Exception {
    Ledger full = new Ledger("full");
    Ledger spare = new Ledger("spare");
    RpcServer fullServer = oneThreadServer(full);
    RpcServer spareServer = server(spare);
    CompletableFuture<StringValue> held = full.fill(client(fullServer.port()));
    // Connected to both first: a call picked for an endpoint still connecting while the other one is connected goes
    // to the other at once, and the endpoint listener reports that move too (one attempt more than counted below).
    RpcClient client = clientOf(fullServer, spareServer).start();

    int calls = 40;
    List<Integer> attemptPorts = new CopyOnWriteArrayList<>();
    List<CompletableFuture<StringValue>> futures = new ArrayList<>();
    for (int i = 0; i < calls; i++) {
      futures.add(client.unaryCallAsync(RUN, StringValue.of("call-" + i),
          CallOptions.DEFAULT.withEndpointListener(e -> attemptPorts.add(e.port()))));
    }
    for (int i = 0; i < calls; i++) {
      assertThat(futures.get(i).get(10, TimeUnit.SECONDS).getValue()).isEqualTo("spare ran call-" + i);
      assertThat(spare.runsOf("call-" + i)).as("call-%d ran once", i).isEqualTo(1);
    }
    assertThat(full.runs).as("the full server ran none of them").isEmpty();
    long refused = attemptPorts.stream().filter(p -> p == fullServer.port()).count();
    System.out.println("refusal: " + calls + " calls over a full server and a spare one; attempts " + attemptPorts.size()
        + ", refused by the full server " + refused + "; runs on the full server " + full.runs.size()
        + ", on the spare one " + spare.runs.values().stream().mapToInt(AtomicInteger::get).sum() + " ("
        + spare.runs.size() + " calls)");
    assertThat(refused).as("attempts the full server refused").isPositive();
    assertThat(attemptPorts).as("each refused attempt followed by one on the other server")
        .hasSize(calls + (int) refused);
    assertThat(held).isNotDone();
    full.release.countDown();
    assertThat(held.get(10, TimeUnit.SECONDS).getValue()).isEqualTo("hold");
    assertThat(client.pendingCalls()).isZero();
  }

  /**
   * One server of three is full and refuses every call at once, for as long as the test runs: a server whose pool
   * is taken by slow calls. It answers fastest of all, so by calls pending (the default balancer) it looks the
   * least loaded; each refusal it sends costs a retry-budget token, and once half the budget is gone its refusals
   * would reach the callers while two servers have room. Every call must succeed, and the full server must get
   * only a few of them.
   */
  @ParameterizedTest
  @ValueSource(strings = {"least_pending", "round_robin"})
  void aServerThatRefusesEverythingGetsFewCallsAndNoCallerSeesARefusal(String policy) throws Exception {
    Ledger full = new Ledger("full");
    Ledger spare1 = new Ledger("spare1");
    Ledger spare2 = new Ledger("spare2");
    RpcServer fullServer = oneThreadServer(full);
    RpcServer s1 = server(spare1);
    RpcServer s2 = server(spare2);
    CompletableFuture<StringValue> held = full.fill(client(fullServer.port()));
    RpcClient client = client(1, b -> b.target("static://127.0.0.1:" + fullServer.port() + ",127.0.0.1:"
        + s1.port() + ",127.0.0.1:" + s2.port()).loadBalancer(policy)).start();

    int callers = 8;
    int callsEach = 500;
    AtomicInteger toFull = new AtomicInteger();
    Map<String, AtomicInteger> failures = new ConcurrentHashMap<>();
    CallOptions options = CallOptions.DEFAULT.withEndpointListener(e -> {
      if (e.port() == fullServer.port()) {
        toFull.incrementAndGet();
      }
    });
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < callers; t++) {
      String caller = "c" + t;
      Thread thread = new Thread(() -> {
        for (int i = 0; i < callsEach; i++) {
          try {
            client.unaryCall(RUN, StringValue.of(caller + "/" + i), options);
          } catch (StatusException e) {
            failures.computeIfAbsent(e.status().code() + ": " + e.status().description(), k -> new AtomicInteger())
                .incrementAndGet();
          }
        }
      }, caller);
      thread.start();
      threads.add(thread);
    }
    for (Thread t : threads) {
      t.join(60_000);
      assertThat(t.isAlive()).isFalse();
    }
    int calls = callers * callsEach;
    System.out.println("refusing server (" + policy + "): " + calls + " calls, attempts sent to the full server "
        + toFull.get() + ", failures " + failures);
    assertThat(failures).as("calls that failed").isEmpty();
    assertThat(full.runs).isEmpty();
    assertThat(toFull.get()).as("attempts sent to the server that refuses everything, of %d calls", calls)
        .isLessThan(calls / 20);
    assertThat(held).isNotDone();

    // Its pool free again, the server is back in the balancer's choice once its pause is over (at most 1 s).
    full.release.countDown();
    assertThat(held.get(10, TimeUnit.SECONDS).getValue()).isEqualTo("hold");
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    int after = 0;
    while (full.runs.isEmpty()) {
      assertThat(System.nanoTime()).as("the freed server ran a call again").isLessThan(until);
      client.unaryCall(RUN, StringValue.of("after/" + after++));
    }
    System.out.println("refusing server (" + policy + "): freed, ran a call again after " + after + " calls");
  }

  @Test
  void withOneServerTheCallerGetsItsRefusalAsItCame() throws Exception {
    Ledger full = new Ledger("full");
    RpcServer server = oneThreadServer(full);
    full.fill(client(server.port()));
    String sent;
    try (RawPeer peer = new RawPeer(server.port())) {
      peer.send(RawPeer.request(RUN, 1, 0, StringValue.of("raw")));
      RawPeer.RawFrame f = peer.read();
      assertThat(f.flags()).isEqualTo(Protocol.FLAG_REFUSED);
      sent = f.text();
    }
    RpcClient client = client(server.port());
    StatusException e = assertFails(() -> client.unaryCall(RUN, StringValue.of("only")),
        Status.Code.RESOURCE_EXHAUSTED);
    assertThat(e.status().description()).as("the server's message, unchanged").isEqualTo(sent);
    assertThat(full.runs).isEmpty();
  }

  @Test
  void aHandlersResourceExhaustedIsNotSentAgain() throws Exception {
    Ledger a = new Ledger("a");
    Ledger b = new Ledger("b");
    RpcClient client = clientOf(server(a), server(b));
    for (int i = 0; i < 4; i++) {
      String id = "quota-" + i;
      // Idempotent, and another server is there: still an answer, not a refusal.
      assertFails(() -> client.unaryCall(EXHAUSTED, StringValue.of(id)), Status.Code.RESOURCE_EXHAUSTED,
          "the handler's quota for " + id + " is used up");
      assertThat(a.runsOf(id) + b.runsOf(id)).as("%s ran once, on one server", id).isEqualTo(1);
    }
  }

  /**
   * Thousands of blocking callers on one connection, every call refused at once (the pool's one thread is held
   * and it has no queue): no caller ever waits for an answer, so all of them send all the time, through the
   * connection's one write queue, on a machine with far fewer cores than callers. Every call ends with the pool's
   * refusal as the server worded it, none with anything else, none runs, and the connection serves on. (What such
   * a crowd of senders cost in CPU while that queue made senders spin for one another, 5000 callers that stopped
   * a client sending for minutes, shows in the benchmarks' callers table, not in a timed test.)
   */
  @Test
  void thousandsOfCallersRefusedAtOnceAllGetTheirRefusalsPromptly() throws Exception {
    Ledger full = new Ledger("full");
    RpcServer server = oneThreadServer(full);
    CompletableFuture<StringValue> held = full.fill(client(server.port()));
    RpcClient client = client(server.port());

    int callers = 2000;
    int callsEach = 10;
    AtomicInteger refused = new AtomicInteger();
    Map<String, AtomicInteger> otherEnds = new ConcurrentHashMap<>();
    CountDownLatch go = new CountDownLatch(1);
    CountDownLatch done = new CountDownLatch(callers);
    List<Thread> threads = new ArrayList<>();
    try {
      for (int i = 0; i < callers; i++) {
        String caller = "caller-" + i;
        Thread t = new Thread(null, () -> {
          try {
            go.await();
            for (int c = 0; c < callsEach; c++) {
              try {
                client.unaryCall(RUN, StringValue.of(caller + "/" + c));
                otherEnds.computeIfAbsent("answered", k -> new AtomicInteger()).incrementAndGet();
              } catch (StatusException e) {
                String description = e.status().description();
                if (e.status().code() == Status.Code.RESOURCE_EXHAUSTED && description != null
                    && description.startsWith("server business pool is full")) {
                  refused.incrementAndGet();
                } else {
                  otherEnds.computeIfAbsent(e.status().code() + ": " + description, k -> new AtomicInteger())
                      .incrementAndGet();
                }
              }
            }
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          } finally {
            done.countDown();
          }
        }, caller, 256 * 1024);
        t.setDaemon(true);
        threads.add(t);
        t.start();
      }
      long started = System.nanoTime();
      go.countDown();
      boolean finished = done.await(90, TimeUnit.SECONDS);
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
      System.out.println("refusal: " + callers + " callers x " + callsEach + " calls refused at once: " + refused.get()
          + " refusals in " + ms + " ms, other ends " + otherEnds);
      assertThat(finished).as("all %d callers made their %d calls within 90 s (%d refusals by then, other ends %s)",
          callers, callsEach, refused.get(), otherEnds).isTrue();
      assertThat(otherEnds).as("calls that ended otherwise than with the pool's refusal").isEmpty();
      assertThat(refused.get()).isEqualTo(callers * callsEach);
      assertThat(full.runs).as("refused calls never ran").isEmpty();
    } finally {
      go.countDown();
      threads.forEach(Thread::interrupt);
    }
    full.release.countDown();
    assertThat(held.get(10, TimeUnit.SECONDS).getValue()).isEqualTo("hold");
    assertThat(client.pendingCalls()).isZero();
  }
}
