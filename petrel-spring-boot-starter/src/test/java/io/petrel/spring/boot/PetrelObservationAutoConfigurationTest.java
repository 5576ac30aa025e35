package io.petrel.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.observation.ObservationServerInterceptor;
import io.petrel.rpc.observation.RpcClientObservationContext;
import io.petrel.rpc.observation.RpcObservations;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** With rpc-observation and an ObservationRegistry in the context, both sides are observed, and timed once. */
class PetrelObservationAutoConfigurationTest {
  @Configuration(proxyBeanMethods = false)
  static class Observed {
    final List<Observation.Context> stopped = new CopyOnWriteArrayList<>();

    @Bean
    MeterRegistry meterRegistry() {
      return new SimpleMeterRegistry();
    }

    @Bean
    ObservationRegistry observationRegistry(MeterRegistry meters) {
      // What Boot's own auto-configuration does: MeterFilter beans go to the registry, a meter handler is added.
      ObservationRegistry registry = ObservationRegistry.create();
      registry.observationConfig().observationHandler(new DefaultMeterObservationHandler(meters))
          .observationHandler(new ObservationHandler<>() {
            @Override
            public void onStop(Observation.Context context) {
              stopped.add(context);
            }

            @Override
            public boolean supportsContext(Observation.Context context) {
              return true;
            }
          });
      return registry;
    }

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
  void callsAreObservedOnBothSidesWithTheClientsTargetAsPeer() {
    new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(PetrelAutoConfiguration.class))
        .withUserConfiguration(Observed.class)
        .withPropertyValues("petrel.server.port=0", "petrel.server.address=127.0.0.1")
        .run(server -> {
          int port = server.getBean(PetrelServerLifecycle.class).port();
          assertThat(server).hasSingleBean(ObservationServerInterceptor.class);
          MeterRegistry meters = server.getBean(MeterRegistry.class);
          // Boot applies MeterFilter beans to its registries; this test's registry is a plain one.
          server.getBeansOfType(io.micrometer.core.instrument.config.MeterFilter.class).values()
              .forEach(f -> meters.config().meterFilter(f));
          new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(PetrelAutoConfiguration.class))
              .withUserConfiguration(Observed.class)
              .withPropertyValues("petrel.server.enabled=false", "petrel.clients.echo.target=127.0.0.1:" + port)
              .run(client -> {
                RpcClient echo = client.getBean(PetrelClients.class).client("echo");
                assertThat(echo.unaryCall(EchoService.ECHO, "traced")).isEqualTo("traced");
                List<Observation.Context> clientSide = client.getBean(Observed.class).stopped;
                assertThat(clientSide).singleElement().isInstanceOfSatisfying(RpcClientObservationContext.class,
                    c -> {
                      assertThat(c.getName()).isEqualTo(RpcObservations.CLIENT_NAME);
                      assertThat(c.getRemoteServiceAddress()).isEqualTo("petrel://127.0.0.1:" + port);
                      assertThat(c.statusCode()).isEqualTo("OK");
                    });
              });
          List<Observation.Context> serverSide = server.getBean(Observed.class).stopped;
          long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
          while (serverSide.isEmpty() && System.nanoTime() < until) {
            Thread.onSpinWait();
          }
          assertThat(serverSide).singleElement().extracting(Observation.Context::getName)
              .isEqualTo(RpcObservations.SERVER_NAME);
          assertThat(meters.find(RpcObservations.SERVER_NAME).meters()).isEmpty();
          assertThat(PetrelAutoConfigurationTest.timerCount(meters, "rpc.server.calls", "method", "echo"))
              .isEqualTo(1);
        });
  }

  /** A client interceptor bean that records whether it runs inside an observation, and fails calls it is told to. */
  @Configuration(proxyBeanMethods = false)
  static class UserClientInterceptor {
    final List<String> seen = new CopyOnWriteArrayList<>();

    @Bean
    io.petrel.rpc.ClientInterceptor recording(ObservationRegistry registry) {
      return new io.petrel.rpc.ClientInterceptor() {
        @Override
        public <Req, Resp> java.util.concurrent.CompletableFuture<Resp> intercept(Chain<Req, Resp> chain) {
          seen.add(registry.getCurrentObservation() == null ? "no observation" : "inside "
              + registry.getCurrentObservation().getContext().getName());
          if ("refuse".equals(chain.request())) {
            return java.util.concurrent.CompletableFuture.failedFuture(io.petrel.rpc.Status.FAILED_PRECONDITION
                .withDescription("refused by the interceptor").asException());
          }
          return chain.proceed();
        }
      };
    }
  }

  /**
   * The client's span is outermost, as the server's: the application's client interceptors run inside it (what
   * they log carries the trace), and a call one of them fails is observed too.
   */
  @Test
  void theApplicationsClientInterceptorsRunInsideTheClientsObservation() {
    new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(PetrelAutoConfiguration.class))
        .withUserConfiguration(Observed.class)
        .withPropertyValues("petrel.server.port=0", "petrel.server.address=127.0.0.1")
        .run(server -> {
          int port = server.getBean(PetrelServerLifecycle.class).port();
          new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(PetrelAutoConfiguration.class))
              .withUserConfiguration(Observed.class, UserClientInterceptor.class)
              .withPropertyValues("petrel.server.enabled=false", "petrel.clients.echo.target=127.0.0.1:" + port)
              .run(client -> {
                RpcClient echo = client.getBean(PetrelClients.class).client("echo");
                assertThat(echo.unaryCall(EchoService.ECHO, "traced")).isEqualTo("traced");
                org.assertj.core.api.Assertions.assertThatThrownBy(() -> echo.unaryCall(EchoService.ECHO, "refuse"))
                    .hasMessageContaining("refused by the interceptor");
                assertThat(client.getBean(UserClientInterceptor.class).seen)
                    .containsExactly("inside " + RpcObservations.CLIENT_NAME, "inside " + RpcObservations.CLIENT_NAME);
                assertThat(client.getBean(Observed.class).stopped).hasSize(2)
                    .allSatisfy(c -> assertThat(c).isInstanceOf(RpcClientObservationContext.class))
                    .extracting(c -> ((RpcClientObservationContext) c).statusCode())
                    .containsExactly("OK", "FAILED_PRECONDITION");
              });
        });
  }

  @Test
  void withoutAnObservationRegistryNothingIsObserved() {
    new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(PetrelAutoConfiguration.class))
        .withPropertyValues("petrel.server.port=0")
        .run(context -> assertThat(context).doesNotHaveBean(ObservationServerInterceptor.class));
  }
}
