package io.petrel.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * A misspelt property under {@code petrel.server.} or {@code petrel.clients.<name>.} fails the start naming it and
 * the known property nearest to it, rather than being ignored (and its default used).
 */
class PetrelUnknownPropertiesTest {
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(PetrelAutoConfiguration.class))
      .withUserConfiguration(PetrelAutoConfigurationTest.Echo.class)
      .withPropertyValues("petrel.server.port=0", "petrel.server.address=127.0.0.1");

  /** The messages of the start's failure and its causes, outermost first. */
  private static List<String> messages(AssertableApplicationContext context) {
    assertThat(context).hasFailed();
    List<String> out = new ArrayList<>();
    for (Throwable t = context.getStartupFailure(); t != null && out.size() < 20; t = t.getCause()) {
      out.add(String.valueOf(t.getMessage()));
    }
    return out;
  }

  @Test
  void aMisspeltServerPropertyFailsTheStartNamingItAndTheNearestKnownOne() {
    runner.withPropertyValues("petrel.server.busines-threads=4").run(context -> assertThat(messages(context))
        .anySatisfy(m -> assertThat(m).startsWith("petrel.server.busines-threads=4 is not a known property")
            .contains("(did you mean petrel.server.business-threads?)", "docs/spring-boot.md lists every")));
  }

  @Test
  void aMisspeltServerPropertyFailsTheStartEvenWithTheServerSwitchedOff() {
    runner.withPropertyValues("petrel.server.enabled=false", "petrel.server.busines-threads=4")
        .run(context -> assertThat(messages(context)).anySatisfy(m -> assertThat(m)
            .startsWith("petrel.server.busines-threads=4 is not a known property")));
  }

  @Test
  void aMisspeltNestedPropertyIsNamedWithTheNearestOfItsOwnGroup() {
    runner.withPropertyValues("petrel.server.tls.enabeld=true").run(context -> assertThat(messages(context))
        .anySatisfy(m -> assertThat(m).startsWith("petrel.server.tls.enabeld=true is not a known property")
            .contains("(did you mean petrel.server.tls.enabled?)")));
  }

  @Test
  void aMisspeltClientPropertyFailsTheStart() {
    runner.withPropertyValues("petrel.clients.accounts.target=127.0.0.1:7000",
        "petrel.clients.accounts.default-deadlin=50ms").run(context -> assertThat(messages(context))
            .anySatisfy(m -> assertThat(m).startsWith("petrel.clients.accounts.default-deadlin=50ms is not a known")
                .contains("(did you mean petrel.clients.accounts.default-deadline?)")));
  }

  @Test
  void aClientWhoseOnlyKeyIsMisspeltIsNamedForTheTypoNotAsAMissingClient() {
    runner.withUserConfiguration(AccountsCaller.class).withPropertyValues("petrel.clients.accounts.targt=h:7000")
        .run(context -> {
          List<String> messages = messages(context);
          assertThat(messages).anySatisfy(m -> assertThat(m)
              .contains("petrel.clients.accounts.targt=h:7000 is not a known property")
              .contains("(did you mean petrel.clients.accounts.target?)"));
          assertThat(messages).noneSatisfy(m -> assertThat(m).contains("no Petrel client named"));
        });
  }

  static class AccountsCaller {
    @PetrelClient("accounts")
    io.petrel.rpc.RpcClient accounts;
  }

  @Test
  void severalAreNamedTogetherAndOneFarFromAnyHasNoSuggestion() {
    runner.withPropertyValues("petrel.server.busines-threads=4", "petrel.server.zzzzzzzz=1")
        .run(context -> assertThat(messages(context)).anySatisfy(m -> assertThat(m)
            .contains("petrel.server.busines-threads=4 is not a known property")
            .contains("petrel.server.zzzzzzzz=1 is not a known property")
            .doesNotContain("zzzzzzzz=1 is not a known property (did you mean")
            .contains("Correct or remove them")));
  }

  @Test
  void knownPropertiesInEveryGroupAndOtherPetrelPropertiesStart() {
    runner.withPropertyValues("petrel.server.business-threads=4", "petrel.server.tls.client-auth=NONE",
        "petrel.server.health.enabled=true", "petrel.server.shutdownGracePeriod=5s",
        "petrel.server.exception-details=all",
        "petrel.clients.a.target=127.0.0.1:7000", "petrel.clients.a.endpoint-filter.attributes.group=blue",
        "petrel.clients.a.endpoint-filter.attributes.[app_tier]=gold", "petrel.clients.a.tls.enabled=false",
        "petrel.health.clients-affect-status=true", "petrel.observation.enabled=false", "petrel.something.else=1")
        .run(context -> assertThat(context).hasNotFailed());
  }

  private ApplicationContextRunner withEnvironmentVariable(String name, String value) {
    return runner.withInitializer(c -> c.getEnvironment().getPropertySources().addFirst(
        new SystemEnvironmentPropertySource(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
            Map.<String, Object>of(name, value))));
  }

  /**
   * Environment variables set options, and are not checked: Kubernetes adds variables for every Service of the
   * namespace, and those of one named petrel-server-headless fall under petrel.server.
   */
  @Test
  void environmentVariablesSetOptionsAndAreNotChecked() {
    withEnvironmentVariable("PETREL_SERVER_BUSINESSTHREADS", "4").run(context -> {
      assertThat(context).hasNotFailed();
      assertThat(context.getBean(PetrelProperties.class).getServer().getBusinessThreads()).isEqualTo(4);
    });
    withEnvironmentVariable("PETREL_SERVER_BUSINESTHREADS", "4").run(context -> assertThat(context).hasNotFailed());
    withEnvironmentVariable("PETREL_HOME", "/opt/petrel").run(context -> assertThat(context).hasNotFailed());
  }
}
