package io.petrel.rpc.transport.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.StringValue;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * A server that stops reading a connection itself (its requests waiting for the business pool hold the
 * connection's share of the buffers) does not take the silence that follows for a dead peer: its keepalive
 * PING cannot be answered while it does not read, so the connection is kept, and every call is answered once
 * the pool catches up.
 */
class PausedReadsKeepaliveTest extends TransportFixture {

  @Test
  void aConnectionTheServerStoppedReadingIsNotClosedByItsKeepalive() throws Exception {
    RpcServer server = startServer(b -> b.businessThreads(1).businessQueueSize(100)
        .maxBufferedBytesPerConnection(64 * 1024).keepAlive(Duration.ofMillis(100), Duration.ofMillis(100)));
    RpcClient client = client(server.port());
    CompletableFuture<StringValue> holding =
        client.unaryCallAsync(TestService.BLOCK, StringValue.of("holds the one thread"), CallOptions.DEFAULT);
    assertThat(service.blockStarted.poll(10, TimeUnit.SECONDS)).isNotNull();
    List<CompletableFuture<byte[]>> queued = new ArrayList<>();
    for (int i = 0; i < 8; i++) { // 8 x 16 KiB waiting for the pool: over the 64 KiB share, reads pause
      queued.add(client.unaryCallAsync(TestService.BYTES, new byte[16 * 1024], CallOptions.DEFAULT));
    }
    // Several keepalive periods (PING after 100 ms of silence, 100 ms for its answer) with reads paused: the
    // calls must still be waiting, not failed by a closed connection.
    CompletableFuture<Void> all = CompletableFuture.allOf(queued.toArray(CompletableFuture[]::new));
    assertThatThrownBy(() -> all.get(1500, TimeUnit.MILLISECONDS)).isInstanceOf(TimeoutException.class);
    service.gate.countDown();
    assertThat(holding.get(10, TimeUnit.SECONDS).getValue()).isEqualTo("holds the one thread");
    for (CompletableFuture<byte[]> f : queued) {
      assertThat(f.get(10, TimeUnit.SECONDS)).hasSize(16 * 1024);
    }
  }
}
