package io.petrel.rpc.transport.netty;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.StringValue;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.ServiceDefinition;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A call a handler makes for the call it serves is cancelled with it (the conformance suite covers what the caller
 * and the next server see); here, where it ends: the cancellation is learnt on the middle server's event loop, and
 * the nested call's callbacks must not run there (a slow one would hold every connection of that loop).
 */
class NestedCallCancellationTest extends TransportFixture {
  private static final MethodDescriptor<StringValue, StringValue> HOLD = TestService.textMethod("test.Back", "hold");
  private static final MethodDescriptor<StringValue, StringValue> RELAY = TestService.textMethod("test.Front", "relay");

  /** Waits on the handler's thread, up to 30 s, until its caller gives up. */
  private static void awaitCallerGivingUp() throws InterruptedException {
    CountDownLatch gaveUp = new CountDownLatch(1);
    ServerContext.current().onCancel(gaveUp::countDown);
    assertThat(gaveUp.await(30, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void aNestedAsyncCallCancelledWithItsServedCallEndsOnTheClientsThreadsNotOnTheServersEventLoop()
      throws Exception {
    RpcServer back = startServer(b -> b.addService(ServiceDefinition.builder("test.Back")
        .unary(HOLD, req -> {
          awaitCallerGivingUp();
          return req;
        }).build()));
    RpcClient toBack = client(back.port());
    BlockingQueue<String> endedOn = new LinkedBlockingQueue<>();
    CountDownLatch called = new CountDownLatch(1);
    ServiceDefinition front = ServiceDefinition.builder("test.Front")
        .unary(RELAY, req -> {
          toBack.unaryCallAsync(HOLD, req, CallOptions.DEFAULT.withTimeout(Duration.ofMinutes(1)))
              .whenComplete((v, e) -> endedOn.add(Thread.currentThread().getName() + " | " + e));
          called.countDown();
          awaitCallerGivingUp();
          return req;
        }).build();
    RpcServer middle = startServer(b -> b.name("middle").addService(front));
    RpcClient client = client(middle.port());
    CompletableFuture<StringValue> outer = client.unaryCallAsync(RELAY, StringValue.of("x"),
        CallOptions.DEFAULT.withTimeout(Duration.ofMinutes(1)));
    assertThat(called.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(outer.cancel(true)).isTrue();
    String ended = endedOn.poll(10, TimeUnit.SECONDS);
    assertThat(ended).as("the nested call ended, long before its 1 min deadline").isNotNull()
        .contains("CANCELLED: test.Back/hold was cancelled because the call it was made for, test.Front/relay,"
            + " was cancelled: the caller cancelled the call")
        .doesNotStartWith("middle-");
  }
}
