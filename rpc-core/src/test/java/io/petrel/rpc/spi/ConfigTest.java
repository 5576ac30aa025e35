package io.petrel.rpc.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.TransportOption;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The configs a transport gets: named accessors with the builders' defaults, transport options carried and
 * checked at the builder, and the options both builders share checked the same way.
 */
class ConfigTest {
  static final TransportOption<Integer> TURBO = TransportOption.of("test.turbo", Integer.class, 7, n -> {
    if (n > 10) {
      throw new IllegalArgumentException("test.turbo must be <= 10: " + n);
    }
  });
  static final TransportOption<String> MODE = TransportOption.of("test.mode", String.class, "plain");

  @Test
  void aClientConfigCarriesTheBuildersOptionsAndEveryDefault() {
    RecordingTransport.Client c = RecordingTransport.of(RpcClient.builder().target("h:1")
        .transport("recording").name("orders").maxFrameSize(4096).connectionsPerEndpoint(3)
        .defaultDeadline(Duration.ofSeconds(2)).option(TURBO, 9).build());
    try {
      ClientConfig config = c.config;
      assertThat(config.name()).isEqualTo("orders");
      assertThat(config.target()).isEqualTo("h:1");
      assertThat(config.maxFrameSize()).isEqualTo(4096);
      assertThat(config.connectionsPerEndpoint()).isEqualTo(3);
      assertThat(config.defaultTimeoutNanos()).isEqualTo(Duration.ofSeconds(2).toNanos());
      assertThat(config.maxMetadataSize()).as("default").isEqualTo(8 * 1024);
      assertThat(config.maxPendingCalls()).as("default").isEqualTo(16384);
      assertThat(config.option(TURBO)).isEqualTo(9);
      assertThat(config.option(MODE)).as("not set: its default").isEqualTo("plain");
      assertThat(config.options()).containsOnlyKeys(TURBO);
      assertThat(config.toString()).contains("name=orders", "maxFrameSize=4096", "options={test.turbo=9}");
    } finally {
      c.shutdownNow();
    }
  }

  @Test
  void badValuesFailAtTheBuilderNamingTheOptionOnBothBuilders() {
    assertThatThrownBy(() -> RpcClient.builder().option(TURBO, 11)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("test.turbo must be <= 10: 11");
    assertThatThrownBy(() -> RpcServer.builder().option(TURBO, 11)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("test.turbo must be <= 10: 11");
    assertThatThrownBy(() -> RpcClient.builder().option(TURBO, null)).isInstanceOf(NullPointerException.class)
        .hasMessage("test.turbo");
    for (var b : new io.petrel.rpc.AbstractRpcBuilder<?>[] {RpcClient.builder(), RpcServer.builder()}) {
      assertThatThrownBy(() -> b.maxFrameSize(63)).hasMessage("maxFrameSize must be >= 64: 63");
      assertThatThrownBy(() -> b.maxMetadataSize(-1)).hasMessage("maxMetadataSize must be >= 0: -1");
      assertThatThrownBy(() -> b.name(null)).isInstanceOf(NullPointerException.class).hasMessage("name");
    }
    assertThatThrownBy(() -> TransportOption.of("test.bad", Integer.class, 11, TURBO_CHECK))
        .hasMessage("test.turbo must be <= 10: 11");
  }

  private static final java.util.function.Consumer<Integer> TURBO_CHECK = n -> {
    if (n > 10) {
      throw new IllegalArgumentException("test.turbo must be <= 10: " + n);
    }
  };

  @Test
  void serverLimitsAndConfigDefaultsAreTheBuildersDefaults() {
    ServerConfig config = ServerConfig.newBuilder().build();
    assertThat(config.limits().idleTimeoutNanos()).isEqualTo(Duration.ofMinutes(5).toNanos());
    assertThat(config.limits().maxConnectionAgeNanos()).isZero();
    assertThat(config.maxConcurrentCallsPerConnection()).isEqualTo(1000);
    assertThat(config.name()).isEqualTo("petrel-server");
    assertThat(config.option(TURBO)).isEqualTo(7);
  }
}
