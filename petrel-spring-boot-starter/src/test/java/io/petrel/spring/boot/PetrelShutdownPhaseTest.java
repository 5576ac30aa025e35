package io.petrel.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.petrel.rpc.CallOptions;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServiceDefinition;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.context.LifecycleAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.support.DefaultLifecycleProcessor;

/**
 * A {@code spring.lifecycle.timeout-per-shutdown-phase} shorter than the server's drain is warned about at start,
 * and what then happens at the close: the context stops waiting and closes on while the server still drains.
 */
class PetrelShutdownPhaseTest {
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(LifecycleAutoConfiguration.class, PetrelAutoConfiguration.class))
      .withPropertyValues("petrel.server.port=0", "petrel.server.address=127.0.0.1");

  @Configuration(proxyBeanMethods = false)
  static class Echo {
    @Bean
    EchoService echoService() {
      return new EchoService();
    }

    @Bean
    ServiceDefinition echoDefinition(EchoService echo) {
      return echo.definition();
    }
  }

  @Test
  void theWarningNamesBothPropertiesTheirValuesAndWhatWillHappen() {
    assertThat(PetrelServerLifecycle.phaseWarning(Duration.ofSeconds(30), Duration.ZERO, Duration.ofSeconds(10)))
        .isNull();
    assertThat(PetrelServerLifecycle.phaseWarning(Duration.ofSeconds(3), Duration.ZERO, Duration.ofSeconds(20)))
        .startsWith("spring.lifecycle.timeout-per-shutdown-phase=3s is shorter than the Petrel server's"
            + " petrel.server.shutdown-grace-period=20s: ")
        .contains("Spring stops waiting for the server after 3s", "calls are cut",
            "Set spring.lifecycle.timeout-per-shutdown-phase to at least 35s");
    assertThat(PetrelServerLifecycle.phaseWarning(Duration.ofSeconds(10), Duration.ofMillis(1500),
        Duration.ofSeconds(10))).contains("a drain delay of 1500ms (set by a PetrelServerCustomizer) plus"
            + " petrel.server.shutdown-grace-period=10s");
  }

  @Test
  void bootsDefaultThirtySecondsIsEnoughForTheDefaultGracePeriod() {
    runner.withUserConfiguration(Echo.class).run(context -> {
      assertThat(context).hasNotFailed();
      assertThat(context.getBean(PetrelServerLifecycle.class).phaseWarning()).isNull();
    });
    runner.withUserConfiguration(Echo.class).withPropertyValues("petrel.server.shutdown-grace-period=40s")
        .run(context -> assertThat(context.getBean(PetrelServerLifecycle.class).phaseWarning())
            .startsWith("spring.lifecycle.timeout-per-shutdown-phase=30s is shorter"));
  }

  /** An application's own lifecycle processor: 2 s for every phase. */
  @Configuration(proxyBeanMethods = false)
  static class TwoSecondPhases {
    @Bean
    DefaultLifecycleProcessor lifecycleProcessor() {
      DefaultLifecycleProcessor p = new DefaultLifecycleProcessor();
      p.setTimeoutPerShutdownPhase(2_000);
      return p;
    }
  }

  /** An application's own lifecycle processor: 60 s for every phase but the server's, which gets 1 s. */
  @Configuration(proxyBeanMethods = false)
  static class OneSecondForThePetrelPhase {
    @Bean
    DefaultLifecycleProcessor lifecycleProcessor() {
      DefaultLifecycleProcessor p = new DefaultLifecycleProcessor();
      p.setTimeoutPerShutdownPhase(60_000);
      p.setTimeoutForShutdownPhase(PetrelServerLifecycle.PHASE, 1_000);
      return p;
    }
  }

  /**
   * The WARN judges by the lifecycle processor the context uses, not by Boot's property, which an application's own
   * lifecycleProcessor bean leaves unused: its timeoutPerShutdownPhase, else its timeout for the server's phase.
   */
  @Test
  void anApplicationsOwnLifecycleProcessorIsTheOneJudged() {
    runner.withUserConfiguration(Echo.class, TwoSecondPhases.class).run(context -> {
      assertThat(context).hasNotFailed();
      assertThat(context.getBean(PetrelServerLifecycle.class).phaseWarning())
          .startsWith("the lifecycleProcessor bean's timeoutPerShutdownPhase=2s is shorter than the Petrel server's"
              + " petrel.server.shutdown-grace-period=10s: ")
          .contains("Set the lifecycleProcessor bean's setTimeoutPerShutdownPhase (or setTimeoutForShutdownPhase("
              + PetrelServerLifecycle.PHASE + ", ...), for this phase alone) to at least 25s");
    });
    runner.withUserConfiguration(Echo.class, OneSecondForThePetrelPhase.class).run(context ->
        assertThat(context.getBean(PetrelServerLifecycle.class).phaseWarning()).startsWith("the lifecycleProcessor"
            + " bean's timeout for shutdown phase " + PetrelServerLifecycle.PHASE + " (setTimeoutForShutdownPhase)=1s"
            + " is shorter").contains("Set the lifecycleProcessor bean's setTimeoutForShutdownPhase("
                + PetrelServerLifecycle.PHASE + ", ...) to at least 25s"));
    // The per-phase timeout is long enough, the one for every phase is not: no WARN.
    runner.withUserConfiguration(Echo.class, OneSecondForThePetrelPhase.class)
        .withPropertyValues("petrel.server.shutdown-grace-period=500ms")
        .run(context -> assertThat(context.getBean(PetrelServerLifecycle.class).phaseWarning()).isNull());
    // Without Boot's LifecycleAutoConfiguration nor a bean: the context's own processor, Spring's 10 s.
    new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(PetrelAutoConfiguration.class))
        .withUserConfiguration(Echo.class).withPropertyValues("petrel.server.port=0",
            "petrel.server.address=127.0.0.1", "petrel.server.shutdown-grace-period=20s")
        .run(context -> assertThat(context.getBean(PetrelServerLifecycle.class).phaseWarning())
            .startsWith("Spring's timeout per shutdown phase (the context has no lifecycleProcessor bean: neither"
                + " Boot's LifecycleAutoConfiguration nor one of its own)=10s is shorter"));
  }

  /** The timeout judged is the one Spring waits: 1 s for the server's phase, not the bean's 60 s for the others. */
  @Test
  void thePhasesOwnTimeoutIsTheOneTheCloseWaits() {
    runner.withUserConfiguration(Echo.class, OneSecondForThePetrelPhase.class)
        .withPropertyValues("petrel.server.shutdown-grace-period=20s").run(context -> {
          PetrelServerLifecycle lifecycle = context.getBean(PetrelServerLifecycle.class);
          assertThat(lifecycle.phaseWarning()).contains("(setTimeoutForShutdownPhase)=1s is shorter");
          RpcServer server = lifecycle.server();
          assertThat(server).isNotNull();
          EchoService echo = context.getBean(EchoService.class);
          try (RpcClient client = RpcClient.builder().address("127.0.0.1", server.port()).build()) {
            CompletableFuture<String> held = client.unaryCallAsync(EchoService.HOLD, "late", CallOptions.DEFAULT);
            assertThat(echo.entered.await(10, TimeUnit.SECONDS)).isTrue();
            long start = System.nanoTime();
            context.getSourceApplicationContext().close();
            long closedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertThat(closedMillis).as("the close waited the phase's 1 s, not 60 s nor the grace period")
                .isBetween(900L, 15_000L);
            assertThat(held).as("the call is still in flight").isNotDone();
            echo.release.countDown();
            assertThat(held.get(10, TimeUnit.SECONDS)).isEqualTo("released late");
            assertThat(server.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
          }
        });
  }

  /**
   * What the WARN warns of: the context waits the phase's 1 s, not the 20 s grace period, and closes on with the
   * call still in flight on a server that still drains; in an application the JVM's exit would now cut it.
   */
  @Test
  void aPhaseTimeoutShorterThanTheDrainClosesTheContextWhileACallIsStillInFlight() {
    runner.withUserConfiguration(Echo.class).withPropertyValues("spring.lifecycle.timeout-per-shutdown-phase=1s",
        "petrel.server.shutdown-grace-period=20s").run(context -> {
          PetrelServerLifecycle lifecycle = context.getBean(PetrelServerLifecycle.class);
          assertThat(lifecycle.phaseWarning()).startsWith("spring.lifecycle.timeout-per-shutdown-phase=1s is"
              + " shorter than the Petrel server's petrel.server.shutdown-grace-period=20s");
          RpcServer server = lifecycle.server();
          assertThat(server).isNotNull();
          EchoService echo = context.getBean(EchoService.class);
          try (RpcClient client = RpcClient.builder().address("127.0.0.1", server.port()).build()) {
            CompletableFuture<String> held = client.unaryCallAsync(EchoService.HOLD, "late", CallOptions.DEFAULT);
            assertThat(echo.entered.await(10, TimeUnit.SECONDS)).isTrue();
            long start = System.nanoTime();
            context.getSourceApplicationContext().close();
            long closedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertThat(closedMillis).as("the close waited the phase's timeout, not the grace period")
                .isBetween(900L, 15_000L);
            assertThat(context.getSourceApplicationContext().isActive()).isFalse();
            assertThat(server.isShutdown()).isTrue();
            assertThat(server.isTerminated()).as("the server still drains after the context closed").isFalse();
            assertThat(held).as("the call is still in flight").isNotDone();
            echo.release.countDown(); // in a test the JVM stays up, so the drain can still finish it
            assertThat(held.get(10, TimeUnit.SECONDS)).isEqualTo("released late");
            assertThat(server.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
          }
        });
  }
}
