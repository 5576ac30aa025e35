package io.petrel.examples.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.registry.zookeeper.ZooKeeperRegistry;
import io.petrel.sample.boot.Frontdesk;
import io.petrel.sample.boot.FrontdeskRpc;
import io.petrel.sample.boot.FrontdeskService;
import io.petrel.spring.boot.PetrelAutoConfiguration;
import io.petrel.spring.boot.PetrelServerCustomizer;
import io.petrel.spring.boot.PetrelServerLifecycle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/**
 * docs/spring-boot.md's "Registering in ZooKeeper", run: a Boot application with the doc's {@code Registration}
 * configuration (copied here as the doc has it) registers its service in a ZooKeeper (Curator's TestingServer), a
 * client following {@code zk://} calls it, and when the context closes the server is deregistered and has
 * terminated while the registry is still open, which is closed after it.
 */
class SpringBootZooKeeperTest {

  /** As in docs/spring-boot.md. */
  @Configuration
  static class Registration {
    @Bean(destroyMethod = "close")                    // closed after the server has stopped: see below
    ZooKeeperRegistry zooKeeperRegistry(@Value("${zookeeper.connect}") String connectString) {
      return ZooKeeperRegistry.builder().connectString(connectString).build();
    }

    @Bean
    PetrelServerCustomizer registerInZooKeeper(ZooKeeperRegistry registry) {
      return server -> server
          .addLifecycleListener(registry.registrar("sample.Frontdesk").version("2.3.0").build())
          .drainDelay(Duration.ofSeconds(1));           // deregistered 1 s before the GOAWAY
    }
  }

  /** What held when the context began destroying its beans (before the registry, which it depends on). */
  static final class Witness implements AutoCloseable {
    final List<String> seen = new ArrayList<>();
    private final PetrelServerLifecycle lifecycle;
    private final ZooKeeperRegistry registry;

    Witness(PetrelServerLifecycle lifecycle, ZooKeeperRegistry registry) {
      this.lifecycle = lifecycle;
      this.registry = registry;
    }

    @Override
    public void close() throws Exception {
      RpcServer server = Objects.requireNonNull(lifecycle.server(), "server");
      seen.add("server terminated: " + server.isTerminated());
      seen.add("registry: " + registry.curator().getState());
      seen.add("node: " + registry.curator().getChildren().forPath(registry.servicePath("sample.Frontdesk")));
    }
  }

  @Configuration
  @ImportAutoConfiguration(PetrelAutoConfiguration.class)
  @Import({Registration.class, FrontdeskService.class})
  static class App {
    @Bean
    Witness witness(PetrelServerLifecycle lifecycle, ZooKeeperRegistry registry) {
      return new Witness(lifecycle, registry);
    }
  }

  @Test
  void theServerRegistersIsCalledThroughZooKeeperAndDeregistersBeforeTheRegistryCloses() throws Exception {
    try (TestingServer zk = new TestingServer()) {
      ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class)
          .web(WebApplicationType.NONE)
          // Not the sample's application.properties (on this class path): port 7000 and a client of its own.
          .run("--spring.config.name=spring-boot-zookeeper-test", "--petrel.server.port=0",
              "--petrel.server.address=127.0.0.1", "--zookeeper.connect=" + zk.getConnectString());
      Witness witness = context.getBean(Witness.class);
      ZooKeeperRegistry registry = context.getBean(ZooKeeperRegistry.class);
      try {
        int port = context.getBean(PetrelServerLifecycle.class).port();
        assertThat(registry.curator().getChildren().forPath(registry.servicePath("sample.Frontdesk")))
            .containsExactly("127.0.0.1:" + port);
        try (RpcClient client = RpcClient.builder()
            .target("zk://" + zk.getConnectString() + "/petrel/sample.Frontdesk")
            .endpointFilter(e -> "2.3.0".equals(e.version())).build()) {
          Frontdesk frontdesk = FrontdeskRpc.stub(client);
          assertThat(frontdesk.welcome("Ada")).isEqualTo("Welcome, Ada");
        }
      } finally {
        context.close();
      }
      assertThat(witness.seen).containsExactly("server terminated: true", "registry: STARTED", "node: []");
      assertThat(registry.curator().getState()).isEqualTo(CuratorFrameworkState.STOPPED);
    }
  }
}
