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
import java.util.concurrent.CompletableFuture;
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
   * A call whose connection has closed (its client went away while the handler ran) no longer counts
   * as in flight, but its handler may still run: a graceful stop waits for it within the grace period, so that no
   * handler runs on after {@code awaitTermination} returns (docs/threading.md, Shutdown). On the old code the server
   * terminated at once and the handler ran on.
   */
  @Test
  void aGracefulStopWaitsForAHandlerWhoseConnectionClosed() throws Exception {
    Handler h = new Handler();
    RpcServer server = RpcServer.builder().inProcess("await-gone-waits").shutdownGracePeriod(Duration.ofSeconds(30))
        .addService(h.service()).build().start();
    RpcClient client = RpcClient.builder().inProcess("await-gone-waits").build();
    try {
      callGivesUpAndClientCloses(h, server, client);
      server.shutdown();
      assertThat(server.awaitTermination(300, TimeUnit.MILLISECONDS)).as("the handler still runs").isFalse();
      h.release.countDown();
      assertThat(server.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
      assertThat(h.ended.getCount()).as("the handler returned before the server terminated").isZero();
      assertThat(h.interrupted.get()).as("released, not interrupted").isFalse();
    } finally {
      h.release.countDown();
      client.shutdownNow();
      server.shutdownNow();
    }
  }

  /** The same handler, still running when the grace period ends: interrupted, and the server terminates. */
  @Test
  void aHandlerStillRunningForAGoneCallerAtTheEndOfTheGracePeriodIsInterrupted() throws Exception {
    Handler h = new Handler();
    RpcServer server = RpcServer.builder().inProcess("await-gone-interrupted")
        .shutdownGracePeriod(Duration.ofMillis(300)).addService(h.service()).build().start();
    RpcClient client = RpcClient.builder().inProcess("await-gone-interrupted").build();
    try {
      callGivesUpAndClientCloses(h, server, client);
      server.shutdown();
      assertThat(server.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
      assertThat(h.ended.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(h.interrupted.get()).as("interrupted at the end of the grace period").isTrue();
    } finally {
      h.release.countDown();
      client.shutdownNow();
      server.shutdownNow();
    }
  }

  /** shutdownNow while a graceful stop waits for such a handler: the handler is interrupted and the server ends. */
  @Test
  void shutdownNowDuringTheWaitForAGoneCallersHandlerInterruptsIt() throws Exception {
    Handler h = new Handler();
    RpcServer server = RpcServer.builder().inProcess("await-gone-now").shutdownGracePeriod(Duration.ofSeconds(60))
        .addService(h.service()).build().start();
    RpcClient client = RpcClient.builder().inProcess("await-gone-now").build();
    try {
      callGivesUpAndClientCloses(h, server, client);
      server.shutdown();
      assertThat(server.awaitTermination(300, TimeUnit.MILLISECONDS)).as("waits for the handler").isFalse();
      server.shutdownNow();
      assertThat(server.awaitTermination(10, TimeUnit.SECONDS)).as("ends at once, not after 60 s").isTrue();
      assertThat(h.ended.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(h.interrupted.get()).as("interrupted by shutdownNow").isTrue();
    } finally {
      h.release.countDown();
      client.shutdownNow();
      server.shutdownNow();
    }
  }

  /**
   * An ordinary drain: the last call in flight ends during the graceful stop, on its handler's own thread. That
   * thread is not counted as a handler of a gone caller: no "waiting up to" line (it said "for 1 handler(s) still
   * running for callers that are gone" of the very thread ending the drain).
   */
  @Test
  void anOrdinaryDrainDoesNotSayItWaitsForHandlersOfGoneCallers() throws Exception {
    Handler h = new Handler();
    ch.qos.logback.classic.Logger logger =
        (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(RpcServer.class);
    ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> seen =
        new ch.qos.logback.core.read.ListAppender<>();
    seen.start();
    logger.addAppender(seen);
    RpcServer server = RpcServer.builder().inProcess("await-ordinary").addService(h.service()).build().start();
    RpcClient client = RpcClient.builder().inProcess("await-ordinary").build();
    try {
      CompletableFuture<byte[]> call = client.unaryCallAsync(ECHO, new byte[] {7},
          CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(30)));
      assertThat(h.started.await(10, TimeUnit.SECONDS)).isTrue();
      server.shutdown(); // the call is in flight, its caller waits for it
      h.release.countDown();
      assertThat(call.get(10, TimeUnit.SECONDS)).containsExactly(7);
      assertThat(server.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
      assertThat(seen.list).extracting(e -> e.getFormattedMessage())
          .anyMatch(m -> m.contains("stopped")).noneMatch(m -> m.contains("waiting up to"));
    } finally {
      logger.detachAppender(seen);
      client.shutdownNow();
      server.shutdownNow();
    }
  }

  /** A call whose handler runs, then its client goes away at once: the call is cancelled and no longer counts. */
  private static void callGivesUpAndClientCloses(Handler h, RpcServer server, RpcClient client) throws Exception {
    CompletableFuture<byte[]> call = client.unaryCallAsync(ECHO, new byte[] {1},
        CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(30)));
    assertThat(h.started.await(10, TimeUnit.SECONDS)).as("the handler runs").isTrue();
    assertThat(server.inFlightCalls()).as("its connection is open: the call counts").isEqualTo(1);
    client.shutdownNow(); // the client goes away (a program's try-with-resources closes it before its server)
    assertThat(h.cancelled.await(10, TimeUnit.SECONDS)).as("the server saw the call cancelled").isTrue();
    assertThatThrownBy(call::join).hasCauseInstanceOf(StatusException.class);
    assertThat(server.inFlightCalls()).as("its connection closed: the call no longer counts").isZero();
  }

  /** A handler that blocks until released (or interrupted), after its call was cancelled. */
  private static final class Handler {
    final CountDownLatch started = new CountDownLatch(1);
    final CountDownLatch cancelled = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);
    final CountDownLatch ended = new CountDownLatch(1);
    final AtomicReference<Boolean> interrupted = new AtomicReference<>();

    ServiceDefinition service() {
      return ServiceDefinition.builder("await.Svc").unary(ECHO, b -> {
        ServerContext.current().onCancel(cancelled::countDown);
        started.countDown();
        try {
          interrupted.set(!release.await(20, TimeUnit.SECONDS));
        } catch (InterruptedException e) {
          interrupted.set(true);
        }
        ended.countDown();
        return b;
      }).build();
    }
  }
}
