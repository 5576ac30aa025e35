package io.petrel.rpc.transport.netty;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.StringValue;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.dns.DnsNameResolver;
import java.net.InetAddress;
import java.time.Duration;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The dns scheme against real servers on loopback: lookups through the JVM, and a refresh on a lost connection. */
class DnsResolverTest extends TransportFixture {

  @Test
  void aDnsTargetOfLocalhostReachesAServerOnLoopback() throws Exception {
    RpcServer server = startServer();
    // localhost may also resolve to ::1, where nothing listens: that endpoint is skipped.
    RpcClient client = client(server.port(), b -> b.target("dns:///localhost:" + server.port()));
    for (int i = 0; i < 20; i++) {
      assertThat(client.unaryCall(TestService.ECHO, StringValue.of("hi " + i)).getValue()).isEqualTo("hi " + i);
    }
  }

  @Test
  void aLostConnectionMakesTheResolverLookTheNameUpAgain() throws Exception {
    RpcServer server = startServer();
    LinkedBlockingQueue<String> lookups = new LinkedBlockingQueue<>();
    DnsNameResolver resolver = DnsNameResolver.builder("greeter.test", server.port())
        .refreshInterval(Duration.ofHours(1)).minRefreshInterval(Duration.ofMillis(10)).lookup(host -> {
          lookups.add(host);
          return new InetAddress[] {InetAddress.getByName("127.0.0.1")};
        }).build();
    RpcClient client = client(server.port(), b -> b.nameResolver("dns:///greeter.test:" + server.port(), resolver));
    assertThat(lookups.take()).isEqualTo("greeter.test"); // when the client was built
    assertThat(client.unaryCall(TestService.ECHO, StringValue.of("up")).getValue()).isEqualTo("up");
    assertThat(lookups).isEmpty();

    server.shutdownNow(); // the connection is lost
    assertThat(lookups.poll(10, TimeUnit.SECONDS)).as("looked up again after the connection was lost, long"
        + " before the hour of the period").isEqualTo("greeter.test");
  }
}
