package io.petrel.rpc.internal;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.ConnectivityState;
import io.petrel.rpc.LoadBalancer;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.Subchannel;
import io.petrel.rpc.marshal.Marshallers;
import io.petrel.rpc.spi.RecordingTransport;
import java.lang.reflect.Field;
import java.util.AbstractSet;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Calls waiting for a connect attempt move to another endpoint when it becomes READY
 * ({@link ConnectionSlot#moveWaitersElsewhere}), through the balancer, and may land in a slot of it that is still
 * connecting and move again when a third one becomes READY. Each such call counts once in
 * {@code rpc.client.retries{reason=not_sent}}, however many times it moved.
 */
class MovedCallsTest {
  private static final MethodDescriptor<byte[], byte[]> ECHO = MethodDescriptor.<byte[], byte[]>newBuilder()
      .serviceName("test.Svc").methodName("echo").requestMarshaller(Marshallers.bytes())
      .responseMarshaller(Marshallers.bytes()).build();

  /** Picks the endpoint the test says. */
  private static final class Pinned implements LoadBalancer, LoadBalancer.Factory {
    volatile @Nullable Subchannel to;

    @Override
    public String name() {
      return "pinned";
    }

    @Override
    public LoadBalancer newLoadBalancer() {
      return this;
    }

    @Override
    public @Nullable Subchannel pick(PickArgs call) {
      return to;
    }

    @Override
    public void update(List<? extends Subchannel> subchannels) {}
  }

  private final List<RpcClient> clients = new ArrayList<>();

  @AfterEach
  void close() {
    clients.forEach(RpcClient::shutdownNow);
  }

  /** The connection the core asked for, of {@code endpoint}'s {@code nth} slot (0 or 1). */
  private static RecordingTransport.Conn conn(RecordingTransport.Client c, String authority, int nth) {
    return c.connects.stream().filter(x -> x.endpoint.authority().equals(authority)).skip(nth).findFirst()
        .orElseThrow();
  }

  @Test
  void aCallMovedTwiceIsCountedOnceAsARetryNotSent() throws Exception {
    Pinned lb = new Pinned();
    RpcClient rpc = RpcClient.builder().target("static://a:1,b:2,c:3").transport("recording")
        .connectionsPerEndpoint(2).loadBalancer(lb).build();
    clients.add(rpc);
    RecordingTransport.Client c = RecordingTransport.of(rpc);
    c.manualConnects = true;
    List<InternalSubchannel> subs = java.util.Objects.requireNonNull(ClientChannel.endpointsOf(rpc)).subchannels();
    InternalSubchannel a = subs.get(0);
    InternalSubchannel b = subs.get(1);
    InternalSubchannel s3 = subs.get(2);
    for (InternalSubchannel s : subs) {
      s.connectNow(); // every slot connecting: no endpoint is available, so calls wait where they are picked
    }
    assertThat(c.connects).hasSize(6);

    lb.to = a;
    int calls = 9;
    List<CompletableFuture<byte[]>> futures = new ArrayList<>();
    for (int i = 0; i < calls; i++) {
      futures.add(c.unaryCallAsync(ECHO, new byte[] {1}, CallOptions.DEFAULT));
    }
    assertThat(c.started).isEmpty();
    // b READY (one of its two connections): the calls waiting on a move, to b, where some wait for its second
    // connection; then c READY: those move again.
    lb.to = b;
    conn(c, "b:2", 0).succeed();
    assertThat(b.state()).isEqualTo(ConnectivityState.READY);
    int sentToB = c.started.size();
    assertThat(sentToB).as("sent on b's connection; the others wait for its second").isBetween(1, calls - 1);
    lb.to = s3;
    conn(c, "c:3", 0).succeed();
    for (RecordingTransport.Conn x : c.connects) {
      if (!x.future.isDone()) {
        x.succeed();
      }
    }
    for (int i = 0; i < calls; i++) {
      RecordingTransport.Call attempt = c.started.poll(10, TimeUnit.SECONDS);
      assertThat(attempt).as("attempt " + i).isNotNull();
      var body = Unpooled.copiedBuffer("ok", UTF_8);
      try {
        attempt.onMessage(body, true);
      } finally {
        body.release();
      }
    }
    int movedTwice = 0;
    for (CompletableFuture<byte[]> f : futures) {
      assertThat(f.get(10, TimeUnit.SECONDS)).isEqualTo("ok".getBytes(UTF_8));
      movedTwice += ((ClientCall<?>) f).attempts() > 2 ? 1 : 0;
    }
    assertThat(movedTwice).as("calls sent more than once again").isEqualTo(calls - sentToB);
    // Before: once per move (here 9 + the calls that moved again, and those picked for c while it connected).
    assertThat(ClientChannel.runtimeOf(rpc).retries(ClientRuntime.Retry.NOT_SENT)).isEqualTo(calls);
  }

  /**
   * A call that starts to wait at one endpoint (its connect under way, no other endpoint available) just as another
   * becomes READY is not left waiting for the connect attempt: either the READY endpoint's becameReady finds the
   * first one in its set of endpoints with waiting calls, or the call sees the other one available and goes there.
   * Here the first endpoint's adding itself to that set is held until the other one is READY. Before, it added
   * itself only after queueing the call, outside its lock: becameReady ran in between, saw no endpoint with waiting
   * calls, and the call waited for the connect attempt (up to connectTimeout; here forever).
   */
  @Test
  void aCallThatStartsToWaitAsAnotherEndpointBecomesReadyMovesThere() throws Exception {
    Pinned lb = new Pinned();
    RpcClient rpc = RpcClient.builder().target("static://a:1,b:2").transport("recording").loadBalancer(lb)
        .build();
    clients.add(rpc);
    RecordingTransport.Client c = RecordingTransport.of(rpc);
    c.manualConnects = true;
    ClientEndpoints<InternalSubchannel> endpoints = java.util.Objects.requireNonNull(ClientChannel.endpointsOf(rpc));
    InternalSubchannel a = endpoints.subchannels().get(0);
    InternalSubchannel b = endpoints.subchannels().get(1);
    a.connectNow();
    b.connectNow(); // both connecting: neither is available, so a call picked for a waits there
    CountDownLatch adding = new CountDownLatch(1);
    CountDownLatch go = new CountDownLatch(1);
    Set<ClientSubchannel> set = ConcurrentHashMap.newKeySet();
    Set<ClientSubchannel> held = new AbstractSet<>() {
      @Override
      public boolean add(ClientSubchannel s) {
        if (s == a && adding.getCount() > 0) {
          adding.countDown();
          try {
            go.await(10, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
        return set.add(s);
      }

      @Override
      public boolean remove(Object o) {
        return set.remove(o);
      }

      @Override
      public boolean contains(Object o) {
        return set.contains(o);
      }

      @Override
      public Iterator<ClientSubchannel> iterator() {
        return set.iterator();
      }

      @Override
      public int size() {
        return set.size();
      }
    };
    Field f = ClientEndpoints.class.getDeclaredField("withWaiters");
    f.setAccessible(true);
    f.set(endpoints, held);

    lb.to = a;
    CompletableFuture<CompletableFuture<byte[]>> call = CompletableFuture.supplyAsync(
        () -> c.unaryCallAsync(ECHO, new byte[] {1}, CallOptions.DEFAULT));
    try {
      assertThat(adding.await(10, TimeUnit.SECONDS)).as("a adds itself to the set").isTrue();
      lb.to = b;
      conn(c, "b:2", 0).succeed();
      assertThat(b.state()).isEqualTo(ConnectivityState.READY);
    } finally {
      go.countDown();
    }
    RecordingTransport.Call attempt = c.started.poll(5, TimeUnit.SECONDS);
    assertThat(attempt).as("the call sent to b, not left waiting for a's connect").isNotNull();
    var body = Unpooled.copiedBuffer("ok", UTF_8);
    try {
      attempt.onMessage(body, true);
    } finally {
      body.release();
    }
    assertThat(call.get(10, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS)).isEqualTo("ok".getBytes(UTF_8));
  }
}
