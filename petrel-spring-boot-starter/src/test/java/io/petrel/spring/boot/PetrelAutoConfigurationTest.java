package io.petrel.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcClientBuilder;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServerInterceptor;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.spi.RecordingTransport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

class PetrelAutoConfigurationTest {
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(PetrelAutoConfiguration.class))
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

  @Configuration(proxyBeanMethods = false)
  static class Meters {
    @Bean
    MeterRegistry meterRegistry() {
      return new SimpleMeterRegistry();
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class Interceptor {
    @Bean
    ServerInterceptor tagging() {
      return new ServerInterceptor() {
        @Override
        public <Req, Resp> CompletionStage<Resp> intercept(Chain<Req, Resp> chain) throws Exception {
          chain.context().addResponseMetadata("seen-by", "tagging");
          return chain.proceed();
        }
      };
    }
  }

  static class Caller {
    @PetrelClient("echo")
    RpcClient first;

    @PetrelClient("echo")
    RpcClient second;
  }

  static class WrongCaller {
    @PetrelClient("nowhere")
    RpcClient client;
  }

  private static RpcClient clientTo(int port) {
    return RpcClient.builder().address("127.0.0.1", port).build();
  }

  @Test
  void servesServiceDefinitionBeansWithTheInterceptorBeansAndRecordsIntoTheContextsMeterRegistry() {
    runner.withUserConfiguration(Echo.class, Meters.class, Interceptor.class).run(context -> {
      assertThat(context).hasNotFailed();
      int port = context.getBean(PetrelServerLifecycle.class).port();
      try (RpcClient client = clientTo(port)) {
        CompletableFuture<String> seenBy = new CompletableFuture<>();
        String answer = client.unaryCall(EchoService.ECHO, "ping",
            CallOptions.DEFAULT.withResponseMetadataListener(md -> seenBy.complete(md.get("seen-by"))));
        assertThat(answer).isEqualTo("ping");
        assertThat(seenBy).isCompletedWithValue("tagging");
      }
      assertThat(timerCount(context.getBean(MeterRegistry.class), "rpc.server.calls", "service", EchoService.NAME,
          "method", "echo", "status", "OK")).isEqualTo(1);
    });
  }

  /**
   * The server's event loops are daemon threads: without a non-daemon thread of its own, an application that
   * serves only Petrel would exit once its main returned. One keeps the JVM up while the server serves, and ends
   * when the context closes; a context with nothing to serve starts none.
   */
  @Test
  void aNonDaemonThreadKeepsTheJvmUpWhileTheServerServesAndEndsWithIt() throws Exception {
    List<Thread> seen = new ArrayList<>();
    List<Thread> before = keepAliveThreads(); // other tests' contexts may still be closing
    runner.withUserConfiguration(Echo.class).run(context -> {
      assertThat(context).hasNotFailed();
      seen.addAll(keepAliveThreads());
      seen.removeAll(before);
      assertThat(seen).singleElement().satisfies(t -> {
        assertThat(t.isDaemon()).isFalse();
        assertThat(t.isAlive()).isTrue();
      });
    });
    // The runner closed the context: the server terminated, and its thread ends with it.
    seen.get(0).join(TimeUnit.SECONDS.toMillis(20));
    assertThat(seen.get(0).isAlive()).isFalse();
    List<Thread> earlier = keepAliveThreads();
    runner.run(context -> assertThat(keepAliveThreads()).isSubsetOf(earlier)); // no services: no server, no thread
  }

  private static List<Thread> keepAliveThreads() {
    List<Thread> out = new ArrayList<>();
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().equals(PetrelServerLifecycle.KEEP_ALIVE_THREAD) && t.isAlive()) {
        out.add(t);
      }
    }
    return out;
  }

  @Test
  void appliesTheLimitsSetAsProperties() {
    runner.withUserConfiguration(Echo.class).withPropertyValues("petrel.server.max-frame-size=1KB").run(context -> {
      int port = context.getBean(PetrelServerLifecycle.class).port();
      try (RpcClient client = clientTo(port)) {
        assertThatThrownBy(() -> client.unaryCall(EchoService.ECHO, "x".repeat(4096)))
            .isInstanceOfSatisfying(StatusException.class, e -> {
              assertThat(e.code()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
              assertThat(e.getMessage()).contains("maxFrameSize 1024");
            });
      }
    });
  }

  @Test
  void closingTheContextDrainsCallsInFlightAndHealthSaysDownMeanwhile() {
    runner.withUserConfiguration(Echo.class).run(context -> {
      EchoService echo = context.getBean(EchoService.class);
      PetrelHealthIndicator health = context.getBean(PetrelHealthIndicator.class);
      RpcServer server = context.getBean(PetrelServerLifecycle.class).server();
      assertThat(server).isNotNull();
      try (RpcClient client = clientTo(server.port())) {
        CompletableFuture<String> held = client.unaryCallAsync(EchoService.HOLD, "a", CallOptions.DEFAULT);
        assertThat(echo.entered.await(10, TimeUnit.SECONDS)).isTrue();
        Thread closer = new Thread(() -> context.getSourceApplicationContext().close(), "context-closer");
        closer.start();
        assertThat(awaitShutdown(server)).as("the server starts draining when the context closes").isTrue();
        Health draining = health.health();
        assertThat(draining.getStatus().getCode()).isEqualTo("DOWN");
        assertThat(draining.getDetails()).containsEntry("server", "draining").containsEntry("inFlightCalls", 1L);
        // The call in flight holds the close: the server waits for it (up to its grace period, 10 s).
        assertThat(closer.isAlive()).isTrue();
        assertThat(held).isNotDone();
        echo.release.countDown();
        assertThat(held.get(10, TimeUnit.SECONDS)).isEqualTo("released a");
        closer.join(TimeUnit.SECONDS.toMillis(20));
        assertThat(closer.isAlive()).isFalse();
        assertThat(server.isTerminated()).isTrue();
        // Asked after the context closed (a probe holding the indicator), it answers, and says so.
        Health stopped = health.health();
        assertThat(stopped.getStatus().getCode()).isEqualTo("DOWN");
        assertThat(stopped.getDetails()).containsEntry("server", "stopped");
      }
    });
  }

  /**
   * The context stops the beans of one phase one after the other, each stop(callback) returning before its
   * callback when it drains in the background (Boot's web server graceful shutdown does): Petrel's returns at once
   * too, so the two drains run at the same time instead of one after the other, and the context still waits for it.
   */
  @Test
  void stoppingTheServerReturnsAtOnceAndTellsTheCallbackWhenItHasDrained() {
    runner.withUserConfiguration(Echo.class).run(context -> {
      EchoService echo = context.getBean(EchoService.class);
      PetrelServerLifecycle lifecycle = context.getBean(PetrelServerLifecycle.class);
      RpcServer server = lifecycle.server();
      assertThat(server).isNotNull();
      try (RpcClient client = clientTo(server.port())) {
        CompletableFuture<String> held = client.unaryCallAsync(EchoService.HOLD, "a", CallOptions.DEFAULT);
        assertThat(echo.entered.await(10, TimeUnit.SECONDS)).isTrue();
        java.util.concurrent.CountDownLatch stopped = new java.util.concurrent.CountDownLatch(1);
        long start = System.nanoTime();
        lifecycle.stop(stopped::countDown);
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertThat(tookMs).as("stop(callback) returned after %d ms, with a call in flight", tookMs)
            .isLessThan(2_000);
        assertThat(server.isShutdown()).as("draining").isTrue();
        assertThat(stopped.getCount()).as("told before the call in flight ended").isEqualTo(1);
        echo.release.countDown();
        assertThat(held.get(10, TimeUnit.SECONDS)).isEqualTo("released a");
        assertThat(stopped.await(20, TimeUnit.SECONDS)).as("the callback once drained").isTrue();
        assertThat(server.isTerminated()).isTrue();
      }
    });
  }

  @Configuration(proxyBeanMethods = false)
  static class LongDrain {
    @Bean
    PetrelServerCustomizer longDrain() {
      return b -> b.shutdownGracePeriod(java.time.Duration.ofSeconds(30)).drainDelay(java.time.Duration.ofSeconds(2));
    }
  }

  /**
   * A grace period and drain delay a customizer set are what the stop waits for: it took the property's grace
   * period (1 s here) and stopped the server at once 5 s after that, failing calls the server still let finish
   * (checked by hand on the old starter: a held call failed after 6 s of a 30 s grace period).
   */
  @Test
  void theStopWaitsForTheDrainDelayAndGracePeriodACustomizerSet() {
    runner.withUserConfiguration(Echo.class, LongDrain.class)
        .withPropertyValues("petrel.server.shutdown-grace-period=1s").run(context -> {
          RpcServer server = context.getBean(PetrelServerLifecycle.class).server();
          assertThat(server).isNotNull();
          assertThat(server.shutdownGracePeriod()).isEqualTo(java.time.Duration.ofSeconds(30));
          assertThat(server.drainDelay()).isEqualTo(java.time.Duration.ofSeconds(2));
          assertThat(PetrelServerLifecycle.stopBoundMillis(server)).isEqualTo(37_000L);
        });
  }

  @Configuration(proxyBeanMethods = false)
  static class LongGrace {
    @Bean
    PetrelServerCustomizer longGrace() {
      return b -> b.shutdownGracePeriod(java.time.Duration.ofSeconds(10)).drainDelay(java.time.Duration.ofSeconds(1));
    }
  }

  /**
   * The same, on a real stop: with the property's grace period of 0 the stop would give up 5 s after it began and
   * stop the server at once, failing the call in flight; the customizer's 1 s drain delay and 10 s grace period
   * keep the stop waiting past that (up to 16 s), and the call, released after 6 s, still gets its answer.
   */
  @Test
  void aStopWaitsPastThePropertysGracePeriodForTheOneACustomizerSet() {
    runner.withUserConfiguration(Echo.class, LongGrace.class)
        .withPropertyValues("petrel.server.shutdown-grace-period=0s").run(context -> {
          EchoService echo = context.getBean(EchoService.class);
          PetrelServerLifecycle lifecycle = context.getBean(PetrelServerLifecycle.class);
          RpcServer server = lifecycle.server();
          assertThat(server).isNotNull();
          try (RpcClient client = clientTo(server.port())) {
            CompletableFuture<String> held = client.unaryCallAsync(EchoService.HOLD, "late", CallOptions.DEFAULT);
            assertThat(echo.entered.await(10, TimeUnit.SECONDS)).isTrue();
            java.util.concurrent.CountDownLatch stopped = new java.util.concurrent.CountDownLatch(1);
            lifecycle.stop(stopped::countDown);
            assertThat(stopped.await(6, TimeUnit.SECONDS)).as("the stop still waits after 6 s").isFalse();
            assertThat(server.isTerminated()).isFalse();
            assertThat(held).as("the call in flight, neither answered nor failed").isNotDone();
            echo.release.countDown();
            assertThat(held.get(10, TimeUnit.SECONDS)).isEqualTo("released late");
            assertThat(stopped.await(10, TimeUnit.SECONDS)).as("told once drained").isTrue();
            assertThat(server.isTerminated()).isTrue();
          }
        });
  }

  @Test
  void aContextStoppedAndStartedAgainServesAgainWithGaugesOfTheNewServer() {
    runner.withUserConfiguration(Echo.class, Meters.class).run(context -> {
      PetrelServerLifecycle lifecycle = context.getBean(PetrelServerLifecycle.class);
      RpcServer first = lifecycle.server();
      assertThat(first).isNotNull();
      MeterRegistry meters = context.getBean(MeterRegistry.class);
      context.getSourceApplicationContext().stop();
      assertThat(first.isTerminated()).isTrue();
      assertThat(meters.find("rpc.server.calls.active").gauge()).as("the stopped server's gauge").isNull();
      context.getSourceApplicationContext().start();
      RpcServer second = lifecycle.server();
      assertThat(second).isNotNull().isNotSameAs(first);
      assertThat(lifecycle.isRunning()).isTrue();
      try (RpcClient client = clientTo(second.port())) {
        CompletableFuture<String> held = client.unaryCallAsync(EchoService.HOLD, "again", CallOptions.DEFAULT);
        EchoService echo = context.getBean(EchoService.class);
        assertThat(echo.entered.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(meters.get("rpc.server.calls.active").gauge().value()).as("read from the new server").isEqualTo(1);
        echo.release.countDown();
        assertThat(held.get(10, TimeUnit.SECONDS)).isEqualTo("released again");
      }
    });
  }

  @Test
  void pausingTheContextLeavesTheServerServing() {
    runner.withUserConfiguration(Echo.class).run(context -> {
      RpcServer server = context.getBean(PetrelServerLifecycle.class).server();
      assertThat(server).isNotNull();
      context.getSourceApplicationContext().pause();
      context.getSourceApplicationContext().restart();
      assertThat(server.isShutdown()).as("the same server, never stopped by pause()").isFalse();
      try (RpcClient client = clientTo(server.port())) {
        assertThat(client.unaryCall(EchoService.ECHO, "still here")).isEqualTo("still here");
      }
    });
  }

  @Test
  void healthFirstAskedAfterTheContextClosedSaysDownInsteadOfThrowing() {
    runner.withUserConfiguration(Echo.class).run(context -> {
      PetrelHealthIndicator health = context.getBean(PetrelHealthIndicator.class);
      context.getSourceApplicationContext().close();
      Health closed = health.health();
      assertThat(closed.getStatus().getCode()).isEqualTo("DOWN");
      assertThat((String) closed.getDetails().get("server")).startsWith("the application context is closed");
    });
  }

  @Test
  void withNothingToServeNoServerStartsAndHealthSaysWhy() {
    runner.withUserConfiguration(Meters.class).run(context -> {
      // The server built to ask what it serves leaves nothing behind: no meter of a server that never ran.
      assertThat(context.getBean(MeterRegistry.class).getMeters())
          .extracting(m -> m.getId().getName()).noneMatch(n -> n.startsWith("rpc.server"));
      PetrelServerLifecycle lifecycle = context.getBean(PetrelServerLifecycle.class);
      assertThat(lifecycle.server()).isNull();
      assertThat(lifecycle.hasNoServices()).isTrue();
      Health health = context.getBean(PetrelHealthIndicator.class).health();
      assertThat(health.getStatus().getCode()).isEqualTo("UP");
      assertThat(health.getDetails()).containsEntry("server", "not started: the context has no services");
      assertThatThrownBy(lifecycle::port).hasMessageContaining("the context has no services");
    });
  }

  @Configuration(proxyBeanMethods = false)
  static class ServiceByHand {
    @Bean
    PetrelServerCustomizer addsEcho() {
      return b -> b.addService(new EchoService().definition()); // no service bean in the context
    }
  }

  @Test
  void aServiceACustomizerAddsByHandStartsTheServer() {
    runner.withUserConfiguration(ServiceByHand.class).run(context -> {
      PetrelServerLifecycle lifecycle = context.getBean(PetrelServerLifecycle.class);
      assertThat(lifecycle.hasNoServices()).isFalse();
      RpcServer server = lifecycle.server();
      assertThat(server).as("started for the customizer's service").isNotNull();
      try (RpcClient client = clientTo(server.port())) {
        assertThat(client.unaryCall(EchoService.ECHO, "x")).isEqualTo("x");
      }
    });
  }

  @Test
  void serverCanBeSwitchedOff() {
    runner.withUserConfiguration(Echo.class).withPropertyValues("petrel.server.enabled=false")
        .run(context -> assertThat(context).doesNotHaveBean(PetrelServerLifecycle.class));
  }

  @Test
  void oneSharedClientPerConfiguredNameIsInjectedIntoAnnotatedFields() {
    runner.withUserConfiguration(Echo.class).withBean(Caller.class)
        .withPropertyValues("petrel.clients.echo.target=127.0.0.1:1").run(context -> {
          Caller caller = context.getBean(Caller.class);
          assertThat(caller.first).isNotNull().isSameAs(caller.second)
              .isSameAs(context.getBean(PetrelClients.class).client("echo"));
        });
  }

  @Test
  void anInjectedClientCallsTheServerAndIsShutDownWithTheContext() {
    int[] port = new int[1];
    RpcClient[] injected = new RpcClient[1];
    runner.withUserConfiguration(Echo.class).run(server -> {
      port[0] = server.getBean(PetrelServerLifecycle.class).port();
      new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(PetrelAutoConfiguration.class))
          .withPropertyValues("petrel.server.enabled=false", "petrel.clients.echo.target=127.0.0.1:" + port[0],
              "petrel.clients.echo.default-deadline=5s")
          .withBean(Caller.class).run(client -> {
            injected[0] = client.getBean(Caller.class).first;
            assertThat(injected[0].unaryCall(EchoService.ECHO, "hi")).isEqualTo("hi");
          });
    });
    assertThat(injected[0].isShutdown()).isTrue();
  }

  /**
   * {@code petrel.clients.<name>.liveness-timeout} reaches the client the context builds: the configuration its
   * transport is given (the core's recording transport, set by a customizer, keeps it) has the value bound, the
   * core's default (2 s) when the property is unset, and zero (the check off) for {@code 0s}.
   */
  @Test
  void aClientsLivenessTimeoutPropertyReachesTheBuiltClient() {
    ApplicationContextRunner clients = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(PetrelAutoConfiguration.class))
        .withPropertyValues("petrel.server.enabled=false", "petrel.clients.echo.target=static://a:1")
        .withBean(PetrelClientCustomizer.class, () -> (name, builder) -> builder.transport("recording"))
        .withBean(Caller.class);
    clients.withPropertyValues("petrel.clients.echo.liveness-timeout=750ms")
        .run(c -> assertThat(livenessTimeout(c)).isEqualTo(Duration.ofMillis(750)));
    clients.withPropertyValues("petrel.clients.echo.liveness-timeout=3m")
        .run(c -> assertThat(livenessTimeout(c)).isEqualTo(Duration.ofMinutes(3)));
    clients.run(c -> assertThat(livenessTimeout(c)).isEqualTo(RpcClientBuilder.DEFAULT_LIVENESS_TIMEOUT)
        .isEqualTo(Duration.ofSeconds(2)));
    clients.withPropertyValues("petrel.clients.echo.liveness-timeout=0s")
        .run(c -> assertThat(livenessTimeout(c)).isZero());
  }

  /** The livenessTimeout of the client {@link Caller} got injected, as its transport was given it. */
  private static Duration livenessTimeout(AssertableApplicationContext context) {
    assertThat(context).hasNotFailed();
    return Duration.ofNanos(RecordingTransport.of(context.getBean(Caller.class).first).config.livenessTimeoutNanos());
  }

  @Test
  void aClientWithoutTargetFailsTheContextNamingTheProperty() {
    runner.withPropertyValues("petrel.clients.orders.default-deadline=1s").withBean(Caller.class)
        .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
            .hasMessageContaining("petrel.clients.orders.target is not set"));
  }

  /**
   * A client of this application's own server, whose port is 0 (any free one): the target cannot name it, and the
   * failure says why and what to do instead.
   */
  @Test
  void aClientTargetWithPortZeroSaysTheServersPortIsKnownOnlyOnceItStarts() {
    runner.withUserConfiguration(Echo.class)
        .withPropertyValues("petrel.clients.orders.target=127.0.0.1:${petrel.server.port}").withBean(Caller.class)
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("petrel.clients.orders.target=127.0.0.1:0 is refused")
            .hasStackTraceContaining("a target cannot name port 0")
            .hasStackTraceContaining("PetrelServerLifecycle.port()"));
  }

  @Test
  void anUnknownClientNameFailsTheContextNamingTheField() {
    runner.withPropertyValues("petrel.clients.echo.target=127.0.0.1:1").withBean(WrongCaller.class)
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasMessageContaining("cannot inject @PetrelClient(\"nowhere\")")
            .hasMessageContaining("WrongCaller.client")
            .hasMessageContaining("configure petrel.clients.nowhere.target"));
  }

  @Test
  void halfATlsKeyPairFailsNamingBothProperties() {
    runner.withUserConfiguration(Echo.class)
        .withPropertyValues("petrel.server.tls.enabled=true", "petrel.server.tls.certificate-chain=/tmp/x.pem")
        .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
            .hasMessageContaining("petrel.server.tls.certificate-chain and petrel.server.tls.private-key go together"));
  }

  @Test
  void virtualThreadsNeedJava21AndSaySoWhenTheContextStarts() {
    runner.withUserConfiguration(Echo.class).withPropertyValues("petrel.server.virtual-threads=64").run(context -> {
      if (Runtime.version().feature() >= 21) {
        assertThat(context).hasNotFailed();
        try (RpcClient client = clientTo(context.getBean(PetrelServerLifecycle.class).port())) {
          assertThat(client.unaryCall(EchoService.ECHO, "v")).isEqualTo("v");
        }
      } else {
        assertThat(context).hasFailed().getFailure().rootCause().isInstanceOf(UnsupportedOperationException.class)
            .hasMessageStartingWith("virtual threads need Java 21 or later");
      }
    });
  }

  @Test
  void aServiceBeanWhoseGeneratedCodeIsMissingFailsTheStartSayingHowToGenerateIt() {
    runner.withBean(io.petrel.spring.boot.unbuilt.Unbuilt.class, () -> name -> "hi " + name)
        .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
            .hasMessageContaining("io.petrel.spring.boot.unbuilt.Unbuilt is an @RpcService interface but"
                + " io.petrel.spring.boot.unbuilt.UnbuiltRpc is not on the class path: run the"
                + " rpc-codegen-maven-plugin's generate goal"));
  }

  @Test
  void twoBeansServingOneServiceFailTheStartNamingBoth() {
    runner.withUserConfiguration(Echo.class)
        .withBean("echoAgain", ServiceDefinition.class, () -> new EchoService().definition())
        .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
            .hasMessageContaining("'echoDefinition'").hasMessageContaining("'echoAgain'")
            .hasMessageContaining("both serve test.Echo"));
  }

  /**
   * The count of a timer once it has one: the server records a call just after it queued the response, so the
   * caller may see the answer first.
   */
  static long timerCount(MeterRegistry registry, String name, String... tags) {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < until) {
      Timer timer = registry.find(name).tags(tags).timer();
      if (timer != null && timer.count() > 0) {
        return timer.count();
      }
      Thread.onSpinWait();
    }
    return 0;
  }

  static boolean awaitShutdown(RpcServer server) {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!server.isShutdown() && System.nanoTime() < until) {
      Thread.onSpinWait();
    }
    return server.isShutdown();
  }
}
