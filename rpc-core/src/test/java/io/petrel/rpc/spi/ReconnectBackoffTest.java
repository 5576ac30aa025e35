package io.petrel.rpc.spi;

import io.petrel.rpc.ConnectivityState;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.internal.InternalSubchannel;
import io.petrel.rpc.marshal.Marshallers;
import java.net.ConnectException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The core owns each endpoint's connection state: for a transport that only connects (the recording one, whose
 * connects the test fails or lets succeed), the core backs off between attempts (growing, within its jitter),
 * makes the next attempt by itself for the calls waiting, and sends those calls once a connection is made.
 */
class ReconnectBackoffTest {
  private static final MethodDescriptor<byte[], byte[]> ECHO = MethodDescriptor.<byte[], byte[]>newBuilder()
      .serviceName("test.Svc").methodName("echo").requestMarshaller(Marshallers.bytes())
      .responseMarshaller(Marshallers.bytes()).build();
  private static final long INITIAL_MS = 100;

  private final RecordingTransport.Client client = RecordingTransport.of(RpcClient.builder().target("a:1")
      .transport("recording").reconnectBackoff(Duration.ofMillis(INITIAL_MS), Duration.ofSeconds(10)).build());

  @AfterEach
  void close() {
    client.shutdownNow();
  }

  private static Status statusOf(CompletableFuture<?> f) throws Exception {
    try {
      f.get(10, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      return ((StatusException) e.getCause()).status();
    }
    throw new AssertionError("the call succeeded");
  }

  /** The {@code n}-th connect attempt the core asks for (1-based), waiting for it. */
  private RecordingTransport.Conn connect(int n) throws Exception {
    RecordingTransport.Conn c = client.asked.poll(10, TimeUnit.SECONDS);
    assertThat(c).as("connect attempt %s was made", n).isNotNull();
    assertThat(client.connects.indexOf(c)).isEqualTo(n - 1);
    return c;
  }

  @Test
  void callsMadeDuringTheBackoffWaitForTheNextAttemptWhichComesLaterEachTimeWithinItsJitter() throws Exception {
    client.manualConnects = true;
    CompletableFuture<byte[]> first = client.unaryCallAsync(ECHO, new byte[] {1}, CallOptions.DEFAULT);
    connect(1).fail("refused by the test");
    assertThat(statusOf(first).description()).as("a call waits for one attempt at most")
        .startsWith("cannot connect to a:1: refused by the test; next attempt in ");
    InternalSubchannel a = client.endpoints.subchannels().get(0);
    assertThat(a.state()).isEqualTo(ConnectivityState.BACKING_OFF);

    // Meanwhile a fail-fast call fails at once, naming the cause and the next attempt.
    CompletableFuture<byte[]> fast = client.unaryCallAsync(ECHO, new byte[] {1},
        CallOptions.DEFAULT.withFailFast(true));
    assertThat(statusOf(fast).description()).startsWith("cannot connect to a:1: refused by the test; next attempt in")
        .endsWith("(RpcClient.builder().reconnectBackoff)");

    // Three more attempts fail, each made by the core for the call waiting when its backoff ends.
    long backoff = INITIAL_MS;
    for (int n = 2; n <= 4; n++) {
      CompletableFuture<byte[]> waiting = client.unaryCallAsync(ECHO, new byte[] {1}, CallOptions.DEFAULT);
      RecordingTransport.Conn attempt = connect(n);
      long waitedMs = TimeUnit.NANOSECONDS.toMillis(attempt.askedAt - client.connects.get(n - 2).askedAt);
      assertThat(waitedMs).as("backoff before attempt %s: %s ms +-20%%", n, backoff)
          .isGreaterThanOrEqualTo((long) (backoff * 0.8) - 1)
          .isLessThan((long) (backoff * 1.2) + 1000); // the upper bound allows a loaded machine a second
      assertThat(waiting).as("waits for the attempt").isNotDone();
      attempt.fail("refused by the test");
      assertThat(statusOf(waiting).description()).startsWith("cannot connect to a:1: refused by the test");
      backoff *= 2;
    }

    // The attempt after the next backoff succeeds: the calls made meanwhile are sent on its connection.
    CompletableFuture<byte[]> w1 = client.unaryCallAsync(ECHO, new byte[] {1}, CallOptions.DEFAULT);
    CompletableFuture<byte[]> w2 = client.unaryCallAsync(ECHO, new byte[] {2}, CallOptions.DEFAULT);
    RecordingTransport.Conn fifth = connect(5);
    assertThat(TimeUnit.NANOSECONDS.toMillis(fifth.askedAt - client.connects.get(3).askedAt))
        .isGreaterThanOrEqualTo((long) (backoff * 0.8) - 1);
    assertThat(client.started).as("nothing sent before a connection").isEmpty();
    fifth.succeed();
    for (int i = 0; i < 2; i++) {
      RecordingTransport.Call call = client.started.poll(10, TimeUnit.SECONDS);
      assertThat(call).isNotNull();
      assertThat(call.connection).isSameAs(fifth);
      ByteBuf body = Unpooled.copiedBuffer("ok", UTF_8);
      try {
        call.onMessage(body, true);
      } finally {
        body.release();
      }
    }
    assertThat(w1.get(10, TimeUnit.SECONDS)).isEqualTo("ok".getBytes(UTF_8));
    assertThat(w2.get(10, TimeUnit.SECONDS)).isEqualTo("ok".getBytes(UTF_8));
    assertThat(a.state()).isEqualTo(ConnectivityState.READY);
    assertThat(client.connects).as("no attempt without a caller waiting").hasSize(5);
  }

  /** The local exception of a failed connect is the cause of every call failed for it, fail-fast ones too. */
  @Test
  void aCallFailedDuringTheBackoffCarriesTheConnectFailureAsItsCause() throws Exception {
    client.manualConnects = true;
    CompletableFuture<byte[]> first = client.unaryCallAsync(ECHO, new byte[] {1}, CallOptions.DEFAULT);
    ConnectException refused = new ConnectException("Connection refused (by the test)");
    connect(1).fail(refused);
    assertThat(failure(first)).hasCause(refused);
    CompletableFuture<byte[]> fast = client.unaryCallAsync(ECHO, new byte[] {1},
        CallOptions.DEFAULT.withFailFast(true));
    StatusException e = failure(fast);
    assertThat(e.status().description()).contains("cannot connect to a:1: connection refused: nothing listens on"
        + " that port (is the server running, and is the address right?); next attempt in");
    assertThat(e).hasCause(refused);
  }

  private static StatusException failure(CompletableFuture<?> f) throws Exception {
    try {
      f.get(10, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      return (StatusException) e.getCause();
    }
    throw new AssertionError("the call succeeded");
  }

  @Test
  void aCallWhoseDeadlineComesBeforeTheNextAttemptFailsAtOnceAndOneWaitingPastItsDeadlineEndsThen()
      throws Exception {
    client.manualConnects = true;
    CompletableFuture<byte[]> first = client.unaryCallAsync(ECHO, new byte[] {1}, CallOptions.DEFAULT);
    connect(1).fail("refused by the test");
    statusOf(first);
    CompletableFuture<byte[]> tooSoon = client.unaryCallAsync(ECHO, new byte[] {1},
        CallOptions.DEFAULT.withTimeout(Duration.ofMillis(5)));
    assertThat(statusOf(tooSoon).description()).contains("after the call's deadline");

    // An attempt under way that never ends: the call waiting for it ends by its deadline, unsent.
    CompletableFuture<byte[]> waiting = client.unaryCallAsync(ECHO, new byte[] {1},
        CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(2)));
    connect(2);
    Status s = statusOf(waiting);
    assertThat(s.code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(s.description()).contains("(the request was not sent yet: it waited for the connect attempt to")
        .contains(" under way; the last attempt failed: refused by the test)");
    assertThat(client.pendingCalls()).isZero();
  }
}
