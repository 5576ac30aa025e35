package io.petrel.rpc.transport.netty;

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
import io.petrel.rpc.spi.ClientConfig;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A hostile server under load: it takes every call and answers UNAVAILABLE, slowly (400 to 950 ms, within the
 * callers' 1 s deadline, so that a retry always goes past it). 64 callers (half blocking, half waiting on the
 * future) call an idempotent method for a bounded time, with the client's default retries and retry budget. Every
 * call ends by its deadline (the worst lateness is measured when the client ends each call waited on as a future,
 * and bounded: a retry without its deadline timer ended calls 600 to 800 ms late; blocking callers, which end
 * their calls themselves shortly after the deadline, are held to a looser bound for their wake-up), the server's executions stay within calls x (1 + the budget's ratio) plus half the
 * bucket (a client that ignored its budget made 391 executions of 192 calls), no caller hangs, and every call
 * issued ends with a status. Two such servers: a Petrel server whose handler is slow, and a raw one on a plain
 * socket that ignores deadlines and CANCEL, so that only the client can end its calls on time.
 */
class SlowUnavailableTest extends TransportFixture {
  private static final MethodDescriptor<StringValue, StringValue> SLOW_FAIL =
      MethodDescriptor.<StringValue, StringValue>newBuilder().serviceName("hostile.Slow").methodName("fail")
          .idempotent(true)
          .requestMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
          .responseMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
          .build();

  private static final int CALLERS = 64;
  private static final Duration RUN_FOR = Duration.ofSeconds(3);
  private static final Duration DEADLINE = Duration.ofMillis(1000);
  private static final long MIN_DELAY_MS = 400;
  private static final long MAX_DELAY_MS = 950;
  /** How late a call may end after its deadline on a loaded machine; a retry past the deadline is far later. */
  private static final long MAX_LATENESS_MS = 400;

  private final ScheduledExecutorService slow = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "hostile-slow-answers");
    t.setDaemon(true);
    return t;
  });
  private final ExecutorService callers = Executors.newFixedThreadPool(CALLERS);
  private final LongAdder executions = new LongAdder();
  private final List<AutoCloseable> closing = new CopyOnWriteArrayList<>();

  @AfterEach
  void stopThreads() throws Exception {
    callers.shutdownNow();
    slow.shutdownNow();
    for (AutoCloseable c : closing) {
      c.close();
    }
  }

  private static long delayMs() {
    return ThreadLocalRandom.current().nextLong(MIN_DELAY_MS, MAX_DELAY_MS + 1);
  }

  @Test
  void aPetrelServerWhoseHandlerFailsSlowly() throws Exception {
    ServiceDefinition hostile = ServiceDefinition.builder("hostile.Slow").async(SLOW_FAIL, req -> {
      executions.increment();
      CompletableFuture<StringValue> answer = new CompletableFuture<>();
      long delay = delayMs();
      slow.schedule(() -> answer.completeExceptionally(Status.UNAVAILABLE.withDescription("hostile server"
          + " took " + delay + " ms to say it is unavailable").asException()), delay, TimeUnit.MILLISECONDS);
      return answer;
    }).build();
    RpcServer server = startServer(b -> b.addService(hostile));
    check("petrel server, slow handler", client(server.port()));
  }

  @Test
  void aRawServerThatIgnoresDeadlinesAndCancels() throws Exception {
    SlowRawServer server = new SlowRawServer();
    closing.add(server);
    check("raw server, ignores deadlines", client(server.port()));
  }

  /** Runs the callers against {@code client} (the client's defaults: maxRetries 2, a retry budget of 100, 0.1). */
  private void check(String what, RpcClient client) throws Exception {
    AtomicLong issued = new AtomicLong();
    AtomicLong ended = new AtomicLong();
    AtomicLong worstLatenessNanos = new AtomicLong(Long.MIN_VALUE);
    AtomicLong worstBlockingLatenessNanos = new AtomicLong(Long.MIN_VALUE);
    AtomicLong longestNanos = new AtomicLong();
    Map<String, AtomicInteger> outcomes = new ConcurrentHashMap<>();
    long deadlineNanos = DEADLINE.toNanos();
    long stopAt = System.nanoTime() + RUN_FOR.toNanos();
    AtomicInteger stuck = new AtomicInteger();
    List<Future<?>> running = new ArrayList<>();
    for (int i = 0; i < CALLERS; i++) {
      // Half block (the caller's thread also ends a blocking call shortly after its deadline), half wait on the
      // future (only the client's transport and core end those).
      boolean blocking = i % 2 == 0;
      running.add(callers.submit(() -> {
        while (System.nanoTime() - stopAt < 0) {
          issued.incrementAndGet();
          long start = System.nanoTime();
          // When the client ended the call: stamped on the thread that ended it (not when this caller woke up,
          // which on a loaded machine can be much later).
          AtomicLong endedAt = new AtomicLong();
          String outcome;
          try {
            if (blocking) {
              client.unaryCall(SLOW_FAIL, StringValue.of("x"), CallOptions.DEFAULT.withTimeout(DEADLINE));
            } else {
              client.unaryCallAsync(SLOW_FAIL, StringValue.of("x"), CallOptions.DEFAULT.withTimeout(DEADLINE))
                  .whenComplete((r, t) -> endedAt.set(System.nanoTime()))
                  .get(DEADLINE.toMillis() + 20_000, TimeUnit.MILLISECONDS);
            }
            outcome = "OK";
          } catch (StatusException e) {
            outcome = e.status().code().name();
          } catch (java.util.concurrent.ExecutionException e) {
            outcome = e.getCause() instanceof StatusException se ? se.status().code().name() : e.toString();
          } catch (TimeoutException e) {
            stuck.incrementAndGet();
            outcome = "not ended 20 s after its deadline";
          }
          long took = (endedAt.get() != 0 ? endedAt.get() : System.nanoTime()) - start;
          ended.incrementAndGet();
          outcomes.computeIfAbsent(outcome, k -> new AtomicInteger()).incrementAndGet();
          (blocking ? worstBlockingLatenessNanos : worstLatenessNanos).accumulateAndGet(took - deadlineNanos,
              Math::max);
          longestNanos.accumulateAndGet(took, Math::max);
        }
        return null;
      }));
    }
    int hung = 0;
    for (Future<?> f : running) {
      try {
        // Its last call started before stopAt and ends by its deadline: well within this wait.
        f.get(RUN_FOR.toMillis() + DEADLINE.toMillis() + 20_000, TimeUnit.MILLISECONDS);
      } catch (TimeoutException e) {
        hung++;
      }
    }
    long calls = issued.get();
    long attempts = executions.sum();
    long worstLateMs = TimeUnit.NANOSECONDS.toMillis(worstLatenessNanos.get());
    long worstBlockingLateMs = TimeUnit.NANOSECONDS.toMillis(worstBlockingLatenessNanos.get());
    double ratio = ClientConfig.DEFAULT_RETRY_BUDGET_RATIO;
    // Each failed attempt takes a token before its call asks for a retry, and retries stop at half the bucket:
    // at most half the bucket of retries, plus the ratio of a token each success gives back (none succeed here).
    long bound = (long) (calls * (1 + ratio)) + ClientConfig.DEFAULT_RETRY_BUDGET_TOKENS / 2;
    System.out.println("slow-unavailable (" + what + "): callers " + CALLERS + ", " + RUN_FOR.toMillis()
        + " ms, deadline " + DEADLINE.toMillis() + " ms, answers after " + MIN_DELAY_MS + "-" + MAX_DELAY_MS
        + " ms; issued " + calls + ", ended " + ended.get() + " " + new TreeMap<>(outcomes) + ", callers hung "
        + hung + "; executions " + attempts + " (bound " + bound + "); longest call "
        + TimeUnit.NANOSECONDS.toMillis(longestNanos.get()) + " ms, worst lateness after the deadline "
        + worstLateMs + " ms (as the client ended them; blocking callers woke up at most " + worstBlockingLateMs
        + " ms after it)");

    assertThat(hung).as("callers still in a call").isZero();
    assertThat(stuck.get()).as("calls not ended 20 s after their deadline").isZero();
    assertThat(ended.get()).as("calls that ended, of those issued").isEqualTo(calls);
    assertThat(outcomes.keySet()).as("how calls ended").isSubsetOf("UNAVAILABLE", "DEADLINE_EXCEEDED");
    assertThat(outcomes).as("some calls were retried past their deadline").containsKey("DEADLINE_EXCEEDED");
    assertThat(worstLateMs).as("worst lateness after the deadline, ms").isLessThanOrEqualTo(MAX_LATENESS_MS);
    // A blocking caller also ends its call itself 15 ms after the deadline; its thread may wake up later than
    // that on a loaded machine, but not by seconds.
    assertThat(worstBlockingLateMs).as("worst lateness of a blocking caller, ms").isLessThanOrEqualTo(
        3 * MAX_LATENESS_MS);
    assertThat(attempts).as("executions of %d calls, every one failing", calls).isLessThanOrEqualTo(bound);
    assertThat(client.pendingCalls()).isZero();
  }

  /**
   * A hostile server on a plain socket: it announces no limit, counts every REQUEST and answers it with
   * UNAVAILABLE 400 to 950 ms later, whatever the request's deadline; it ignores CANCEL and answers PING.
   */
  private final class SlowRawServer implements AutoCloseable {
    private final ServerSocket listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    private final List<RawPeer> peers = new CopyOnWriteArrayList<>();

    SlowRawServer() throws IOException {
      Thread acceptor = new Thread(this::accept, "hostile-raw-accept");
      acceptor.setDaemon(true);
      acceptor.start();
    }

    int port() {
      return listener.getLocalPort();
    }

    private void accept() {
      try {
        while (true) {
          Socket s = listener.accept();
          RawPeer peer = new RawPeer(s);
          s.setSoTimeout(0);
          peers.add(peer);
          Thread reader = new Thread(() -> serve(peer), "hostile-raw-read");
          reader.setDaemon(true);
          reader.start();
        }
      } catch (IOException closed) {
        // the test is over
      }
    }

    private void serve(RawPeer peer) {
      try {
        send(peer, RawPeer.settingsFrame(Protocol.SETTING_MAX_CONCURRENT_CALLS, 100_000));
        while (true) {
          RawPeer.RawFrame f = peer.readRaw();
          if (f.type() == Protocol.TYPE_PING) {
            send(peer, RawPeer.control(Protocol.TYPE_PONG, f.requestId()));
          } else if (f.type() == Protocol.TYPE_REQUEST) {
            executions.increment();
            long delay = delayMs();
            byte[] answer = RawPeer.frame(Protocol.TYPE_RESPONSE, f.requestId(), ("hostile server took " + delay
                + " ms to say it is unavailable").getBytes(StandardCharsets.UTF_8));
            answer[Protocol.OFF_STATUS] = (byte) Status.Code.UNAVAILABLE.value();
            slow.schedule(() -> send(peer, answer), delay, TimeUnit.MILLISECONDS);
          }
        }
      } catch (IOException closed) {
        // the client went away
      }
    }

    private void send(RawPeer peer, byte[] frame) {
      synchronized (peer) {
        try {
          peer.send(frame);
        } catch (IOException closed) {
          // the client went away: nobody to answer
        }
      }
    }

    @Override
    public void close() throws IOException {
      listener.close();
      for (RawPeer p : peers) {
        p.close();
      }
    }
  }
}
