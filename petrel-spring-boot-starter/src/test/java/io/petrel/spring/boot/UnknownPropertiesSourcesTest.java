package io.petrel.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * Valid configurations the unknown-property check must not reject: relaxed forms, YAML maps, environment variables
 * (a review found Kubernetes service-link variables failed the start).
 */
class UnknownPropertiesSourcesTest {
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(PetrelAutoConfiguration.class))
      .withUserConfiguration(PetrelAutoConfigurationTest.Echo.class)
      .withPropertyValues("petrel.server.port=0", "petrel.server.address=127.0.0.1");

  private ApplicationContextRunner env(Map<String, Object> vars) {
    return runner.withInitializer(c -> c.getEnvironment().getPropertySources().addFirst(
        new SystemEnvironmentPropertySource(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, vars)));
  }

  private static void started(org.springframework.boot.test.context.assertj.AssertableApplicationContext c) {
    if (c.getStartupFailure() != null) {
      for (Throwable t = c.getStartupFailure(); t != null; t = t.getCause()) {
        System.out.println("start failure: " + t);
      }
    }
    assertThat(c).hasNotFailed();
  }

  @Test
  void bracketedClientNameAndAttributeKeysWithDots() {
    runner.withPropertyValues("petrel.clients[orders.v2].target=127.0.0.1:7000",
        "petrel.clients.a.target=127.0.0.1:7000",
        "petrel.clients.a.endpoint-filter.attributes[topology.kubernetes.io/zone]=eu",
        "petrel.clients.a.endpointFilter.attributes.group=blue",
        "petrel.clients.a.endpoint_filter.version=1").run(UnknownPropertiesSourcesTest::started);
  }

  @Test
  void yamlStyleNestedMapSource() {
    Map<String, Object> yaml = new LinkedHashMap<>();
    yaml.put("petrel.clients.a.target", "127.0.0.1:7000");
    yaml.put("petrel.clients.a.endpoint-filter.attributes.group", "blue");
    yaml.put("petrel.clients.a.endpoint-filter.attributes.tier.level", "gold");
    yaml.put("petrel.server.tls.enabled", "false");
    runner.withInitializer(c -> c.getEnvironment().getPropertySources().addLast(
        new MapPropertySource("applicationConfig: [classpath:/application.yml]", yaml)))
        .run(UnknownPropertiesSourcesTest::started);
  }

  @Test
  void environmentVariablesForAClientAndItsAttributes() {
    env(Map.of("PETREL_CLIENTS_ORDERS_TARGET", "127.0.0.1:7000",
        "PETREL_CLIENTS_ORDERS_ENDPOINTFILTER_ATTRIBUTES_GROUP", "blue",
        "PETREL_CLIENTS_ORDERS_TLS_ENABLED", "true", "PETREL_CLIENTS_ORDERS_TLS_SERVERNAME", "greeter.default.svc",
        "PETREL_SERVER_HEALTH_ENABLED", "true")).run(UnknownPropertiesSourcesTest::started);
  }

  /** Kubernetes service links of a Service named petrel-server-headless (enableServiceLinks is on by default). */
  @Test
  void kubernetesServiceLinksOfAServiceNamedPetrelServerSomething() {
    env(Map.of("PETREL_SERVER_HEADLESS_SERVICE_HOST", "10.0.0.7", "PETREL_SERVER_HEADLESS_SERVICE_PORT", "7000",
        "PETREL_SERVER_HEADLESS_PORT", "tcp://10.0.0.7:7000")).run(UnknownPropertiesSourcesTest::started);
  }
}
