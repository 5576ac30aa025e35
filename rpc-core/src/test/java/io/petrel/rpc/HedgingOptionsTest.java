package io.petrel.rpc;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.petrel.rpc.internal.ClientChannel;
import io.petrel.rpc.marshal.Marshallers;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The hedging options (docs/cluster.md, "Hedging"): checked where they are given, with messages that name them;
 * off by default; a call's own policy read over the client's; an in-process client never hedges.
 */
class HedgingOptionsTest {
  private static final MethodDescriptor<byte[], byte[]> READ = MethodDescriptor.<byte[], byte[]>newBuilder()
      .serviceName("hedging.Svc").methodName("read").idempotent(true)
      .requestMarshaller(Marshallers.bytes()).responseMarshaller(Marshallers.bytes()).build();

  private @Nullable RpcServer server;
  private @Nullable RpcClient client;
  private final CountDownLatch release = new CountDownLatch(1);

  @AfterEach
  void close() throws InterruptedException {
    release.countDown();
    RpcClient c = client;
    if (c != null) {
      c.shutdownNow();
      assertThat(c.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
    RpcServer s = server;
    if (s != null) {
      s.shutdownNow();
      assertThat(s.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
  }

  @Test
  void outOfRangeArgumentsAreRefusedNamingTheOption() {
    assertThatThrownBy(() -> HedgingPolicy.of(0, Duration.ofMillis(10)))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("hedging maxAttempts must be between 1 and 5: 0");
    assertThatThrownBy(() -> RpcClient.builder().hedging(6, Duration.ofMillis(10)))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("hedging maxAttempts must be between 1 and 5: 6");
    assertThatThrownBy(() -> CallOptions.DEFAULT.withHedging(2, Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("hedging delay must be >= 0: PT-0.001S");
    assertThatThrownBy(() -> CallOptions.DEFAULT.withHedging(2, null))
        .isInstanceOf(NullPointerException.class).hasMessage("hedging delay");
  }

  @Test
  void hedgingIsOffByDefaultAndACallsOwnPolicyIsKeptThroughItsCopies() {
    assertThat(Defaults.HEDGING.isOn()).isFalse();
    assertThat(Defaults.HEDGING.maxAttempts()).isEqualTo(1);
    assertThat(HedgingPolicy.of(1, Duration.ofSeconds(1))).isSameAs(HedgingPolicy.OFF);
    assertThat(CallOptions.DEFAULT.hedging()).isNull();

    CallOptions hedged = CallOptions.DEFAULT.withHedging(3, Duration.ofMillis(20))
        .withTimeout(Duration.ofSeconds(1)).withHashKey("k").withMetadata(Metadata.EMPTY);
    assertThat(hedged.hedging()).isEqualTo(HedgingPolicy.of(3, Duration.ofMillis(20)));
    assertThat(hedged.hedging().delayNanos()).isEqualTo(20_000_000L);
    assertThat(hedged.withoutHedging().hedging()).isSameAs(HedgingPolicy.OFF);
    assertThat(hedged.toString()).contains("HedgingPolicy{maxAttempts=3, delay=PT0.02S, nonFatalCodes=[UNAVAILABLE]}");
  }

  @Test
  void nonFatalCodesAreUnavailableByDefaultAndOkOrDeadlineExceededAreRefused() {
    HedgingPolicy p = HedgingPolicy.of(2, Duration.ofMillis(20));
    assertThat(p.nonFatalCodes()).containsExactly(Status.Code.UNAVAILABLE);
    assertThat(p.isNonFatal(Status.Code.UNAVAILABLE)).isTrue();
    assertThat(p.isNonFatal(Status.Code.RESOURCE_EXHAUSTED)).isFalse();
    HedgingPolicy shed = p.withNonFatalCodes(Status.Code.RESOURCE_EXHAUSTED, Status.Code.UNAVAILABLE);
    assertThat(shed.nonFatalCodes()).containsExactlyInAnyOrder(Status.Code.UNAVAILABLE,
        Status.Code.RESOURCE_EXHAUSTED);
    assertThat(shed).isNotEqualTo(p).isEqualTo(p.withNonFatalCodes(Status.Code.UNAVAILABLE,
        Status.Code.RESOURCE_EXHAUSTED));
    assertThat(shed.maxAttempts()).isEqualTo(2);
    assertThat(p.withNonFatalCodes().isNonFatal(Status.Code.UNAVAILABLE)).as("none: every failure ends the call")
        .isFalse();
    assertThatThrownBy(() -> shed.nonFatalCodes().add(Status.Code.INTERNAL))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> p.withNonFatalCodes(Status.Code.OK)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("hedging non-fatal codes cannot include OK: a response always ends the call");
    assertThatThrownBy(() -> p.withNonFatalCodes(Status.Code.DEADLINE_EXCEEDED))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("share the call's deadline");
  }

  @Test
  void anInProcessClientDoesNotHedge() throws Exception {
    String name = "hedging-in-process";
    AtomicInteger ran = new AtomicInteger();
    server = RpcServer.builder().inProcess(name).addService(ServiceDefinition.builder("hedging.Svc")
        .async(READ, req -> {
          ran.incrementAndGet();
          return new CompletableFuture<>(); // never answered: only the deadline ends the call
        }).build()).build().start();
    RpcClient c = RpcClient.builder().inProcess(name).hedging(3, Duration.ZERO).build();
    client = c;
    CompletableFuture<byte[]> f = c.unaryCallAsync(READ, "once".getBytes(UTF_8), CallOptions.DEFAULT
        .withTimeout(Duration.ofMillis(200)).withHedging(3, Duration.ZERO));
    assertThatThrownBy(() -> f.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(StatusException.class)
        .cause().hasMessageContaining("DEADLINE_EXCEEDED");
    assertThat(ran).hasValue(1);
    assertThat(ClientChannel.runtimeOf(c).hedges()).isZero();
  }
}
