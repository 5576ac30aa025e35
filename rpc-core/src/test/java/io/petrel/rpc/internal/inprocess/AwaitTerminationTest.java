package io.petrel.rpc.internal.inprocess;

import static org.assertj.core.api.Assertions.assertThat;

import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.marshal.Marshallers;
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
}
