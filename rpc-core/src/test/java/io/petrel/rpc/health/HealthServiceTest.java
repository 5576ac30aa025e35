package io.petrel.rpc.health;

import static org.assertj.core.api.Assertions.assertThat;

import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.health.HealthService.ServingStatus;
import io.petrel.rpc.marshal.Marshallers;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The health service follows its server: SERVING once it serves, NOT_SERVING from the start of its shutdown (and
 * through its drain delay, while it still answers), SERVICE_UNKNOWN for what it does not serve; the application
 * can take a service out; the probe's exit codes.
 */
class HealthServiceTest {
  private static final MethodDescriptor<byte[], byte[]> WORK = MethodDescriptor.<byte[], byte[]>newBuilder()
      .serviceName("shop.Orders").methodName("work").requestMarshaller(Marshallers.bytes())
      .responseMarshaller(Marshallers.bytes()).build();
  private static final Duration SECOND = Duration.ofSeconds(5);

  @Test
  void itFollowsTheServersLifecycleAndTheApplication() throws Exception {
    HealthService health = HealthService.create();
    assertThat(health.status("")).isEqualTo(ServingStatus.NOT_SERVING); // not serving yet
    RpcServer server = RpcServer.builder().inProcess("health-lifecycle")
        .addService(ServiceDefinition.builder("shop.Orders").unary(WORK, b -> b).build())
        .addService(health.definition())
        .addLifecycleListener(health)
        .drainDelay(Duration.ofSeconds(30))
        .build().start();
    try (RpcClient client = RpcClient.builder().inProcess("health-lifecycle").build()) {
      assertThat(HealthService.check(client, "", SECOND)).isEqualTo(ServingStatus.SERVING);
      assertThat(HealthService.check(client, "shop.Orders", SECOND)).isEqualTo(ServingStatus.SERVING);
      assertThat(HealthService.check(client, HealthService.SERVICE, SECOND)).isEqualTo(ServingStatus.SERVING);
      assertThat(HealthService.check(client, "shop.Nothing", SECOND)).isEqualTo(ServingStatus.SERVICE_UNKNOWN);

      health.setStatus("shop.Orders", ServingStatus.NOT_SERVING); // its database is down, say
      assertThat(HealthService.check(client, "shop.Orders", SECOND)).isEqualTo(ServingStatus.NOT_SERVING);
      assertThat(HealthService.check(client, "", SECOND)).isEqualTo(ServingStatus.SERVING);
      health.setStatus("shop.Orders", ServingStatus.SERVING);
      assertThat(HealthService.check(client, "shop.Orders", SECOND)).isEqualTo(ServingStatus.SERVING);

      // shutdown() with a drain delay (it returns at once): the server still answers, and says it is going.
      server.shutdown();
      assertThat(server.isShutdown()).isTrue();
      assertThat(HealthService.check(client, "", SECOND)).isEqualTo(ServingStatus.NOT_SERVING);
      assertThat(HealthService.check(client, "shop.Orders", SECOND)).isEqualTo(ServingStatus.NOT_SERVING);
    } finally {
      server.shutdownNow();
    }
  }

  @Test
  void theProbeExitsZeroOnlyWhenServing() throws Exception {
    HealthService health = HealthService.create();
    RpcServer server = RpcServer.builder().inProcess("health-probe")
        .addService(health.definition()).addLifecycleListener(health).build().start();
    try {
      assertThat(probe("inprocess:health-probe")).isEqualTo("0 SERVING");
      assertThat(probe("inprocess:health-probe", "shop.Nothing")).isEqualTo("1 SERVICE_UNKNOWN");
      health.setStatus("", ServingStatus.NOT_SERVING);
      assertThat(probe("inprocess:health-probe", "", "1000")).isEqualTo("1 NOT_SERVING");
      assertThat(probe("inprocess:health-probe", "", "soon")).startsWith("2 TIMEOUT_MS must be a number");
      assertThat(probe()).startsWith("2 no TARGET given").contains("usage: HealthService [--tls]");
    } finally {
      server.shutdownNow();
    }
    // Nothing there: it could not ask, and says why.
    assertThat(probe("inprocess:health-nobody", "", "500")).startsWith("3 UNAVAILABLE: ");
    // A server without the health service: could not ask either (not "not serving").
    RpcServer bare = RpcServer.builder().inProcess("health-bare")
        .addService(ServiceDefinition.builder("shop.Orders").unary(WORK, b -> b).build()).build().start();
    try {
      assertThat(probe("inprocess:health-bare")).startsWith("3 UNIMPLEMENTED: ");
    } finally {
      bare.shutdownNow();
    }
    assertThat(probe("inprocess:health-nobody", "", "9223372036854775807")).startsWith("2 TIMEOUT_MS must be");
  }

  /** A HealthService follows the first server it hears: a second one's start and shutdown change nothing. */
  @Test
  void oneServiceFollowsOneServerAndRefusesToSayUnknown() throws Exception {
    HealthService health = HealthService.create();
    RpcServer a = RpcServer.builder().inProcess("health-a")
        .addService(ServiceDefinition.builder("shop.Orders").unary(WORK, b -> b).build())
        .addService(health.definition()).addLifecycleListener(health).build().start();
    RpcServer b = RpcServer.builder().inProcess("health-b").addLifecycleListener(health).build().start();
    try {
      assertThat(health.status("shop.Orders")).isEqualTo(ServingStatus.SERVING); // b did not replace a's services
      b.shutdownNow();
      assertThat(health.status("")).isEqualTo(ServingStatus.SERVING); // b's shutdown is not a's
      org.assertj.core.api.Assertions.assertThatThrownBy(
          () -> health.setStatus("shop.Orders", ServingStatus.SERVICE_UNKNOWN))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("set NOT_SERVING");
      a.shutdownNow();
      assertThat(health.status("")).isEqualTo(ServingStatus.NOT_SERVING);
    } finally {
      a.shutdownNow();
      b.shutdownNow();
    }
  }

  /**
   * Once the server it followed has terminated, a HealthService follows the next one that starts with it (a
   * restart in the same JVM: a Spring context stopped and started); what the application set stays set. Not while
   * the old one drains, whose checks would answer for the new one.
   */
  @Test
  void afterItsServerShutsDownItFollowsTheNextOne() throws Exception {
    HealthService health = HealthService.create();
    RpcServer first = RpcServer.builder().inProcess("health-first").addService(health.definition())
        .addLifecycleListener(health).build().start();
    health.setStatus("shop.Orders", ServingStatus.NOT_SERVING);
    first.shutdown();
    assertThat(health.status("")).isEqualTo(ServingStatus.NOT_SERVING);
    assertThat(first.awaitTermination(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
    RpcServer second = RpcServer.builder().inProcess("health-second")
        .addService(ServiceDefinition.builder("shop.Orders").unary(WORK, b -> b).build())
        .addService(health.definition()).addLifecycleListener(health).build().start();
    try {
      assertThat(health.status("")).isEqualTo(ServingStatus.SERVING);
      assertThat(health.status("shop.Orders")).as("as the application set it").isEqualTo(
          ServingStatus.NOT_SERVING);
      second.shutdown();
      assertThat(health.status("")).isEqualTo(ServingStatus.NOT_SERVING);
    } finally {
      first.shutdownNow();
      second.shutdownNow();
    }
  }

  /**
   * A server started while the one followed still drains (a restart that did not wait): the old one's checks say
   * NOT_SERVING while it drains, and the new one is followed once the old one has ended.
   */
  @Test
  void aServerStartedWhileTheOldOneDrainsIsFollowedWhenTheOldOneEnds() throws Exception {
    HealthService health = HealthService.create();
    RpcServer first = RpcServer.builder().inProcess("health-draining").drainDelay(Duration.ofMillis(300))
        .addService(health.definition()).addLifecycleListener(health).build().start();
    first.shutdown(); // draining for 300 ms
    RpcServer second = RpcServer.builder().inProcess("health-after-drain").addService(health.definition())
        .addLifecycleListener(health).build().start();
    try {
      assertThat(health.status("")).as("the old one drains").isEqualTo(ServingStatus.NOT_SERVING);
      assertThat(first.awaitTermination(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
      assertThat(health.status("")).as("the old one has ended").isEqualTo(ServingStatus.SERVING);
    } finally {
      first.shutdownNow();
      second.shutdownNow();
    }
  }

  private static String probe(String... args) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    int code = HealthService.probe(args, new PrintStream(bytes, true, StandardCharsets.UTF_8));
    return code + " " + bytes.toString(StandardCharsets.UTF_8).trim();
  }
}
