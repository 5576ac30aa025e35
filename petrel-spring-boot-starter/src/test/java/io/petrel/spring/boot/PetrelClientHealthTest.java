package io.petrel.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.ConnectivityState;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.testing.DroppingHost;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The {@code petrel} indicator shows whether each client reaches its target (endpoints by state from
 * RpcClient.endpointStates, connections from the rpc.client.connections gauge); an unreachable one changes the
 * status only with
 * {@code petrel.health.clients-affect-status=true}.
 */
class PetrelClientHealthTest {
  private static RpcServer up;
  private static int deadPort;

  @BeforeAll
  static void servers() throws Exception {
    up = RpcServer.builder().bindAddress("127.0.0.1", 0).addService(new EchoService().definition()).build().start();
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      deadPort = s.getLocalPort(); // closed again: nothing listens there, a connect is refused
    }
  }

  @AfterAll
  static void stop() {
    up.shutdownNow();
  }

  @Configuration(proxyBeanMethods = false)
  static class Meters {
    @Bean
    MeterRegistry meterRegistry() {
      return new SimpleMeterRegistry();
    }
  }

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(PetrelAutoConfiguration.class))
      .withPropertyValues("petrel.server.enabled=false");

  private ApplicationContextRunner withClients() {
    return runner.withUserConfiguration(Meters.class).withPropertyValues(
        "petrel.clients.up.target=127.0.0.1:" + up.port(),
        "petrel.clients.down.target=127.0.0.1:" + deadPort,
        "petrel.clients.down.default-deadline=2s",
        "petrel.clients.down.reconnect-backoff-initial=30s", "petrel.clients.down.reconnect-backoff-max=30s");
  }

  /**
   * Calls each client once (the down one fails). The core reports the endpoint BACKING_OFF before it fails the
   * calls that waited for the failed connect, so the failure is the event to wait on.
   */
  private static Health called(AssertableApplicationContext context) throws Exception {
    assertThat(context).hasNotFailed();
    PetrelClients clients = context.getBean(PetrelClients.class);
    assertThat(clients.client("up").unaryCall(EchoService.ECHO, "x")).isEqualTo("x");
    assertThatThrownBy(() -> clients.client("down").unaryCall(EchoService.ECHO, "x"))
        .isInstanceOf(StatusException.class);
    Health h = context.getBean(PetrelHealthIndicator.class).health();
    assertThat(endpoints(h, "down")).containsEntry("backing_off", 1);
    return h;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> client(Health h, String name) {
    return ((Map<String, Map<String, Object>>) h.getDetails().get("clients")).get(name);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Integer> endpoints(Health h, String name) {
    return (Map<String, Integer>) client(h, name).get("endpoints");
  }

  @Test
  void eachClientsEndpointsAndConnectionsAreShownAndAnUnreachableOneLeavesTheStatusUpByDefault() {
    withClients().run(context -> {
      Health h = called(context);
      assertThat(h.getStatus().getCode()).isEqualTo("UP");
      assertThat(endpoints(h, "up")).containsExactly(Map.entry("ready", 1), Map.entry("connecting", 0),
          Map.entry("backing_off", 0), Map.entry("idle", 0));
      assertThat(client(h, "up")).containsEntry("connections", 1).containsEntry("reachable", true);
      assertThat(endpoints(h, "down")).containsEntry("ready", 0).containsEntry("backing_off", 1);
      assertThat(client(h, "down")).containsEntry("connections", 0).containsEntry("reachable", false);
      assertThat(h.getDetails()).doesNotContainKey("unreachableClients");
    });
  }

  @Test
  void withClientsAffectStatusAnUnreachableClientMakesItOutOfService() {
    withClients().withPropertyValues("petrel.health.clients-affect-status=true").run(context -> {
      Health h = called(context);
      assertThat(h.getStatus().getCode()).isEqualTo("OUT_OF_SERVICE");
      assertThat(h.getDetails()).containsEntry("unreachableClients", java.util.List.of("down"));
    });
  }

  @Test
  void withClientsAffectStatusAClientNotCalledYetOrReachingItsTargetIsUp() {
    withClients().withPropertyValues("petrel.health.clients-affect-status=true").run(context -> {
      // No call yet: every endpoint idle (clients connect on their first call); that is not an outage.
      PetrelHealthIndicator indicator = context.getBean(PetrelHealthIndicator.class);
      Health idle = indicator.health();
      assertThat(idle.getStatus().getCode()).isEqualTo("UP");
      assertThat(endpoints(idle, "down")).containsEntry("idle", 1).containsEntry("ready", 0);
      assertThat(context.getBean(PetrelClients.class).client("up").unaryCall(EchoService.ECHO, "x")).isEqualTo("x");
      assertThat(indicator.health().getStatus().getCode()).isEqualTo("UP");
    });
  }

  /** The endpoints come from the client itself (RpcClient.endpointStates): a MeterRegistry adds the connections. */
  @Test
  void withoutAMeterRegistryTheEndpointsAreStillShown() {
    runner.withPropertyValues("petrel.clients.up.target=127.0.0.1:" + up.port()).run(context -> {
      assertThat(context.getBean(PetrelClients.class).client("up").unaryCall(EchoService.ECHO, "x")).isEqualTo("x");
      Health h = context.getBean(PetrelHealthIndicator.class).health();
      assertThat(h.getStatus().getCode()).isEqualTo("UP");
      assertThat(endpoints(h, "up")).containsEntry("ready", 1).containsEntry("idle", 0);
      assertThat(client(h, "up")).containsEntry("reachable", true).doesNotContainKey("connections");
    });
  }

  /**
   * A client with nothing to call (its endpoint filter leaves none; its DNS name does not resolve) fails every call:
   * not reachable (a review found both shown reachable and UP).
   */
  @Test
  void aClientWithNoEndpointToCallIsNotReachable() {
    runner.withPropertyValues("petrel.health.clients-affect-status=true",
        "petrel.clients.none.target=127.0.0.1:" + up.port(), "petrel.clients.none.endpoint-filter.version=9.9.9",
        "petrel.clients.nodns.target=dns:///does-not-exist.invalid:7000")
        .run(context -> {
          assertThat(context).hasNotFailed();
          PetrelClients clients = context.getBean(PetrelClients.class);
          for (String name : List.of("none", "nodns")) {
            assertThatThrownBy(() -> clients.client(name).unaryCall(EchoService.ECHO, "x",
                CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(1)))).isInstanceOf(StatusException.class);
          }
          Health h = context.getBean(PetrelHealthIndicator.class).health();
          assertThat(client(h, "none")).containsEntry("reachable", false).containsEntry("state", "backing_off");
          assertThat(client(h, "nodns")).containsEntry("reachable", false).containsEntry("state", "backing_off");
          assertThat(h.getStatus().getCode()).isEqualTo("OUT_OF_SERVICE");
        });
  }

  /**
   * A client whose only host drops connects (a full accept queue here: the kernel drops SYNs) stays unreachable
   * while it tries again: CONNECTING after a failure is still failing (a review saw readiness flip to UP for each
   * connect attempt).
   */
  @Test
  void aClientTryingAgainAHostThatDropsConnectsStaysUnreachable() throws Exception {
    try (DroppingHost full = DroppingHost.open()) {
      runner.withPropertyValues("petrel.health.clients-affect-status=true",
          "petrel.clients.gone.target=" + full.authority(), "petrel.clients.gone.connect-timeout=300ms",
          "petrel.clients.gone.reconnect-backoff-initial=100ms", "petrel.clients.gone.reconnect-backoff-max=100ms")
          .run(context -> {
            RpcClient c = context.getBean(PetrelClients.class).client("gone");
            PetrelHealthIndicator indicator = context.getBean(PetrelHealthIndicator.class);
            assertThatThrownBy(() -> c.unaryCall(EchoService.ECHO, "x",
                CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(5)))).isInstanceOf(StatusException.class);
            // The next attempts follow by themselves while calls wait: catch it connecting again.
            CompletableFuture<String> waiting = c.unaryCallAsync(EchoService.ECHO, "x",
                CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(5)));
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (c.endpointStates().get(ConnectivityState.CONNECTING) != 1) {
              assertThat(System.nanoTime()).as("connecting again").isLessThan(until);
              Thread.onSpinWait();
            }
            Health h = indicator.health();
            waiting.cancel(true);
            assertThat(client(h, "gone")).containsEntry("reachable", false).containsEntry("state", "backing_off");
            assertThat(h.getStatus().getCode()).isEqualTo("OUT_OF_SERVICE");
          });
    }
  }
}
