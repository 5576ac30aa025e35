package io.petrel.rpc.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.MethodType;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.marshal.FieldCodecs;
import io.petrel.rpc.marshal.ValueMarshaller;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The built-in pool's meters carry the names of Micrometer's executor binder, under rpc.server.executor.*. */
class BusinessPoolMetricsTest {
  private static final MethodDescriptor<String, String> ECHO = MethodDescriptor.<String, String>newBuilder()
      .serviceName("test.Pool").methodName("echo").id(MethodDescriptor.methodId("test.Pool", "echo"))
      .type(MethodType.UNARY).requestMarshaller(ValueMarshaller.of(FieldCodecs.STRING))
      .responseMarshaller(ValueMarshaller.of(FieldCodecs.STRING)).build();

  @Test
  void thePoolIsMeasuredByMicrometersExecutorBinderUnderTheServersName() throws Exception {
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    RpcServer server = RpcServer.builder().inProcess("pool-metrics").name("pm").meterRegistry(meters)
        .businessThreads(3).businessQueueSize(5)
        .addService(ServiceDefinition.builder("test.Pool").unary(ECHO, r -> r).build()).build().start();
    try (RpcClient client = RpcClient.builder().inProcess("pool-metrics").build()) {
      assertThat(client.unaryCall(ECHO, "a")).isEqualTo("a");
      assertThat(client.unaryCall(ECHO, "b")).isEqualTo("b");
      assertThat(meters.getMeters().stream().map(m -> m.getId().getName())
          .filter(n -> n.startsWith("rpc.server.executor")).collect(Collectors.toSet()))
          .contains("rpc.server.executor.active", "rpc.server.executor.queued", "rpc.server.executor.completed",
              "rpc.server.executor.pool.size", "rpc.server.executor.pool.core", "rpc.server.executor.pool.max",
              "rpc.server.executor.queue.remaining");
      Meter max = meters.get("rpc.server.executor.pool.max").tags("server", "pm", "name", "pm-business").meter();
      assertThat(max.measure().iterator().next().getValue()).isEqualTo(3);
      // A call counts as completed when its thread is done with it, which may be just after its caller has the
      // reply.
      io.micrometer.core.instrument.FunctionCounter completed =
          meters.get("rpc.server.executor.completed").tags("server", "pm").functionCounter();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (completed.count() < 2 && System.nanoTime() < deadline) {
        Thread.yield();
      }
      assertThat(completed.count()).isEqualTo(2);
      assertThat(meters.get("rpc.server.executor.queue.remaining").tags("server", "pm").gauge().value())
          .isEqualTo(5);
    } finally {
      server.shutdown();
      assertThat(server.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
    // Once the server has terminated, the meters that read its pool leave the registry (one started again under
    // its name binds its own); the refusals counter stays.
    assertThat(meters.getMeters().stream().map(m -> m.getId().getName())
        .filter(n -> n.startsWith("rpc.server.executor")).collect(Collectors.toSet()))
        .containsExactly("rpc.server.executor.rejected");
  }
}
