package io.petrel.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.petrel.rpc.InProcessAddress;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServiceDefinition;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * A {@code @SpringBootTest} without sockets: the server serves in-process ({@code petrel.server.in-process-name}) and
 * a client calls it with the target {@code inprocess:NAME}, as docs/spring-boot.md's testing section shows.
 */
@SpringBootTest(classes = PetrelInProcessTest.App.class, properties = {
    "petrel.server.in-process-name=echo-under-test", "petrel.clients.echo.target=inprocess:echo-under-test"})
class PetrelInProcessTest {
  @Configuration(proxyBeanMethods = false)
  @ImportAutoConfiguration(PetrelAutoConfiguration.class)
  static class App {
    @Bean
    ServiceDefinition echo() {
      return new EchoService().definition();
    }

    @Bean
    Caller caller() {
      return new Caller();
    }
  }

  static class Caller {
    @PetrelClient("echo")
    RpcClient echo;
  }

  @Autowired
  Caller caller;

  @Autowired
  PetrelServerLifecycle lifecycle;

  @Autowired
  PetrelHealthIndicator health;

  @Autowired
  Environment environment;

  /** Injected into the test instance too: Spring's test framework runs the context's bean post-processors on it. */
  @PetrelClient("echo")
  RpcClient injectedIntoTheTest;

  @Test
  void anInjectedClientCallsTheInProcessServer() {
    assertThat(caller.echo.unaryCall(EchoService.ECHO, "no socket")).isEqualTo("no socket");
    assertThat(injectedIntoTheTest).isSameAs(caller.echo);
    RpcServer server = lifecycle.server();
    assertThat(server).isNotNull();
    assertThat(server.address()).isEqualTo(new InProcessAddress("echo-under-test"));
  }

  @Test
  void itHasNoPortAndSaysSo() {
    assertThatThrownBy(lifecycle::port).hasMessageContaining("serves in-process, as 'echo-under-test'")
        .hasMessageContaining("inprocess:echo-under-test");
    assertThat(environment.containsProperty(PetrelServerLifecycle.LOCAL_PORT_PROPERTY)).isFalse();
    Health h = health.health();
    assertThat(h.getStatus().getCode()).isEqualTo("UP");
    assertThat(h.getDetails()).containsEntry("server", "serving").containsEntry("inProcessName", "echo-under-test");
  }
}
