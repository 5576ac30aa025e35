package io.petrel.rpc.internal.inprocess;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.petrel.rpc.CallOptions;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.marshal.Marshallers;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** {@link RpcServer#awaitTermination()}: what a serving program's main waits on. */
class AwaitTerminationTest {
  private static final MethodDescriptor<byte[], byte[]> ECHO = MethodDescriptor.<byte[], byte[]>newBuilder()
      .serviceName("await.Svc").methodName("echo")
      .requestMarshaller(Marshallers.bytes()).responseMarshaller(Marshallers.bytes()).build();

  @Test
  void waitsWhileTheServerServesAndReturnsOnceItHasTerminated() throws Exception {
    RpcServer server = RpcServer.builder().inProcess("await-termination")
        .addService(ServiceDefinition.builder("await.Svc").unary(ECHO, b -> b).build()).build().start();
    CountDownLatch waiting = new CountDownLatch(1);
    AtomicReference<Throwable> failed = new AtomicReference<>();
    Thread main = new Thread(() -> {
      waiting.countDown();
      try {
        server.awaitTermination();
      } catch (Throwable t) {
        failed.set(t);
      }
    }, "serving-main");
    main.start();
    assertThat(waiting.await(10, TimeUnit.SECONDS)).isTrue();
    // Parked in the wait (not returned): the server still serves.
    for (Thread.State s = main.getState(); s != Thread.State.WAITING && s != Thread.State.TIMED_WAITING;
        s = main.getState()) {
      assertThat(main.isAlive()).as("awaitTermination returned while the server serves").isTrue();
      Thread.onSpinWait();
    }
    assertThat(server.isTerminated()).isFalse();
    server.shutdown();
    main.join(TimeUnit.SECONDS.toMillis(20));
    assertThat(main.isAlive()).as("awaitTermination returns once the server has terminated").isFalse();
    assertThat(failed.get()).isNull();
    assertThat(server.isTerminated()).isTrue();
  }

  @Test
  void anInterruptedWaitThrowsAndLeavesTheServerRunning() throws Exception {
    RpcServer server = RpcServer.builder().inProcess("await-interrupted")
        .addService(ServiceDefinition.builder("await.Svc").unary(ECHO, b -> b).build()).build().start();
    try {
      Thread.currentThread().interrupt();
      Throwable t = null;
      try {
        server.awaitTermination();
      } catch (InterruptedException e) {
        t = e;
      }
      assertThat(t).isInstanceOf(InterruptedException.class);
      assertThat(server.isShutdown()).isFalse();
    } finally {
      Thread.interrupted();
      server.close();
    }
  }

  /**
   * What docs/threading.md (Shutdown) says: a call whose connection has closed (its client closed first, as in
   * getting-started's program) no longer counts as in flight, so a graceful stop does not wait for its handler, which
   * runs on, not interrupted, after the server has terminated. (While its connection is open, the call counts.)
   */
  @Test
  void aHandlerWhoseConnectionClosedRunsOnAfterTheServerHasTerminated() throws Exception {
    CountDownLatch cancelled = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch handlerEnded = new CountDownLatch(1);
    AtomicReference<Boolean> interrupted = new AtomicReference<>();
    RpcServer server = RpcServer.builder().inProcess("await-gave-up")
        .addService(ServiceDefinition.builder("await.Svc").unary(ECHO, b -> {
          ServerContext.current().onCancel(cancelled::countDown);
          try {
            interrupted.set(!release.await(20, TimeUnit.SECONDS));
          } catch (InterruptedException e) {
            interrupted.set(true);
          }
          handlerEnded.countDown();
          return b;
        }).build()).build().start();
    RpcClient client = RpcClient.builder().inProcess("await-gave-up").build();
    try {
      assertThatThrownBy(() -> client.unaryCall(ECHO, new byte[] {1},
          CallOptions.DEFAULT.withTimeout(Duration.ofMillis(50))))
          .isInstanceOfSatisfying(StatusException.class,
              e -> assertThat(e.code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));
      assertThat(cancelled.await(10, TimeUnit.SECONDS)).as("the server saw the call cancelled").isTrue();
      assertThat(server.inFlightCalls()).as("its connection is open: the call counts").isEqualTo(1);
      client.close(); // as a program's try-with-resources does before it closes the server
      assertThat(server.inFlightCalls()).as("its connection closed: the call no longer counts").isZero();
      server.shutdown();
      assertThat(server.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
      assertThat(handlerEnded.getCount()).as("the handler still runs after the server terminated").isEqualTo(1);
    } finally {
      release.countDown();
      client.shutdownNow();
      server.shutdownNow();
    }
    assertThat(handlerEnded.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(interrupted.get()).as("the handler was not interrupted").isFalse();
  }
}
