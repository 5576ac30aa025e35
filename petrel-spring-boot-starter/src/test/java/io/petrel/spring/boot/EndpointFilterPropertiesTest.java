package io.petrel.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.petrel.rpc.Endpoint;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import java.util.HashSet;
import java.util.Set;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * {@code petrel.clients.<name>.endpoint-filter.*}: of the endpoints a static:// target lists (three real servers on
 * 127.0.0.1, each answering with its own name), the client calls only those whose version, zone and attributes
 * equal every one set; none matching fails its calls with UNAVAILABLE naming the properties; a
 * {@link PetrelClientCustomizer}'s filter replaces the properties'.
 */
class EndpointFilterPropertiesTest {
  /** old: 1.0 in eu-west-1a, group blue; green: 2.3.0 in eu-west-1a, group green; blue: 2.3.0 in eu-west-1b. */
  private static RpcServer old;
  private static RpcServer green;
  private static RpcServer blue;
  private static String target;

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(PetrelAutoConfiguration.class))
      .withPropertyValues("petrel.server.enabled=false", "petrel.clients.echo.target=" + target,
          "petrel.clients.echo.default-deadline=5s");

  @BeforeAll
  static void startServers() throws Exception {
    old = server("old");
    green = server("green");
    blue = server("blue");
    target = "static://127.0.0.1:" + old.port() + ";version=1.0;zone=eu-west-1a;group=blue,"
        + "127.0.0.1:" + green.port() + ";version=2.3.0;zone=eu-west-1a;group=green,"
        + "127.0.0.1:" + blue.port() + ";version=2.3.0;zone=eu-west-1b;group=blue";
  }

  private static RpcServer server(String name) throws Exception {
    ServiceDefinition answersItsName = ServiceDefinition.builder(EchoService.NAME)
        .unary(EchoService.ECHO, request -> name).build();
    return RpcServer.builder().bindAddress("127.0.0.1", 0).addService(answersItsName).build().start();
  }

  @AfterAll
  static void stopServers() {
    for (RpcServer s : new RpcServer[] {old, green, blue}) {
      if (s != null) {
        s.shutdownNow();
      }
    }
  }

  /** The servers that answered 30 calls of the client {@code echo}. */
  private static Set<String> answered(RpcClient client) throws Exception {
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < 30; i++) {
      seen.add(client.unaryCall(EchoService.ECHO, "who"));
    }
    return seen;
  }

  @Test
  void withoutFilterPropertiesEveryListedServerIsCalled() {
    runner.run(context -> assertThat(answered(context.getBean(PetrelClients.class).client("echo")))
        .containsExactlyInAnyOrder("old", "green", "blue"));
  }

  @Test
  void aVersionCallsOnlyTheServersOfThatVersion() {
    runner.withPropertyValues("petrel.clients.echo.endpoint-filter.version=2.3.0").run(context ->
        assertThat(answered(context.getBean(PetrelClients.class).client("echo")))
            .containsExactlyInAnyOrder("green", "blue"));
  }

  @Test
  void versionZoneAndAttributesMustAllMatch() {
    runner.withPropertyValues("petrel.clients.echo.endpoint-filter.version=2.3.0",
        "petrel.clients.echo.endpoint-filter.attributes.group=blue").run(context ->
            assertThat(answered(context.getBean(PetrelClients.class).client("echo"))).containsExactly("blue"));
    runner.withPropertyValues("petrel.clients.echo.endpoint-filter.zone=eu-west-1a",
        "petrel.clients.echo.endpoint-filter.attributes.group=blue").run(context ->
            assertThat(answered(context.getBean(PetrelClients.class).client("echo"))).containsExactly("old"));
  }

  @Test
  void noMatchingServerFailsCallsWithUnavailableNamingTheProperties() {
    runner.withPropertyValues("petrel.clients.echo.endpoint-filter.version=2.3.0",
        "petrel.clients.echo.endpoint-filter.zone=us-east-1a").run(context -> {
          assertThat(context).hasNotFailed();
          RpcClient client = context.getBean(PetrelClients.class).client("echo");
          assertThatThrownBy(() -> client.unaryCall(EchoService.ECHO, "who"))
              .isInstanceOfSatisfying(StatusException.class, e -> {
                assertThat(e.code()).isEqualTo(Status.Code.UNAVAILABLE);
                assertThat(e.getMessage()).contains("its resolver lists 3 endpoints and the client's endpointFilter"
                    + " petrel.clients.echo.endpoint-filter (version=2.3.0, zone=us-east-1a) leaves out every one");
              });
        });
  }

  @Configuration(proxyBeanMethods = false)
  static class GreenOnly {
    @Bean
    PetrelClientCustomizer greenOnly() {
      return (name, builder) -> builder.endpointFilter(e -> "green".equals(e.attribute("group")));
    }
  }

  /** Properties first, then customizers: the customizer's filter is the one used, not both. */
  @Test
  void aCustomizersFilterReplacesTheProperties() {
    runner.withUserConfiguration(GreenOnly.class).run(context ->
        assertThat(answered(context.getBean(PetrelClients.class).client("echo"))).containsExactly("green"));
    runner.withUserConfiguration(GreenOnly.class)
        .withPropertyValues("petrel.clients.echo.endpoint-filter.version=1.0").run(context ->
            assertThat(answered(context.getBean(PetrelClients.class).client("echo"))).containsExactly("green"));
  }

  /** A filter of the application's own, with a readable name. */
  record GroupIs(String group) implements Predicate<Endpoint> {
    @Override
    public boolean test(Endpoint e) {
      return group.equals(e.attribute("group"));
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class BlueAndTheProperties {
    @Bean
    PetrelClientCustomizer blueAndTheProperties(PetrelProperties properties) {
      return (name, builder) -> builder.endpointFilter(
          PropertiesEndpointFilter.of(properties, name).and(new GroupIs("blue")));
    }
  }

  /**
   * A customizer that combines its filter with the properties' ({@code PropertiesEndpointFilter.of(...).and(...)})
   * calls only the endpoints both accept, and the client's messages name both.
   */
  @Test
  void aCustomizerCombinesItsFilterWithTheProperties() {
    runner.withUserConfiguration(BlueAndTheProperties.class)
        .withPropertyValues("petrel.clients.echo.endpoint-filter.version=2.3.0").run(context ->
            assertThat(answered(context.getBean(PetrelClients.class).client("echo"))).containsExactly("blue"));
    runner.withUserConfiguration(BlueAndTheProperties.class).run(context ->
        assertThat(answered(context.getBean(PetrelClients.class).client("echo")))
            .as("no property set: the customizer's alone").containsExactlyInAnyOrder("old", "blue"));
    runner.withUserConfiguration(BlueAndTheProperties.class)
        .withPropertyValues("petrel.clients.echo.endpoint-filter.zone=us-east-1a").run(context -> {
          RpcClient client = context.getBean(PetrelClients.class).client("echo");
          assertThatThrownBy(() -> client.unaryCall(EchoService.ECHO, "who"))
              .isInstanceOfSatisfying(StatusException.class, e -> assertThat(e.getMessage()).contains(
                  "the client's endpointFilter petrel.clients.echo.endpoint-filter (zone=us-east-1a) and"
                      + " GroupIs[group=blue] leaves out every one"));
        });
  }

  @Test
  void ofNamesAnUnknownClientAndIsEmptyWithNothingSet() {
    PetrelProperties properties = new PetrelProperties();
    properties.getClients().put("a", new PetrelProperties.Client());
    PropertiesEndpointFilter none = PropertiesEndpointFilter.of(properties, "a");
    assertThat(none.isEmpty()).isTrue();
    assertThat(none).hasToString("petrel.clients.a.endpoint-filter (none set: every endpoint)");
    assertThat(none.and(new GroupIs("blue"))).hasToString("GroupIs[group=blue]");
    assertThatThrownBy(() -> PropertiesEndpointFilter.of(properties, "b"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("no Petrel client named 'b': configure petrel.clients.b.target (configured: [a])");
  }

  @Test
  void theFiltersNameSaysEverythingSetAttributesSorted() {
    PetrelProperties.EndpointFilter p = new PetrelProperties.EndpointFilter();
    assertThat(PetrelBuilders.endpointFilter("petrel.clients.a.endpoint-filter", p)).as("nothing set").isNull();
    p.setVersion("2.3.0");
    p.setZone("eu-west-1a");
    p.getAttributes().put("rack", "r7");
    p.getAttributes().put("group", "blue");
    assertThat(PetrelBuilders.endpointFilter("petrel.clients.a.endpoint-filter", p)).hasToString(
        "petrel.clients.a.endpoint-filter (version=2.3.0, zone=eu-west-1a, attributes {group=blue, rack=r7})");
  }
}
