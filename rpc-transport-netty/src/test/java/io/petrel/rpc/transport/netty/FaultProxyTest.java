package io.petrel.rpc.transport.netty;

import static io.petrel.rpc.testing.CallFailures.failureOf;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.StringValue;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.testing.FaultProxy;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Calls through a {@link FaultProxy}: a bad network changes how long calls take, never whether they end, and
 * never the answers; clients that do not go through it are served meanwhile.
 */
class FaultProxyTest extends TransportFixture {

  @Test
  void oneByteSlicesChangeNothingButSpeed() throws Exception {
    RpcServer server = startServer();
    try (FaultProxy proxy = new FaultProxy(server.port()).slice(1)) {
      RpcClient client = client(proxy.port());
      for (int size : new int[] {0, 1, 31, 32, 33, 1000, 20_000}) {
        byte[] body = new byte[size];
        for (int i = 0; i < size; i++) {
          body[i] = (byte) (i * 31);
        }
        assertThat(client.unaryCall(TestService.BYTES, body)).isEqualTo(body);
      }
      assertThat(client.unaryCall(TestService.ADD, new Object[] {40, 2})).isEqualTo(42);
      assertThat(client.unaryCall(TestService.META, StringValue.of(""), CallOptions.DEFAULT.withMetadata(
          io.petrel.rpc.Metadata.of("x-test", "sliced"))).getValue()).isEqualTo("sliced");
      assertThat(proxy.forwardedBytes()).isGreaterThan(40_000);
    }
  }

  @Test
  void latencyAndABandwidthCapEndCallsByTheirDeadlineWhileOthersAreServed() throws Exception {
    RpcServer server = startServer();
    RpcClient direct = client(server.port());
    try (FaultProxy proxy = new FaultProxy(server.port())) {
      RpcClient client = client(proxy.port());
      assertThat(client.unaryCall(TestService.ECHO, StringValue.of("up")).getValue()).isEqualTo("up");
      proxy.latency(300, TimeUnit.MILLISECONDS);
      long start = System.nanoTime();
      StatusException late = failureOf(client.unaryCallAsync(TestService.ECHO, StringValue.of("late"),
          CallOptions.DEFAULT.withTimeout(Duration.ofMillis(100))));
      long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      assertThat(late.code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
      assertThat(tookMs).isBetween(95L, 300L);
      // 1 MiB at 100 KB/s cannot arrive within 500 ms.
      proxy.latency(0, TimeUnit.MILLISECONDS).bandwidth(100_000);
      start = System.nanoTime();
      CompletableFuture<byte[]> slow = client.unaryCallAsync(TestService.BIG_RESPONSE, new Object[] {1 << 20},
          CallOptions.DEFAULT.withTimeout(Duration.ofMillis(500)));
      assertThat(direct.unaryCall(TestService.ECHO, StringValue.of("meanwhile")).getValue()).isEqualTo("meanwhile");
      assertThat(failureOf(slow).code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isBetween(495L, 700L);
    }
  }

  @Test
  void aBlackHoleIsFoundByKeepaliveAndTheClientRecoversWhenItHeals() throws Exception {
    RpcServer server = startServer();
    try (FaultProxy proxy = new FaultProxy(server.port())) {
      RpcClient client = client(proxy.port(), b -> b.keepAliveTime(Duration.ofMillis(200)));
      assertThat(client.unaryCall(TestService.ECHO, StringValue.of("up")).getValue()).isEqualTo("up");
      proxy.blackHole(true);
      long start = System.nanoTime();
      StatusException e = failureOf(client.unaryCallAsync(TestService.ECHO, StringValue.of("lost"),
          CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(30))));
      assertThat(e.code()).isEqualTo(Status.Code.UNAVAILABLE);
      assertThat(e.status().description()).contains("keepalive");
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(3_000);
      proxy.heal();
      String reply = null;
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (reply == null && System.nanoTime() < until) { // fails fast while the client backs off
        try {
          reply = client.unaryCall(TestService.ECHO, StringValue.of("back")).getValue();
        } catch (StatusException retry) {
          assertThat(retry.code()).isEqualTo(Status.Code.UNAVAILABLE);
        }
      }
      assertThat(reply).isEqualTo("back");
    }
  }
}
