package io.petrel.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.petrel.rpc.RpcClient;
import io.petrel.rpc.ServiceDefinition;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** With {@code petrel.server.port=0}, the bound port is the Environment's {@code local.petrel.server.port}. */
@SpringBootTest(classes = PetrelLocalPortTest.App.class,
    properties = {"petrel.server.port=0", "petrel.server.address=127.0.0.1"})
class PetrelLocalPortTest {
  @Configuration(proxyBeanMethods = false)
  @ImportAutoConfiguration(PetrelAutoConfiguration.class)
  static class App {
    @Bean
    ServiceDefinition echo() {
      return new EchoService().definition();
    }
  }

  @Value("${local.petrel.server.port}")
  int port;

  @Autowired
  PetrelServerLifecycle lifecycle;

  @Test
  void theBoundPortIsInTheEnvironment() {
    assertThat(port).isPositive().isEqualTo(lifecycle.port());
    try (RpcClient client = RpcClient.builder().address("127.0.0.1", port).build()) {
      assertThat(client.unaryCall(EchoService.ECHO, "over 127.0.0.1")).isEqualTo("over 127.0.0.1");
    }
  }

  @Test
  void aContextStoppedAndStartedAgainPublishesTheNewPort() {
    new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(PetrelAutoConfiguration.class))
        .withUserConfiguration(App.class)
        .withPropertyValues("petrel.server.port=0", "petrel.server.address=127.0.0.1").run(context -> {
          PetrelServerLifecycle server = context.getBean(PetrelServerLifecycle.class);
          int first = server.port();
          assertThat(context.getEnvironment().getProperty("local.petrel.server.port", Integer.class))
              .isEqualTo(first);
          context.getSourceApplicationContext().stop();
          context.getSourceApplicationContext().start();
          assertThat(context.getEnvironment().getProperty("local.petrel.server.port", Integer.class))
              .isEqualTo(server.port());
        });
  }
}
