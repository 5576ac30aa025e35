package io.petrel.rpc.spi;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.Deadline;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.MethodType;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.marshal.Marshallers;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The client's per-call runtime, which every transport shares: counting against maxPendingCalls, the single
 * completion, when the core cancels an attempt's stream, the stream's events (messages, then a close with a
 * status), meters, executors and termination. The transport here records calls and the test plays the
 * server.
 */
class ClientCallTest {
  private static final MethodDescriptor<byte[], byte[]> ECHO = MethodDescriptor.<byte[], byte[]>newBuilder()
      .serviceName("test.Svc").methodName("echo").requestMarshaller(Marshallers.bytes())
      .responseMarshaller(Marshallers.bytes()).build();
  private static final MethodDescriptor<byte[], Void> FIRE = MethodDescriptor.<byte[], Void>newBuilder()
      .serviceName("test.Svc").methodName("fire").type(MethodType.ONEWAY).requestMarshaller(Marshallers.bytes())
      .responseMarshaller(Marshallers.empty()).build();

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private RecordingTransport.Client client = client(16);

  private RecordingTransport.Client client(int maxPending) {
    return RecordingTransport.of(RpcClient.builder().target("127.0.0.1:1").transport("recording")
        .maxPendingCalls(maxPending).meterRegistry(registry).name("c").build());
  }

  @AfterEach
  void close() {
    client.shutdownNow();
  }

  private static byte[] bytes(String s) {
    return s.getBytes(UTF_8);
  }

  private RecordingTransport.Call take() throws InterruptedException {
    RecordingTransport.Call c = client.started.poll(10, TimeUnit.SECONDS);
    assertThat(c).as("the call reached the transport").isNotNull();
    return c;
  }

  private static Status statusOf(CompletableFuture<?> f) {
    try {
      f.get(10, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      return ((StatusException) e.getCause()).status();
    } catch (Exception e) {
      throw new AssertionError(e);
    }
    throw new AssertionError("the call succeeded");
  }

  private static void deliver(RecordingTransport.Call call, String body, boolean end) {
    ByteBuf b = Unpooled.copiedBuffer(body, UTF_8);
    try {
      call.onMessage(b, end);
    } finally {
      b.release();
    }
  }

  @Test
  void aResponseMessageWithTheEndCompletesTheCallOnceAndRecordsIt() throws Exception {
    AtomicReference<Metadata> seen = new AtomicReference<>();
    CompletableFuture<byte[]> f = client.unaryCallAsync(ECHO, bytes("hi"),
        CallOptions.DEFAULT.withResponseMetadataListener(seen::set));
    RecordingTransport.Call call = take();
    assertThat(client.pendingCalls()).isEqualTo(1);
    Metadata md = Metadata.of("k", "v");
    call.onResponseMetadata(md);
    deliver(call, "hello", true);
    assertThat(new String(f.get(10, TimeUnit.SECONDS), UTF_8)).isEqualTo("hello");
    assertThat(seen.get()).isSameAs(md);
    assertThat(client.pendingCalls()).isZero();
    assertThat(call.events).as("the stream ended the call itself: not cancelled").containsExactly("halfClose");
    // A second end (a late status, a duplicate message) changes nothing.
    call.onStatus(Status.INTERNAL.withDescription("late"));
    assertThat(call.fail(Status.UNAVAILABLE)).isFalse();
    assertThat(call.events).containsExactly("halfClose");
    Timer ok = registry.find("rpc.client.calls").tag("status", "OK").tag("method", "echo").timer();
    assertThat(ok).isNotNull();
    assertThat(ok.count()).isEqualTo(1);
    assertThat(registry.find("rpc.client.response.size").summary().totalAmount()).isEqualTo(5);
    assertThat(registry.find("rpc.client.request.size").summary().totalAmount()).isEqualTo(2);
  }

  @Test
  void aSecondResponseMessageFailsAUnaryCallWithInternalAndCancelsItsStream() throws Exception {
    CompletableFuture<byte[]> f = client.unaryCallAsync(ECHO, bytes("hi"), CallOptions.DEFAULT);
    RecordingTransport.Call call = take();
    deliver(call, "part one", false);
    assertThat(f).as("one message, no end yet").isNotDone();
    deliver(call, "part two", false);
    Status s = statusOf(f);
    assertThat(s.code()).isEqualTo(Status.Code.INTERNAL);
    assertThat(s.description()).contains("test.Svc/echo").contains("more than one response message");
    assertThat(call.events).containsExactly("halfClose", "cancel:INTERNAL");
    assertThat(client.pendingCalls()).isZero();
  }

  @Test
  void aNullRequestReachesTheStreamAsItsOneMessage() throws Exception {
    // A method without parameters sends null: its marshaller, not the call, decides what that is.
    CompletableFuture<byte[]> f = client.unaryCallAsync(ECHO, null, CallOptions.DEFAULT);
    RecordingTransport.Call call = take();
    assertThat(call.request).isNull();
    assertThat(call.events).containsExactly("halfClose");
    deliver(call, "none", true);
    assertThat(new String(f.get(10, TimeUnit.SECONDS), UTF_8)).isEqualTo("none");
  }

  @Test
  void anOkStatusWithoutAMessageFailsWithInternalAndUnimplementedNamesMethodAndPeer() throws Exception {
    CompletableFuture<byte[]> f = client.unaryCallAsync(ECHO, bytes("hi"), CallOptions.DEFAULT);
    take().onStatus(Status.OK);
    assertThat(statusOf(f).description()).contains("ended test.Svc/echo with OK but sent no response message");

    CompletableFuture<byte[]> g = client.unaryCallAsync(ECHO, bytes("hi"), CallOptions.DEFAULT);
    take().onStatus(Status.UNIMPLEMENTED.withDescription("no method with id 0x1"));
    Status s = statusOf(g);
    assertThat(s.code()).isEqualTo(Status.Code.UNIMPLEMENTED);
    assertThat(s.description()).isEqualTo("test.Svc/echo is not implemented by 127.0.0.1:1: no method with id 0x1");
  }

  @Test
  void cancellingTellsTheTransportOnceAndALateResponseIsIgnored() throws Exception {
    CompletableFuture<byte[]> f = client.unaryCallAsync(ECHO, bytes("hi"), CallOptions.DEFAULT);
    RecordingTransport.Call call = take();
    assertThat(f.cancel(false)).isTrue();
    assertThat(f.cancel(false)).isFalse();
    assertThat(call.events).as("the stream is cancelled once").containsExactly("halfClose", "cancel:CANCELLED");
    deliver(call, "late", true);
    assertThat(f.isCancelled()).isTrue();
    assertThat(client.pendingCalls()).isZero();
    assertThat(registry.find("rpc.client.calls").tag("status", "CANCELLED").timer().count()).isEqualTo(1);
  }

  @Test
  void theTransportsDeadlineEndsTheCallOnceWithTheCoresMessage() throws Exception {
    CompletableFuture<byte[]> f = client.unaryCallAsync(ECHO, bytes("hi"),
        CallOptions.DEFAULT.withDeadline(Deadline.after(5, TimeUnit.SECONDS)));
    RecordingTransport.Call call = take();
    assertThat(call.deadlineExceeded(" (the request was not sent yet)")).isTrue();
    assertThat(call.deadlineExceeded("")).isFalse();
    Status s = statusOf(f);
    assertThat(s.code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(s.description()).startsWith("deadline exceeded after ")
        .endsWith("ms waiting for test.Svc/echo from 127.0.0.1:1 (the request was not sent yet)");
    assertThat(call.events).as("the stream ended the attempt itself").containsExactly("halfClose");
  }

  @Test
  void callsBeyondMaxPendingCallsFailAtOnceWithoutReachingTheTransport() throws Exception {
    client.shutdownNow();
    client = client(2);
    CompletableFuture<byte[]> a = client.unaryCallAsync(ECHO, bytes("a"), CallOptions.DEFAULT);
    CompletableFuture<byte[]> b = client.unaryCallAsync(ECHO, bytes("b"), CallOptions.DEFAULT);
    CompletableFuture<byte[]> c = client.unaryCallAsync(ECHO, bytes("c"), CallOptions.DEFAULT);
    Status s = statusOf(c);
    assertThat(s.code()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(s.description()).contains("client has 2 calls pending").contains("maxPendingCalls");
    assertThat(client.started).hasSize(2);
    assertThat(client.pendingCalls()).isEqualTo(2);
    deliver(take(), "A", true);
    assertThat(a.get(10, TimeUnit.SECONDS)).isEqualTo(bytes("A"));
    // A place is free again.
    CompletableFuture<byte[]> d = client.unaryCallAsync(ECHO, bytes("d"), CallOptions.DEFAULT);
    assertThat(client.started).hasSize(2);
    assertThat(b.isDone()).isFalse();
    assertThat(d.isDone()).isFalse();
  }

  @Test
  void anExpiredDeadlineOrAMarshallerFailureEndsTheCallBeforeTheTransport() throws Exception {
    CompletableFuture<byte[]> late = client.unaryCallAsync(ECHO, bytes("x"),
        CallOptions.DEFAULT.withDeadline(Deadline.after(-1, TimeUnit.MILLISECONDS)));
    assertThat(statusOf(late).description()).isEqualTo("deadline already passed before test.Svc/echo was sent");
    CompletableFuture<byte[]> boom = client.unaryCallAsync(ECHO, bytes("boom"), CallOptions.DEFAULT);
    Status s = statusOf(boom);
    assertThat(s.code()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(s.description()).isEqualTo("cannot encode the request of test.Svc/echo: java.lang.IllegalArgumentException:"
        + " the marshaller refused it");
    assertThat(client.started).isEmpty();
    assertThat(client.pendingCalls()).isZero();
  }

  @Test
  void aOnewayIsDoneWhenSentAndCallbacksRunOnTheCallbackExecutor() throws Exception {
    ExecutorService pool = Executors.newSingleThreadExecutor(r -> new Thread(r, "callbacks"));
    try {
      CompletableFuture<Void> f = client.oneway(FIRE, bytes("x"), CallOptions.DEFAULT.withExecutor(pool));
      take().onSent();
      assertThat(f.get(10, TimeUnit.SECONDS)).isNull();

      CompletableFuture<String> thread = client.unaryCallAsync(ECHO, bytes("y"), CallOptions.DEFAULT
          .withExecutor(pool)).thenApply(r -> Thread.currentThread().getName());
      deliver(take(), "Y", true);
      assertThat(thread.get(10, TimeUnit.SECONDS)).isEqualTo("callbacks");

      CompletableFuture<String> failed = client.unaryCallAsync(ECHO, bytes("z"), CallOptions.DEFAULT
          .withExecutor(pool)).handle((r, t) -> Thread.currentThread().getName());
      take().fail(Status.UNAVAILABLE.withDescription("connection closed"));
      assertThat(failed.get(10, TimeUnit.SECONDS)).isEqualTo("callbacks");
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void shutdownTerminatesOnceTheLastPendingCallEnds() throws Exception {
    CompletableFuture<byte[]> f = client.unaryCallAsync(ECHO, bytes("hi"), CallOptions.DEFAULT);
    RecordingTransport.Call call = take();
    client.shutdown();
    assertThat(client.isShutdown()).isTrue();
    assertThat(client.isTerminated()).isFalse();
    assertThat(client.terminations).isZero();
    Status refused = statusOf(client.unaryCallAsync(ECHO, bytes("later"), CallOptions.DEFAULT));
    assertThat(refused.description()).isEqualTo("client 'c' is shut down; test.Svc/echo not sent");
    deliver(call, "bye", true);
    assertThat(f.get(10, TimeUnit.SECONDS)).isEqualTo(bytes("bye"));
    assertThat(client.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(client.terminations).isEqualTo(1);
    client.shutdownNow();
    assertThat(client.terminations).as("terminated once").isEqualTo(1);
    assertThatThrownBy(() -> client.unaryCall(ECHO, bytes("x"))).isInstanceOf(StatusException.class)
        .hasMessageContaining("is shut down");
  }
}
