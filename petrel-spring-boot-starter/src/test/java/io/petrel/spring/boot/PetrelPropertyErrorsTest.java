package io.petrel.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.MapPropertySource;

/**
 * A {@code petrel.*} value the builder refuses fails the application's start naming the property and the value as
 * written, and what to do; the builder's own exception (which names its Java method) stays the cause. A value a
 * {@link PetrelServerCustomizer} set is not blamed on the properties.
 */
class PetrelPropertyErrorsTest {
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(PetrelAutoConfiguration.class))
      .withUserConfiguration(PetrelAutoConfigurationTest.Echo.class)
      .withPropertyValues("petrel.server.port=0", "petrel.server.address=127.0.0.1");

  /** The start's failure and its causes, outermost first. */
  private static List<Throwable> chain(AssertableApplicationContext context) {
    assertThat(context).hasFailed();
    List<Throwable> out = new ArrayList<>();
    for (Throwable t = context.getStartupFailure(); t != null && !out.contains(t); t = t.getCause()) {
      out.add(t);
    }
    return out;
  }

  /** The one exception of the chain whose message starts with {@code start}; its cause has {@code builderSaid}. */
  private static void saysPropertyFirst(AssertableApplicationContext context, String start, String builderSaid) {
    assertThat(chain(context)).filteredOn(t -> String.valueOf(t.getMessage()).startsWith(start))
        .as("an exception saying %s", start).singleElement().satisfies(t -> {
          assertThat(t.getMessage()).contains(builderSaid);
          assertThat(t.getCause()).as("the builder's own exception").isInstanceOf(IllegalArgumentException.class)
              .hasMessageStartingWith(builderSaid);
        });
  }

  @Test
  void aServerSizeTheBuilderRefusesNamesThePropertyAndItsValue() {
    runner.withPropertyValues("petrel.server.max-frame-size=-1").run(context -> {
      saysPropertyFirst(context, "petrel.server.max-frame-size=-1 is refused: ", "maxFrameSize must be >= 64: -1");
      assertThat(context.getStartupFailure()).hasStackTraceContaining(
          "change petrel.server.max-frame-size, or remove it to keep the default");
    });
  }

  @Test
  void aServerDurationTheBuilderRefusesNamesThePropertyAsWritten() {
    runner.withPropertyValues("petrel.server.shutdown-grace-period=-3s").run(context -> saysPropertyFirst(context,
        "petrel.server.shutdown-grace-period=-3s is refused: ", "shutdownGracePeriod must be >= 0"));
  }

  @Test
  void anOptionOfTwoPropertiesNamesTheOneSet() {
    runner.withPropertyValues("petrel.server.keep-alive-timeout=0s").run(context -> saysPropertyFirst(context,
        "petrel.server.keep-alive-timeout=0s is refused: ", "keepAlive timeout must be > 0"));
  }

  @Test
  void aPortOutOfRangeNamesTheProperty() {
    runner.withPropertyValues("petrel.server.port=70000").run(context -> saysPropertyFirst(context,
        "petrel.server.port=70000 is refused: ", "port must be 0..65535: 70000"));
  }

  @Test
  void aClientValueTheBuilderRefusesNamesTheClientsProperty() {
    runner.withPropertyValues("petrel.clients.orders.target=127.0.0.1:1", "petrel.clients.orders.max-frame-size=-1")
        .withBean(PetrelAutoConfigurationTest.Caller.class)
        .run(context -> saysPropertyFirst(context, "petrel.clients.orders.max-frame-size=-1 is refused: ",
            "maxFrameSize must be >= 64: -1"));
    runner.withPropertyValues("petrel.clients.orders.target=127.0.0.1:1",
        "petrel.clients.orders.reconnect-backoff-initial=5s", "petrel.clients.orders.reconnect-backoff-max=1s")
        .withBean(PetrelAutoConfigurationTest.Caller.class)
        .run(context -> saysPropertyFirst(context, "petrel.clients.orders.reconnect-backoff-initial=5s,"
            + " petrel.clients.orders.reconnect-backoff-max=1s are refused: ", "reconnectBackoff needs"));
  }

  /** A liveness-timeout out of the builder's range (ZERO, or 100 ms to 24 days) fails the start naming it. */
  @Test
  void aClientLivenessTimeoutOutOfRangeNamesItsProperty() {
    ApplicationContextRunner client = runner.withPropertyValues("petrel.clients.echo.target=127.0.0.1:1")
        .withBean(PetrelAutoConfigurationTest.Caller.class);
    client.withPropertyValues("petrel.clients.echo.liveness-timeout=50ms").run(context -> saysPropertyFirst(context,
        "petrel.clients.echo.liveness-timeout=50ms is refused: ",
        "livenessTimeout must be ZERO (off) or 100 ms to 24 days: PT0.05S (a connection whose PING does not come"
            + " back within it is reset: shorter than a round trip, it would reset live connections)"));
    client.withPropertyValues("petrel.clients.echo.liveness-timeout=25d").run(context -> saysPropertyFirst(context,
        "petrel.clients.echo.liveness-timeout=25d is refused: ",
        "livenessTimeout must be ZERO (off) or 100 ms to 24 days: PT600H"));
  }

  /** An endpoint-filter value that would leave out every endpoint by mistake fails the start naming it. */
  @Test
  void anEndpointFilterValueNoEndpointCouldMatchNamesItsProperty() {
    ApplicationContextRunner client = runner.withPropertyValues("petrel.clients.orders.target=127.0.0.1:1")
        .withBean(PetrelAutoConfigurationTest.Caller.class);
    client.withPropertyValues("petrel.clients.orders.endpoint-filter.version=").run(context -> assertThat(context)
        .hasFailed().getFailure().rootCause().hasMessage("petrel.clients.orders.endpoint-filter.version is blank,"
            + " which no endpoint matches: set it to the version to call, e.g. 2.3.0, or remove it to call every"
            + " version"));
    client.withPropertyValues("petrel.clients.orders.endpoint-filter.attributes.group= ").run(context ->
        assertThat(context).hasFailed().getFailure().rootCause().hasMessageStartingWith(
            "petrel.clients.orders.endpoint-filter.attributes.group is blank"));
    // A quoted YAML value, an environment variable or --petrel...="eu-west-1a " keeps its spaces (test property
    // values are trimmed, so it is set as a property source of its own).
    client.withInitializer(c -> c.getEnvironment().getPropertySources().addFirst(new MapPropertySource("spaced",
        Map.of("petrel.clients.orders.endpoint-filter.zone", "eu-west-1a ")))).run(context ->
        assertThat(context).hasFailed().getFailure().rootCause().hasMessageStartingWith(
            "petrel.clients.orders.endpoint-filter.zone='eu-west-1a ' has spaces around it")
            .hasMessageContaining("set petrel.clients.orders.endpoint-filter.zone=eu-west-1a,"));
    client.withPropertyValues("petrel.clients.orders.endpoint-filter.attributes.version=2.3.0").run(context ->
        assertThat(context).hasFailed().getFailure().rootCause().hasMessageStartingWith(
            "petrel.clients.orders.endpoint-filter.attributes.version=2.3.0 names no attribute")
            .hasMessageEndingWith("set petrel.clients.orders.endpoint-filter.version=2.3.0 instead"));
  }

  @Test
  void serverTlsWithoutCertificateAndKeyNamesTheirProperties() {
    runner.withPropertyValues("petrel.server.tls.enabled=true").run(context -> assertThat(context)
        .hasFailed().getFailure().hasStackTraceContaining("petrel.server.tls.enabled=true needs the server's"
            + " certificate and key: set petrel.server.tls.certificate-chain and petrel.server.tls.private-key"));
  }

  /** TLS files that do not exist: refused naming the TLS properties and their values. */
  @Test
  void missingTlsFilesNameTheirProperties(@TempDir Path dir) {
    Path chain = dir.resolve("missing.pem");
    Path key = dir.resolve("missing.key");
    runner.withPropertyValues("petrel.server.tls.enabled=true", "petrel.server.tls.certificate-chain=" + chain,
        "petrel.server.tls.private-key=" + key).run(context -> saysPropertyFirst(context,
            "petrel.server.tls.certificate-chain=" + chain + ", petrel.server.tls.private-key=" + key + ": ",
            "keyPair certificate chain file"));
  }

  /**
   * TLS files that exist but are not PEM: the server reads them when it starts, and the failure names the TLS
   * properties, not the port (it said to set petrel.server.port to a free port).
   */
  @Test
  void tlsFilesTheServerCannotLoadNameTheTlsPropertiesNotThePort(@TempDir Path dir) throws Exception {
    Path chain = java.nio.file.Files.writeString(dir.resolve("chain.pem"), "not a certificate");
    Path key = java.nio.file.Files.writeString(dir.resolve("key.pem"), "not a key");
    runner.withPropertyValues("petrel.server.tls.enabled=true", "petrel.server.tls.certificate-chain=" + chain,
        "petrel.server.tls.private-key=" + key).run(context -> {
          assertThat(context).hasFailed().getFailure().hasStackTraceContaining("the Petrel server could not start")
              .hasStackTraceContaining("check the files petrel.server.tls.certificate-chain");
          assertThat(chain(context)).noneMatch(t -> String.valueOf(t.getMessage()).contains("petrel.server.port"));
        });
  }

  @Configuration(proxyBeanMethods = false)
  static class BadCustomizer {
    @Bean
    PetrelServerCustomizer tinyFrames() {
      return b -> b.maxFrameSize(-1);
    }
  }

  @Test
  void aValueACustomizerSetIsNotBlamedOnTheProperties() {
    runner.withUserConfiguration(BadCustomizer.class).run(context -> {
      assertThat(context).hasFailed().getFailure().hasStackTraceContaining("(a Petrel customizer) failed:"
          + " maxFrameSize must be >= 64: -1");
      assertThat(chain(context)).noneMatch(t -> String.valueOf(t.getMessage()).contains("properties petrel.server"));
    });
  }

  @Test
  void anInProcessTargetWithTlsFailsTheStartNamingTheClient() {
    runner.withPropertyValues("petrel.clients.x.target=inprocess:nowhere", "petrel.clients.x.tls.enabled=true")
        .run(context -> assertThat(chain(context)).anySatisfy(t -> assertThat(t.getMessage())
            .startsWith("Petrel client 'x' (properties petrel.clients.x.*): tls(...) does not apply to an"
                + " in-process client")));
  }
}
