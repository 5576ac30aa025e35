package io.petrel.rpc.transport.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.MethodType;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.marshal.FieldCodecs;
import io.petrel.rpc.marshal.ValueMarshaller;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@code RpcServer.builder().virtualThreads(maxConcurrentCalls)} over a real socket. The build runs on Java 17,
 * where the option must refuse with a clear error; the tests that need virtual threads need a Java 21+ JVM and are
 * <b>skipped</b> (reported as skipped, not passed) on an older one, unless {@code -Dpetrel.test.requireJava21=true},
 * which makes them fail there instead. Run them on a newer JDK with surefire's {@code jvm} parameter:
 * {@code ./mvnw -B test -pl rpc-transport-netty -am -Dtest=VirtualThreadsTest -Dsurefire.failIfNoSpecifiedTests=false
 * -Djvm=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java -Dpetrel.test.requireJava21=true}.
 */
class VirtualThreadsTest {
  private static final MethodDescriptor<String, String> HOLD = MethodDescriptor.<String, String>newBuilder()
      .serviceName("test.Virtual").methodName("hold").id(MethodDescriptor.methodId("test.Virtual", "hold"))
      .type(MethodType.UNARY).requestMarshaller(ValueMarshaller.of(FieldCodecs.STRING))
      .responseMarshaller(ValueMarshaller.of(FieldCodecs.STRING)).build();

  private static final int JAVA = Runtime.version().feature();

  private static void requireJava21() {
    String why = "virtual threads need Java 21+, this JVM is Java " + JAVA
        + " (run with -Djvm=<a Java 21+ java executable>)";
    if (JAVA < 21 && Boolean.getBoolean("petrel.test.requireJava21")) {
      throw new AssertionError(why + ", and -Dpetrel.test.requireJava21=true asks for them to run");
    }
    assumeTrue(JAVA >= 21, why);
  }

  private static boolean isVirtual(Thread t) throws ReflectiveOperationException {
    return (Boolean) Thread.class.getMethod("isVirtual").invoke(t);
  }

  @Test
  void beforeJava21TheOptionFailsSayingVirtualThreadsNeedJava21() {
    assumeTrue(JAVA < 21, "this JVM (Java " + JAVA + ") has virtual threads; the other tests cover it");
    assertThatThrownBy(() -> RpcServer.builder().virtualThreads(100))
        .isInstanceOf(UnsupportedOperationException.class)
        .hasMessageStartingWith("virtual threads need Java 21 or later; this JVM is Java " + Runtime.version())
        .hasMessageContaining("run on Java 21+, or keep the built-in pool (businessThreads / businessQueueSize)");
  }

  @Test
  void theLimitMustBePositive() {
    assertThatThrownBy(() -> RpcServer.builder().virtualThreads(0)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("virtualThreads maxConcurrentCalls must be > 0: 0");
  }

  @Test
  void handlersRunOnVirtualThreadsAndACallOverTheLimitIsRefusedAtOnce() throws Exception {
    requireJava21();
    CountDownLatch entered = new CountDownLatch(2);
    CountDownLatch release = new CountDownLatch(1);
    List<Thread> handlerThreads = new CopyOnWriteArrayList<>();
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    RpcServer server = RpcServer.builder().bindAddress("127.0.0.1", 0).name("vt").meterRegistry(meters)
        .virtualThreads(2)
        .addService(ServiceDefinition.builder("test.Virtual").unary(HOLD, request -> {
          handlerThreads.add(Thread.currentThread());
          entered.countDown();
          assertThat(release.await(10, TimeUnit.SECONDS)).isTrue();
          return "done " + request;
        }).build())
        .build().start();
    try (RpcClient client = RpcClient.builder().address("127.0.0.1", server.port()).build()) {
      CompletableFuture<String> first = client.unaryCallAsync(HOLD, "1", CallOptions.DEFAULT);
      CompletableFuture<String> second = client.unaryCallAsync(HOLD, "2", CallOptions.DEFAULT);
      assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
      // Two calls hold both places: the third is refused at once, not queued and not given a third thread.
      assertThatThrownBy(() -> client.unaryCall(HOLD, "3")).isInstanceOfSatisfying(StatusException.class, e -> {
        assertThat(e.code()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(e.getMessage()).contains("server 'vt' already runs 2 calls on virtual threads, its limit")
            .contains("raise RpcServer.builder().virtualThreads(maxConcurrentCalls)");
      });
      assertThat(meters.get("rpc.server.executor.active").tags("server", "vt").gauge().value()).isEqualTo(2);
      release.countDown();
      assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo("done 1");
      assertThat(second.get(10, TimeUnit.SECONDS)).isEqualTo("done 2");
      // The places are free again.
      assertThat(client.unaryCall(HOLD, "4")).isEqualTo("done 4");
    } finally {
      server.shutdownNow();
      assertThat(server.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
    assertThat(handlerThreads).hasSize(3);
    for (Thread t : handlerThreads) {
      assertThat(isVirtual(t)).as("%s is virtual", t).isTrue();
      assertThat(t.getName()).startsWith("vt-virtual-");
    }
    assertThat(meters.get("rpc.server.calls").tags("method", "hold", "status", "RESOURCE_EXHAUSTED").timer().count())
        .isEqualTo(1);
  }

  @Test
  void aCallerThatCallsAgainAsSoonAsItHasItsAnswerFindsThePlaceFree() throws Exception {
    requireJava21();
    // One place and one caller that calls again the moment it has each answer: the call's place is freed before
    // its answer is written, so no call finds it still taken by the one before (RESOURCE_EXHAUSTED).
    RpcServer server = RpcServer.builder().bindAddress("127.0.0.1", 0).name("vt-one").virtualThreads(1)
        .addService(ServiceDefinition.builder("test.Virtual").unary(HOLD, request -> "done " + request).build())
        .build().start();
    try (RpcClient client = RpcClient.builder().address("127.0.0.1", server.port()).build()) {
      for (int i = 0; i < 2000; i++) {
        assertThat(client.unaryCall(HOLD, Integer.toString(i))).isEqualTo("done " + i);
      }
    } finally {
      server.shutdown();
      assertThat(server.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
  }

  /**
   * A graceful stop waits for a virtual thread's handler whose caller is gone (its connection closed, so the call no
   * longer counts as in flight), and interrupts it when the grace period ends (on the old code the server terminated
   * at once, and the handler slept on).
   */
  @Test
  void aGracefulStopWaitsForAHandlerWhoseCallerIsGoneThenInterruptsIt() throws Exception {
    requireJava21();
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch ended = new CountDownLatch(1);
    CompletableFuture<Boolean> interrupted = new CompletableFuture<>();
    RpcServer server = RpcServer.builder().bindAddress("127.0.0.1", 0).name("vt-gone").virtualThreads(4)
        .shutdownGracePeriod(java.time.Duration.ofSeconds(2))
        .addService(ServiceDefinition.builder("test.Virtual").unary(HOLD, request -> {
          entered.countDown();
          try {
            // long work that ignores its call's cancellation: waits for an event that never comes, until interrupted
            boolean ignored = new CountDownLatch(1).await(30, TimeUnit.SECONDS);
            interrupted.complete(false);
          } catch (InterruptedException e) {
            interrupted.complete(true);
          }
          ended.countDown();
          return "late";
        }).build())
        .build().start();
    RpcClient client = RpcClient.builder().address("127.0.0.1", server.port()).build();
    try {
      CompletableFuture<String> call = client.unaryCallAsync(HOLD, "1", CallOptions.DEFAULT);
      assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
      client.shutdownNow(); // the caller goes away
      assertThatThrownBy(() -> call.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(StatusException.class);
      server.shutdown();
      assertThat(server.awaitTermination(300, TimeUnit.MILLISECONDS)).as("waits for the handler").isFalse();
      assertThat(server.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
      assertThat(interrupted.get(10, TimeUnit.SECONDS)).as("interrupted when the grace period ended").isTrue();
      assertThat(ended.await(10, TimeUnit.SECONDS)).isTrue();
    } finally {
      client.shutdownNow();
      server.shutdownNow();
    }
  }

  @Test
  void aForcedShutdownInterruptsHandlersStillRunning() throws Exception {
    requireJava21();
    CountDownLatch entered = new CountDownLatch(1);
    CompletableFuture<Boolean> interrupted = new CompletableFuture<>();
    RpcServer server = RpcServer.builder().bindAddress("127.0.0.1", 0).name("vt-stop").virtualThreads(4)
        .addService(ServiceDefinition.builder("test.Virtual").unary(HOLD, request -> {
          entered.countDown();
          try {
            new CountDownLatch(1).await(30, TimeUnit.SECONDS);
            interrupted.complete(false);
          } catch (InterruptedException e) {
            interrupted.complete(true);
          }
          return "late";
        }).build())
        .build().start();
    try (RpcClient client = RpcClient.builder().address("127.0.0.1", server.port()).build()) {
      CompletableFuture<String> call = client.unaryCallAsync(HOLD, "x", CallOptions.DEFAULT);
      assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
      server.shutdownNow();
      assertThat(interrupted.get(10, TimeUnit.SECONDS)).as("the handler was interrupted").isTrue();
      assertThatThrownBy(() -> call.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(StatusException.class);
    } finally {
      server.shutdownNow();
      assertThat(server.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
  }
}
