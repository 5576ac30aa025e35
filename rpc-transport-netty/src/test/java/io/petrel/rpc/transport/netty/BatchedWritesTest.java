package io.petrel.rpc.transport.netty;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.StringValue;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.ExceptionDetails;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.RpcServerBuilder;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Frames written in batches: the requests of one write-queue drain share a flush, and a
 * direct-mode server encodes the responses of one read batch into one buffer. Pipelined calls of every size
 * (below, around and far above the largest batch, 16 KiB), with failures and over-size responses among them, must each
 * get their own answer, and the connection must stay usable.
 */
class BatchedWritesTest extends TransportFixture {
  private static final int SERVER_MAX_FRAME = 128 * 1024;
  private static final int[] SIZES = {0, 1, 700, 8_000, 9_000, 16_300, 20_000, 70_000};

  private static byte[] body(int size, int seed) {
    byte[] b = new byte[size];
    for (int i = 0; i < size; i++) {
      b[i] = (byte) (seed * 31 + i);
    }
    return b;
  }

  @ParameterizedTest
  @ValueSource(strings = {"direct", "pool"})
  void pipelinedCallsOfMixedSizesAndOutcomesEachGetTheirAnswer(String mode) throws Exception {
    UnaryOperator<RpcServerBuilder> executor = "direct".equals(mode) ? RpcServerBuilder::directExecutor : b -> b;
    // exceptionDetails(ALL): each failed call is told apart by its exception's message ("boom: f<i>"), which the
    // server sends only with ALL (FAIL does not declare its exception).
    RpcServer server = startServer(b -> executor.apply(b.maxFrameSize(SERVER_MAX_FRAME)
        .maxConcurrentCallsPerConnection(10_000).businessQueueSize(10_000).exceptionDetails(ExceptionDetails.ALL)));
    RpcClient client = client(server.port());
    int n = 3000;
    List<CompletableFuture<?>> futures = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      switch (i % 11) {
        case 3 -> futures.add(client.unaryCallAsync(TestService.FAIL, StringValue.of("f" + i), CallOptions.DEFAULT));
        case 7 -> futures.add(client.unaryCallAsync(TestService.BIG_RESPONSE,
            new Object[] {i % 2 == 0 ? SERVER_MAX_FRAME : 30_000}, CallOptions.DEFAULT));
        case 0, 5 -> futures.add(client.unaryCallAsync(TestService.ECHO, StringValue.of("e" + i),
            CallOptions.DEFAULT));
        default -> futures.add(client.unaryCallAsync(TestService.BYTES, body(SIZES[i % SIZES.length], i),
            CallOptions.DEFAULT));
      }
    }
    for (int i = 0; i < n; i++) {
      CompletableFuture<?> f = futures.get(i);
      switch (i % 11) {
        case 3 -> assertFailed(f, Status.Code.UNKNOWN, "boom: f" + i);
        case 7 -> {
          if (i % 2 == 0) {
            assertFailed(f, Status.Code.RESOURCE_EXHAUSTED, "exceeds maxFrameSize " + SERVER_MAX_FRAME);
          } else {
            assertThat((byte[]) f.get(30, TimeUnit.SECONDS)).as("call %d", i).hasSize(30_000);
          }
        }
        case 0, 5 -> assertThat(((StringValue) f.get(30, TimeUnit.SECONDS)).getValue()).as("call %d", i)
            .isEqualTo("e" + i);
        default -> assertThat(Arrays.equals((byte[]) f.get(30, TimeUnit.SECONDS), body(SIZES[i % SIZES.length], i)))
            .as("body of call %d", i).isTrue();
      }
    }
    assertThat(client.pendingCalls()).isZero();
    assertThat(client.unaryCall(TestService.ECHO, StringValue.of("after")).getValue()).isEqualTo("after");
  }

  private static void assertFailed(CompletableFuture<?> f, Status.Code code, String text) throws Exception {
    try {
      f.get(30, TimeUnit.SECONDS);
      throw new AssertionError("expected " + code + " but the call succeeded");
    } catch (ExecutionException e) {
      assertThat(e.getCause()).isInstanceOfSatisfying(StatusException.class, s -> {
        assertThat(s.code()).isEqualTo(code);
        assertThat(s.status().description()).contains(text);
      });
    }
  }
}
