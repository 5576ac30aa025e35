package io.petrel.rpc.transport.netty;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.StringValue;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Requests whose metadata is many tiny entries hold far more on the server's heap, decoded, than their bytes on the
 * wire (a hostile-peer audit: 8 KiB of one-byte entries, about 900 of them, held about 100 KB each; 2,000 such
 * requests queued for a busy pool took a 256 MiB heap to 230 MiB while none was counted, being under 8 KiB). The
 * server counts what they hold decoded against its buffers, so a connection's waiting requests stop at its share.
 */
class MetadataHeapTest extends TransportFixture {
  private static final int SHARE = 512 * 1024;

  @Test
  void requestsWithManyTinyMetadataEntriesCountWhatTheyHoldDecoded() throws Exception {
    RpcServer server = startServer(b -> b.businessThreads(1).businessQueueSize(1000)
        .maxBufferedBytesPerConnection(SHARE));
    BufferBudget budget = ((NettyServerTransport) ((io.petrel.rpc.internal.ServerImpl) server).transport())
        .budget();
    RpcClient client = client(server.port());
    CompletableFuture<StringValue> holding =
        client.unaryCallAsync(TestService.BLOCK, StringValue.of("holds the one thread"), CallOptions.DEFAULT);
    assertThat(service.blockStarted.poll(10, TimeUnit.SECONDS)).isNotNull();

    List<Metadata.Entry> tiny = new ArrayList<>();
    for (int i = 0; i < 900; i++) {
      tiny.add(new Metadata.Entry("a", "x", null)); // 8 bytes each on the wire: 7,200 bytes, under 8 KiB
    }
    CallOptions heavy = CallOptions.DEFAULT.withMetadata(Metadata.fromEntries(tiny));
    List<CompletableFuture<StringValue>> queued = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      queued.add(client.unaryCallAsync(TestService.ECHO, StringValue.of("q" + i), heavy));
    }
    // About 100 KB each, decoded: the connection's 512 KiB share is reached after about five, and the server stops
    // reading it (the rest wait in the socket). Counted on the wire they were nothing, and all forty were held.
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (budget.used() < 4 * 100_000 && System.nanoTime() < until) {
      Thread.onSpinWait();
    }
    // (What one read brought is decoded even once reads pause: up to about nine of these requests in 64 KiB.)
    assertThat(budget.used()).as("bytes counted for the waiting requests").isGreaterThanOrEqualTo(4 * 100_000)
        .isLessThan(SHARE + 12 * 110_000);

    service.gate.countDown();
    assertThat(holding.get(10, TimeUnit.SECONDS).getValue()).isEqualTo("holds the one thread");
    for (int i = 0; i < queued.size(); i++) {
      assertThat(queued.get(i).get(10, TimeUnit.SECONDS).getValue()).isEqualTo("q" + i);
    }
    assertThat(budget.used()).as("all released once the calls ran").isZero();
  }
}
