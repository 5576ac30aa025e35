package io.petrel.rpc.transport.netty;

import static org.assertj.core.api.Assertions.assertThat;

import io.petrel.rpc.RpcServer;
import io.petrel.rpc.health.HealthService;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The health probe over TCP, as a container's exec check runs it: SERVING while the server serves, NOT_SERVING
 * through its drain delay (it still answers), and NOT_SERVING with the reason once nothing listens.
 */
class HealthProbeTest extends TransportFixture {
  @Test
  void theProbeSeesServingThenDrainingThenNothing() throws Exception {
    HealthService health = HealthService.create();
    RpcServer server = startServer(b -> b.addService(health.definition())
        .addLifecycleListener(health).drainDelay(Duration.ofSeconds(30)));
    String target = "127.0.0.1:" + server.port();
    assertThat(probe(target)).isEqualTo("0 SERVING");
    assertThat(probe(target, "test.Echo")).isEqualTo("0 SERVING");
    server.shutdown(); // drains for 30 s before GOAWAY: a readiness probe sees it first
    assertThat(probe(target)).isEqualTo("1 NOT_SERVING");
    server.shutdownNow();
    assertThat(server.awaitTermination(20, TimeUnit.SECONDS)).isTrue();
    assertThat(probe(target, "", "1000")).startsWith("3 UNAVAILABLE: ");
  }

  private static String probe(String... args) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    int code = HealthService.probe(args, new PrintStream(bytes, true, StandardCharsets.UTF_8));
    return code + " " + bytes.toString(StandardCharsets.UTF_8).trim();
  }
}
