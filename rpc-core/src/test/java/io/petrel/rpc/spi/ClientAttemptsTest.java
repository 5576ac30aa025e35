package io.petrel.rpc.spi;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcClientBuilder;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.internal.ClientCall;
import io.petrel.rpc.internal.InternalSubchannel;
import io.petrel.rpc.marshal.Marshallers;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The core's rules for a call's attempts, whatever the transport: an attempt whose request no handler saw
 * (NOT_SENT, REFUSED) is sent again without the caller seeing it; one that may have run (PROCESSED) only if its
 * method is idempotent, within maxRetries and the retry budget. The recording transport plays the server.
 */
class ClientAttemptsTest {
  private static final MethodDescriptor<byte[], byte[]> PLAIN = method("plain", false);
  private static final MethodDescriptor<byte[], byte[]> IDEMPOTENT = method("idempotent", true);

  private static MethodDescriptor<byte[], byte[]> method(String name, boolean idempotent) {
    return MethodDescriptor.<byte[], byte[]>newBuilder().serviceName("test.Svc").methodName(name)
        .idempotent(idempotent).requestMarshaller(Marshallers.bytes()).responseMarshaller(Marshallers.bytes())
        .build();
  }

  private RecordingTransport.Client client = client(b -> b);

  private RecordingTransport.Client client(UnaryOperator<RpcClientBuilder> options) {
    // Round robin: the next pick is the other endpoint, so where each attempt goes is known.
    return RecordingTransport.of(options.apply(RpcClient.builder().target("static://127.0.0.1:1,127.0.0.1:2")
        .loadBalancer("round_robin").transport("recording").name("c")).build());
  }

  @AfterEach
  void close() {
    client.shutdownNow();
  }

  private RecordingTransport.Call take() throws InterruptedException {
    RecordingTransport.Call c = client.started.poll(10, TimeUnit.SECONDS);
    assertThat(c).as("an attempt reached the transport").isNotNull();
    return c;
  }

  private static void answer(RecordingTransport.Call call, String body) {
    ByteBuf b = Unpooled.copiedBuffer(body, UTF_8);
    try {
      call.onMessage(b, true);
    } finally {
      b.release();
    }
  }

  private static Status statusOf(CompletableFuture<?> f) throws Exception {
    try {
      f.get(10, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      return ((StatusException) e.getCause()).status();
    }
    throw new AssertionError("the call succeeded");
  }

  private static Status unavailable(String why) {
    return Status.UNAVAILABLE.withDescription(why);
  }

  @Test
  void aRefusedOrUnsentAttemptIsSentAgainElsewhereWithoutTheCallerSeeingIt() throws Exception {
    CompletableFuture<byte[]> f = client.rpc.unaryCallAsync(PLAIN, "x".getBytes(UTF_8), CallOptions.DEFAULT);
    RecordingTransport.Call first = take();
    InternalSubchannel firstEndpoint = first.subchannel;
    first.onClose(unavailable("GOAWAY above the last id"), AttemptProgress.REFUSED);
    RecordingTransport.Call second = take();
    assertThat(second.call).as("the same logical call").isSameAs(first.call);
    assertThat(second).as("each attempt is a stream of its own").isNotSameAs(first);
    assertThat(second.subchannel).as("picked again, another endpoint").isNotSameAs(firstEndpoint);
    client.takeDown(second.subchannel); // its connection lost before answering: it backs off
    second.onClose(unavailable("cannot connect"), AttemptProgress.NOT_SENT);
    RecordingTransport.Call third = take();
    assertThat(third.subchannel).as("never the endpoint it could not be sent to").isSameAs(firstEndpoint);
    assertThat(f).isNotDone();
    answer(third, "done");
    assertThat(new String(f.get(10, TimeUnit.SECONDS), UTF_8)).isEqualTo("done");
    assertThat(third.attempts()).isEqualTo(3);
    assertThat(first.events).as("a stream that ended itself is not cancelled").containsExactly("halfClose");
    assertThat(third.events).containsExactly("halfClose");
    assertThat(client.rpc.pendingCalls()).isZero();
  }

  @Test
  void withTheDefaultBalancerAnUnsentAttemptAlwaysGoesToAnotherEndpoint() throws Exception {
    // Least-pending draws two endpoints at random: with most of them unreachable it can offer the one the call
    // could not be sent to, twice. The call must still go elsewhere, to a reachable endpoint when there is one.
    for (int i = 0; i < 100; i++) {
      client.shutdownNow();
      client = RecordingTransport.of(RpcClient.builder()
          .target("static://127.0.0.1:1,127.0.0.1:2,127.0.0.1:3,127.0.0.1:4,127.0.0.1:5")
          .transport("recording").name("c").build());
      List<io.petrel.rpc.Endpoint> picks = new java.util.concurrent.CopyOnWriteArrayList<>();
      CompletableFuture<byte[]> f = client.rpc.unaryCallAsync(PLAIN, "x".getBytes(UTF_8),
          CallOptions.DEFAULT.withEndpointListener(picks::add));
      RecordingTransport.Call first = take();
      InternalSubchannel unreachable = first.subchannel;
      List<InternalSubchannel> subs = client.endpoints.subchannels();
      assertThat(subs).hasSize(5);
      // Four of five down (the one just tried among them, its connection lost unanswered), one up: the down
      // ones back off after their connect fails.
      InternalSubchannel up = subs.get(subs.get(0) == unreachable ? 1 : 0);
      subs.stream().filter(sub -> sub != up).forEach(client::takeDown);
      client.rpc.start(); // connects each endpoint: only the one up succeeds
      assertThat(subs).filteredOn(InternalSubchannel::isAvailable).containsExactly(up);
      first.onClose(unavailable("cannot connect"), AttemptProgress.NOT_SENT);
      assertThat(picks.get(1)).as("call %s: another endpoint", i).isNotEqualTo(unreachable.endpoint());
      if (picks.get(1).equals(up.endpoint())) {
        answer(take(), "ok");
        assertThat(f.get(10, TimeUnit.SECONDS)).isNotNull();
      } else {
        f.cancel(false); // it waits for that endpoint's next attempt
      }
    }
  }

  /**
   * A method without parameters sends a null request: its calls are sent again like any other (they were not: a
   * GOAWAY's refusal failed the call, and an idempotent one was never retried).
   */
  @Test
  void aCallOfAMethodWithoutParametersIsSentAgainAndRetriedLikeAnyOther() throws Exception {
    MethodDescriptor<Void, byte[]> ping = MethodDescriptor.<Void, byte[]>newBuilder().serviceName("test.Svc")
        .methodName("ping").idempotent(true).requestMarshaller(Marshallers.empty())
        .responseMarshaller(Marshallers.bytes()).build();
    CompletableFuture<byte[]> f = client.rpc.unaryCallAsync(ping, null, CallOptions.DEFAULT);
    RecordingTransport.Call first = take();
    first.onClose(unavailable("GOAWAY above the last id"), AttemptProgress.REFUSED);
    RecordingTransport.Call second = take();
    assertThat(second.call).as("the same logical call, sent again").isSameAs(first.call);
    second.onClose(unavailable("connection lost while in flight"), AttemptProgress.PROCESSED);
    RecordingTransport.Call third = take();
    assertThat(third.call).as("retried: the method is idempotent").isSameAs(first.call);
    answer(third, "pong");
    assertThat(new String(f.get(10, TimeUnit.SECONDS), UTF_8)).isEqualTo("pong");
    assertThat(third.attempts()).isEqualTo(3);
  }

  /**
   * A oneway call whose request no handler saw (a GOAWAY's refusal, a connection that went away before it was
   * written) is sent again, as a unary one is: the blocking stub's caller never hears of a oneway failure, so
   * failing it lost the message. One that may have reached the server is not sent again.
   */
  @Test
  void aOnewayCallNoHandlerSawIsSentAgainAndOneThatMayHaveRunIsNot() throws Exception {
    MethodDescriptor<byte[], Void> fire = MethodDescriptor.<byte[], Void>newBuilder().serviceName("test.Svc")
        .methodName("fire").type(io.petrel.rpc.MethodType.ONEWAY).idempotent(true)
        .requestMarshaller(Marshallers.bytes()).build();
    CompletableFuture<Void> f = client.rpc.oneway(fire, "x".getBytes(UTF_8), CallOptions.DEFAULT);
    RecordingTransport.Call first = take();
    first.onClose(unavailable("GOAWAY above the last id"), AttemptProgress.REFUSED);
    RecordingTransport.Call second = take();
    assertThat(second.call).as("the same oneway call, sent again").isSameAs(first.call);
    second.onClose(unavailable("went away before it was written"), AttemptProgress.NOT_SENT);
    RecordingTransport.Call third = take();
    third.onSent();
    assertThat(f.get(10, TimeUnit.SECONDS)).isNull();
    assertThat(third.attempts()).isEqualTo(3);

    CompletableFuture<Void> g = client.rpc.oneway(fire, "y".getBytes(UTF_8), CallOptions.DEFAULT);
    take().onClose(unavailable("connection lost"), AttemptProgress.PROCESSED);
    assertThat(statusOf(g).description()).as("never twice, idempotent or not").isEqualTo("connection lost");
    assertThat(client.started).isEmpty();
  }

  /**
   * An endpoint whose connect failed is not waited on while another serves: the balancers skip it while it backs
   * off and while its next attempt is under way (a host that drops connects holds one for the connect timeout),
   * the slot makes that attempt by itself when its backoff ends (no call comes to start it), and once it
   * connects calls go to both again.
   */
  @Test
  void anEndpointThatFailedReconnectsByItselfWhileTheOtherTakesEveryCall() throws Exception {
    client.shutdownNow();
    client = client(b -> b.reconnectBackoff(java.time.Duration.ofMillis(20), java.time.Duration.ofMillis(40)));
    List<InternalSubchannel> subs = client.endpoints.subchannels();
    InternalSubchannel down = subs.get(0);
    InternalSubchannel up = subs.get(1);
    client.refused.add(down.endpoint().authority());
    client.rpc.start(); // the one up connects; the other's connect fails: it backs off
    client.manualConnects = true; // from here connects hang until the test ends them (refused ones still fail)
    client.refused.clear();
    RecordingTransport.Conn next;
    do { // past start()'s attempts and any refused one: the first attempt that hangs
      next = client.asked.poll(10, TimeUnit.SECONDS);
      assertThat(next).as("the slot's own attempt when its backoff ended, with no call waiting").isNotNull();
    } while (next.future.isDone());
    assertThat(next.endpoint.sameAddress(down.endpoint())).isTrue();
    assertThat(down.isAvailable()).as("while that attempt is under way").isFalse();
    List<CompletableFuture<byte[]>> calls = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      calls.add(client.rpc.unaryCallAsync(PLAIN, ("c" + i).getBytes(UTF_8), CallOptions.DEFAULT));
      RecordingTransport.Call c = take();
      assertThat(c.subchannel).as("call %d", i).isSameAs(up);
      answer(c, "ok");
    }
    for (CompletableFuture<byte[]> f : calls) {
      assertThat(f.get(10, TimeUnit.SECONDS)).isNotNull();
    }
    next.succeed();
    // The slot hears of it on the thread that completes the attempt's future, or, if the test completed it before
    // the slot's launching thread had hooked onto it (a busy machine), on that thread a moment later.
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!down.isAvailable() && System.nanoTime() - until < 0) {
      Thread.onSpinWait();
    }
    assertThat(down.isAvailable()).as("connected again").isTrue();
    java.util.Set<InternalSubchannel> reached = new java.util.HashSet<>();
    for (int i = 0; i < 4; i++) {
      CompletableFuture<byte[]> f = client.rpc.unaryCallAsync(PLAIN, "x".getBytes(UTF_8), CallOptions.DEFAULT);
      RecordingTransport.Call c = take();
      reached.add(c.subchannel);
      answer(c, "ok");
      assertThat(f.get(10, TimeUnit.SECONDS)).isNotNull();
    }
    assertThat(reached).containsExactlyInAnyOrder(down, up);
  }

  @Test
  void reSendsAreBoundedAndAFailFastCallThatCouldNotBeSentFailsAtOnce() throws Exception {
    CompletableFuture<byte[]> f = client.rpc.unaryCallAsync(PLAIN, "x".getBytes(UTF_8), CallOptions.DEFAULT);
    for (int i = 0; i <= ClientCall.MAX_RESENDS; i++) {
      take().onClose(unavailable("refused " + i), AttemptProgress.REFUSED);
    }
    assertThat(statusOf(f).description()).isEqualTo("refused " + ClientCall.MAX_RESENDS);
    assertThat(client.started).isEmpty();

    CompletableFuture<byte[]> fast = client.rpc.unaryCallAsync(PLAIN, "x".getBytes(UTF_8),
        CallOptions.DEFAULT.withFailFast(true));
    take().onClose(unavailable("cannot connect"), AttemptProgress.NOT_SENT);
    assertThat(statusOf(fast).description()).isEqualTo("cannot connect");
    assertThat(client.started).isEmpty();

    // With one endpoint an unsent call has nowhere else to go: it fails with why it could not be sent there.
    client.shutdownNow();
    client = client(b -> b.target("127.0.0.1:1"));
    CompletableFuture<byte[]> single = client.rpc.unaryCallAsync(PLAIN, "x".getBytes(UTF_8), CallOptions.DEFAULT);
    take().onClose(unavailable("cannot connect to 127.0.0.1:1"), AttemptProgress.NOT_SENT);
    assertThat(statusOf(single).description()).isEqualTo("cannot connect to 127.0.0.1:1");
    assertThat(client.started).isEmpty();
  }

  @Test
  void anAttemptRefusedByALimitGoesOnlyToAnotherEndpointAndWithNoneFailsWithTheServersStatusUnchanged()
      throws Exception {
    Status full = Status.RESOURCE_EXHAUSTED.withDescription("server business pool is full: 1 threads busy");
    CompletableFuture<byte[]> f = client.rpc.unaryCallAsync(PLAIN, "x".getBytes(UTF_8), CallOptions.DEFAULT);
    RecordingTransport.Call first = take();
    InternalSubchannel refusing = first.subchannel;
    first.onClose(full, AttemptProgress.REFUSED);
    RecordingTransport.Call second = take();
    assertThat(second.subchannel).as("sent again, to the other endpoint").isNotSameAs(refusing);
    assertThat(f).isNotDone();
    answer(second, "answered elsewhere");
    assertThat(new String(f.get(10, TimeUnit.SECONDS), UTF_8)).isEqualTo("answered elsewhere");
    assertThat(io.petrel.rpc.internal.ClientChannel.runtimeOf(client.rpc).retryBudget().milliTokens())
        .as("a limit's refusal takes a retry token (and the success gives back a tenth)")
        .isLessThan(ClientConfig.DEFAULT_RETRY_BUDGET_TOKENS * 1000);

    // Every endpoint full: re-sends are bounded, and the caller gets the last server's status as it came.
    CompletableFuture<byte[]> bounded = client.rpc.unaryCallAsync(IDEMPOTENT, "x".getBytes(UTF_8),
        CallOptions.DEFAULT);
    InternalSubchannel previous = null;
    for (int i = 0; i <= ClientCall.MAX_RESENDS; i++) {
      RecordingTransport.Call c = take();
      assertThat(c.subchannel).as("attempt %d: never the endpoint that just refused it", i).isNotSameAs(previous);
      previous = c.subchannel;
      c.onClose(Status.RESOURCE_EXHAUSTED.withDescription("full " + i), AttemptProgress.REFUSED);
    }
    Status last = statusOf(bounded);
    assertThat(last.code()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(last.description()).as("not an idempotent retry either").isEqualTo("full " + ClientCall.MAX_RESENDS);
    assertThat(client.started).isEmpty();

    // A handler's own RESOURCE_EXHAUSTED (an answer: the handler ran) is never sent again, even when idempotent.
    CompletableFuture<byte[]> answered = client.rpc.unaryCallAsync(IDEMPOTENT, "x".getBytes(UTF_8),
        CallOptions.DEFAULT);
    take().onStatus(Status.RESOURCE_EXHAUSTED.withDescription("the handler's quota"));
    assertThat(statusOf(answered).description()).isEqualTo("the handler's quota");
    assertThat(client.started).isEmpty();

    // One endpoint: the one that is full is the only one; the caller gets its status and message unchanged.
    client.shutdownNow();
    client = client(b -> b.target("127.0.0.1:1"));
    CompletableFuture<byte[]> single = client.rpc.unaryCallAsync(PLAIN, "x".getBytes(UTF_8), CallOptions.DEFAULT);
    take().onClose(full, AttemptProgress.REFUSED);
    Status got = statusOf(single);
    assertThat(got.code()).isEqualTo(full.code());
    assertThat(got.description()).isEqualTo(full.description());
    assertThat(client.started).as("not sent again to the endpoint that said it is full").isEmpty();
  }

  @Test
  void anAttemptThatMayHaveRunIsNeverSentAgainUnlessTheMethodIsIdempotent() throws Exception {
    CompletableFuture<byte[]> plain = client.rpc.unaryCallAsync(PLAIN, "x".getBytes(UTF_8), CallOptions.DEFAULT);
    take().onClose(unavailable("connection lost with the call in flight"), AttemptProgress.PROCESSED);
    assertThat(statusOf(plain).code()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(client.started).as("not sent again").isEmpty();

    CompletableFuture<byte[]> idem = client.rpc.unaryCallAsync(IDEMPOTENT, "x".getBytes(UTF_8),
        CallOptions.DEFAULT);
    take().onStatus(unavailable("the server's answer"));
    take().onClose(unavailable("connection lost"), AttemptProgress.PROCESSED);
    answer(take(), "third time");
    assertThat(new String(idem.get(10, TimeUnit.SECONDS), UTF_8)).isEqualTo("third time");

    CompletableFuture<byte[]> exhausted = client.rpc.unaryCallAsync(IDEMPOTENT, "x".getBytes(UTF_8),
        CallOptions.DEFAULT);
    for (int i = 0; i <= client.config.maxRetries(); i++) {
      take().onStatus(unavailable("down " + i));
    }
    assertThat(statusOf(exhausted).description()).isEqualTo("down " + client.config.maxRetries());

    CompletableFuture<byte[]> notRetryable = client.rpc.unaryCallAsync(IDEMPOTENT, "x".getBytes(UTF_8),
        CallOptions.DEFAULT);
    take().onStatus(Status.INTERNAL.withDescription("a bug"));
    assertThat(statusOf(notRetryable).code()).as("only UNAVAILABLE is retried").isEqualTo(Status.Code.INTERNAL);
    assertThat(client.started).isEmpty();
  }

  @Test
  void noRetriesWithMaxRetriesZeroAndNoneOnceTheDeadlinePassed() throws Exception {
    client.shutdownNow();
    client = client(b -> b.maxRetries(0));
    CompletableFuture<byte[]> f = client.rpc.unaryCallAsync(IDEMPOTENT, "x".getBytes(UTF_8), CallOptions.DEFAULT);
    take().onStatus(unavailable("down"));
    assertThat(statusOf(f).description()).isEqualTo("down");
    assertThat(client.started).isEmpty();
  }

  @Test
  void withEveryAttemptFailingTheBudgetKeepsAttemptsWithinCallsTimesOnePlusTheRatio() throws Exception {
    client.shutdownNow();
    client = client(b -> b.retryBudget(10, 0.1)); // gRPC's example bucket: the bound shows within 200 calls
    int calls = 200;
    int attempts = 0;
    List<CompletableFuture<byte[]>> futures = new ArrayList<>();
    for (int i = 0; i < calls; i++) {
      futures.add(client.rpc.unaryCallAsync(IDEMPOTENT, "x".getBytes(UTF_8), CallOptions.DEFAULT));
      RecordingTransport.Call c;
      while ((c = client.started.poll()) != null) {
        attempts++;
        c.onStatus(unavailable("every server is down"));
      }
    }
    for (CompletableFuture<byte[]> f : futures) {
      assertThat(statusOf(f).code()).isEqualTo(Status.Code.UNAVAILABLE);
    }
    double ratio = ClientConfig.DEFAULT_RETRY_BUDGET_RATIO;
    assertThat(attempts).as("attempts of %d failing calls", calls).isLessThanOrEqualTo((int) (calls * (1 + ratio)))
        .isGreaterThan(calls); // a few retries were made before the budget ran low
    // Each failed attempt takes a token of 10 and retries stop at 5 left: at most 5 retries in all.
    assertThat(attempts - calls).isBetween(1, 10 / 2);

    // Successes refill it, a tenth of a token each: after 70 there are 7 tokens, and a failure leaves 6 (> 5).
    for (int i = 0; i < 70; i++) {
      CompletableFuture<byte[]> ok = client.rpc.unaryCallAsync(IDEMPOTENT, "x".getBytes(UTF_8),
          CallOptions.DEFAULT);
      answer(take(), "ok");
      ok.get(10, TimeUnit.SECONDS);
    }
    CompletableFuture<byte[]> again = client.rpc.unaryCallAsync(IDEMPOTENT, "x".getBytes(UTF_8),
        CallOptions.DEFAULT);
    take().onStatus(unavailable("blip"));
    answer(take(), "retried");
    assertThat(new String(again.get(10, TimeUnit.SECONDS), UTF_8)).isEqualTo("retried");
  }
}
