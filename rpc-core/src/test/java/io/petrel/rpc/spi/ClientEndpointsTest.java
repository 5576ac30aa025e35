package io.petrel.rpc.spi;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.Endpoint;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.marshal.Marshallers;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The core's side of a client over several endpoints, whatever the transport: subchannels made and closed as
 * the resolver says, each call counted on the endpoint picked for it until it ends (what least-pending compares),
 * weights passed on, and a clear status while no endpoint is known.
 */
class ClientEndpointsTest {
  private static final MethodDescriptor<byte[], byte[]> ECHO = MethodDescriptor.<byte[], byte[]>newBuilder()
      .serviceName("test.Svc").methodName("echo").requestMarshaller(Marshallers.bytes())
      .responseMarshaller(Marshallers.bytes()).build();

  /** A resolver the test drives. */
  static final class Manual implements NameResolver {
    @Nullable Listener listener;
    boolean shutdown;

    @Override
    public void start(Listener l) {
      listener = l;
    }

    @Override
    public void shutdown() {
      shutdown = true;
    }
  }

  private final List<RpcClient> clients = new ArrayList<>();

  @AfterEach
  void close() {
    clients.forEach(RpcClient::shutdownNow);
  }

  private RecordingTransport.Client client(RpcClient built) {
    clients.add(built);
    return (RecordingTransport.Client) built;
  }

  private static Status statusOf(CompletableFuture<?> f) throws Exception {
    try {
      f.get(10, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      return ((StatusException) e.getCause()).status();
    }
    throw new AssertionError("the call succeeded");
  }

  private static void answer(ClientCall<?> call) {
    var b = Unpooled.copiedBuffer("ok", UTF_8);
    try {
      call.onMessage(b, true, null);
    } finally {
      b.release();
    }
  }

  @Test
  void callsAreCountedOnTheirEndpointUntilTheyEnd() throws Exception {
    RecordingTransport.Client c = client(RpcClient.builder().target("static://a:1,b:2").transport("recording")
        .loadBalancer("round_robin").build());
    List<RecordingTransport.Sub> subs = c.endpoints.subchannels();
    assertThat(subs).extracting(s -> s.endpoint().authority()).containsExactly("a:1", "b:2");
    List<CompletableFuture<byte[]>> calls = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      calls.add(c.unaryCallAsync(ECHO, new byte[] {1}, CallOptions.DEFAULT));
    }
    assertThat(subs).extracting(Subchannel::pendingCalls).containsExactly(2, 2);
    RecordingTransport.Call<?> first = c.started.take();
    RecordingTransport.Call<?> second = c.started.take();
    assertThat(first.subchannel).isNotSameAs(second.subchannel);
    answer(first);
    calls.get(1).cancel(false);
    assertThat(subs).extracting(Subchannel::pendingCalls).containsExactly(1, 1);
    c.started.take().fail(Status.UNAVAILABLE);
    c.started.take().deadlineExceeded("");
    assertThat(subs).extracting(Subchannel::pendingCalls).containsExactly(0, 0);
    assertThat(c.pendingCalls()).isZero();
  }

  @Test
  void oneEndpointIsPickedWithoutCounting() throws Exception {
    RecordingTransport.Client c = client(RpcClient.builder().target("a:1").transport("recording").build());
    c.unaryCallAsync(ECHO, new byte[] {1}, CallOptions.DEFAULT);
    RecordingTransport.Call<?> call = c.started.take();
    assertThat(call.subchannel.endpoint().authority()).isEqualTo("a:1");
    assertThat(call.subchannel.pendingCalls()).as("no balancer to count for").isZero();
    assertThat(c.pendingCalls()).isEqualTo(1);
  }

  @Test
  void resolverUpdatesKeepMakeAndCloseSubchannelsAndErrorsSayWhy() throws Exception {
    Manual resolver = new Manual();
    RecordingTransport.Client c = client(RpcClient.builder().nameResolver("manual://svc", resolver)
        .transport("recording").build());
    Status none = statusOf(c.unaryCallAsync(ECHO, new byte[] {1}, CallOptions.DEFAULT));
    assertThat(none.description()).isEqualTo("no endpoint for manual://svc yet; test.Svc/echo not sent");
    resolver.listener.onError(Status.UNAVAILABLE.withDescription("registry down"));
    assertThat(statusOf(c.unaryCallAsync(ECHO, new byte[] {1}, CallOptions.DEFAULT)).description())
        .isEqualTo("no endpoint for manual://svc yet: registry down; test.Svc/echo not sent");

    resolver.listener.onEndpoints(List.of(Endpoint.of("a", 1), Endpoint.of("b", 2)));
    List<RecordingTransport.Sub> first = c.endpoints.subchannels();
    resolver.listener.onEndpoints(List.of(new Endpoint("b", 2, 5), Endpoint.of("c", 3)));
    List<RecordingTransport.Sub> second = c.endpoints.subchannels();
    assertThat(second.get(0)).as("b kept").isSameAs(first.get(1));
    assertThat(second.get(0).endpoint().weight()).as("its new weight").isEqualTo(5);
    assertThat(first.get(0).closed).as("a closed").isDone();
    assertThat(second.get(0).closed).isNotDone();
    // An error keeps the endpoints it had.
    resolver.listener.onError(Status.UNAVAILABLE.withDescription("registry down"));
    assertThat(c.endpoints.subchannels()).isSameAs(second);

    c.shutdownNow();
    assertThat(c.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(resolver.shutdown).isTrue();
    assertThat(second).allSatisfy(s -> assertThat(s.closed).isDone());
    resolver.listener.onEndpoints(List.of(Endpoint.of("d", 4)));
    assertThat(c.endpoints.subchannels()).as("nothing made after shutdown").isSameAs(second);
  }
}
