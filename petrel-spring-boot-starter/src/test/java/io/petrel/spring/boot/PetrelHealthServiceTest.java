package io.petrel.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.health.HealthService;
import io.petrel.rpc.health.HealthService.ServingStatus;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Petrel's health service ({@code petrel.health.Health}) served by the starter's server by default, so that the exec
 * probe of docs/observability.md ({@code java -cp app.jar io.petrel.rpc.health.HealthService 127.0.0.1:PORT})
 * answers SERVING; the HealthService is a bean the application sets statuses on.
 */
class PetrelHealthServiceTest {
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(PetrelAutoConfiguration.class))
      .withPropertyValues("petrel.server.port=0", "petrel.server.address=127.0.0.1");

  @Configuration(proxyBeanMethods = false)
  static class Echo {
    @Bean
    ServiceDefinition echoDefinition() {
      return new EchoService().definition();
    }
  }

  /** The application's own HealthService bean, which the starter serves in place of one of its own. */
  @Configuration(proxyBeanMethods = false)
  static class OwnHealth {
    static final HealthService OWN = HealthService.create();

    @Bean
    HealthService myHealth() {
      return OWN;
    }
  }

  /** A trial's workaround before the starter served health: a definition bean and a customizer adding the listener. */
  @Configuration(proxyBeanMethods = false)
  static class HealthByHand {
    private final HealthService health = HealthService.create();

    @Bean
    ServiceDefinition petrelHealthDefinition() {
      return health.definition();
    }

    @Bean
    PetrelServerCustomizer petrelHealthListener() {
      return server -> server.addLifecycleListener(health);
    }
  }

  /** The exec probe, run as its main would be: its exit code and the line it prints. */
  private record Probe(int code, String line) {
  }

  private static Probe probe(int port, String... more) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    String[] args = new String[more.length + 1];
    args[0] = "127.0.0.1:" + port;
    System.arraycopy(more, 0, args, 1, more.length);
    int code = HealthService.probe(args, new PrintStream(out, true, StandardCharsets.UTF_8));
    return new Probe(code, out.toString(StandardCharsets.UTF_8).strip());
  }

  @Test
  void theExecProbeAnswersServingAndTheApplicationSetsStatusesOnTheBean() {
    runner.withUserConfiguration(Echo.class).run(context -> {
      assertThat(context).hasNotFailed().hasSingleBean(HealthService.class);
      int port = context.getBean(PetrelServerLifecycle.class).port();
      assertThat(probe(port)).isEqualTo(new Probe(0, "SERVING"));
      assertThat(probe(port, EchoService.NAME)).isEqualTo(new Probe(0, "SERVING"));
      assertThat(probe(port, "no.Such")).isEqualTo(new Probe(1, "SERVICE_UNKNOWN"));
      HealthService health = context.getBean(HealthService.class);
      health.setStatus("", ServingStatus.NOT_SERVING); // e.g. while a database it needs is down
      assertThat(probe(port)).isEqualTo(new Probe(1, "NOT_SERVING"));
      health.setStatus("", ServingStatus.SERVING);
      assertThat(probe(port)).isEqualTo(new Probe(0, "SERVING"));
      // It follows the server: NOT_SERVING from the moment the server starts to shut down.
      RpcServer server = context.getBean(PetrelServerLifecycle.class).server();
      assertThat(server).isNotNull();
      server.shutdown();
      assertThat(health.status("")).isEqualTo(ServingStatus.NOT_SERVING);
    });
  }

  @Test
  void switchedOffTheServerHasNoHealthServiceAndNoBean() {
    runner.withUserConfiguration(Echo.class).withPropertyValues("petrel.server.health.enabled=false").run(context -> {
      assertThat(context).hasNotFailed().doesNotHaveBean(HealthService.class);
      Probe probe = probe(context.getBean(PetrelServerLifecycle.class).port());
      assertThat(probe.code()).isEqualTo(3);
      assertThat(probe.line()).startsWith("UNIMPLEMENTED");
    });
  }

  @Test
  void aServerSwitchedOffMakesNoHealthService() {
    runner.withUserConfiguration(Echo.class).withPropertyValues("petrel.server.enabled=false")
        .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(HealthService.class));
  }

  @Test
  void theApplicationsOwnHealthServiceBeanIsTheOneServed() {
    runner.withUserConfiguration(Echo.class, OwnHealth.class).run(context -> {
      assertThat(context).hasNotFailed().hasSingleBean(HealthService.class);
      assertThat(context.getBean(HealthService.class)).isSameAs(OwnHealth.OWN);
      int port = context.getBean(PetrelServerLifecycle.class).port();
      assertThat(probe(port)).isEqualTo(new Probe(0, "SERVING"));
      OwnHealth.OWN.setStatus("", ServingStatus.NOT_SERVING);
      assertThat(probe(port)).isEqualTo(new Probe(1, "NOT_SERVING"));
    });
  }

  @Test
  void aHealthServiceServedByHandIsLeftAsItIs() {
    runner.withUserConfiguration(Echo.class, HealthByHand.class).run(context -> {
      assertThat(context).hasNotFailed();
      RpcServer server = context.getBean(PetrelServerLifecycle.class).server();
      assertThat(server).isNotNull();
      assertThat(server.services()).extracting(ServiceDefinition::name)
          .containsOnlyOnce(HealthService.SERVICE);
      assertThat(probe(server.port())).isEqualTo(new Probe(0, "SERVING"));
    });
  }

  @Test
  void theHealthServiceAloneStartsNoServer() {
    runner.run(context -> {
      assertThat(context).hasNotFailed().hasSingleBean(HealthService.class);
      PetrelServerLifecycle lifecycle = context.getBean(PetrelServerLifecycle.class);
      assertThat(lifecycle.server()).isNull();
      assertThat(lifecycle.hasNoServices()).isTrue();
    });
  }

  /**
   * A HealthService follows the next server once the one it followed shut down (rpc-core): after context.stop()
   * and start(), the new server's probe answers SERVING.
   */
  @Test
  void afterAContextRestartTheHealthServiceFollowsTheNewServer() {
    runner.withUserConfiguration(Echo.class).run(context -> {
      context.getSourceApplicationContext().stop();
      context.getSourceApplicationContext().start();
      int port = context.getBean(PetrelServerLifecycle.class).port();
      assertThat(probe(port)).isEqualTo(new Probe(0, "SERVING"));
    });
  }
}
