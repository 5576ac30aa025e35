package io.petrel.rpc.transport.netty;

import static org.assertj.core.api.Assertions.assertThat;

import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.ServerInterceptor;
import io.petrel.rpc.Status;
import io.petrel.rpc.TlsConfig;
import io.petrel.rpc.health.HealthService;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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

  /**
   * A server that requires a client certificate and a bearer token: the probe reaches it with the TLS options and
   * a header (as grpc_health_probe's -tls-ca-cert, -tls-client-cert, -tls-client-key and -rpc-header), and
   * without them says why it could not ask (exit 3).
   */
  @Test
  void theProbeSpeaksMutualTlsAndSendsHeaders(@TempDir Path dir) throws Exception {
    TestCertificates.Authority ca = TestCertificates.Authority.create("Probe Test CA");
    Path caPem = ca.write(dir.resolve("ca.pem"));
    TestCertificates.PemFiles server = ca.issue("server", "localhost", "127.0.0.1").written(dir, "server");
    TestCertificates.PemFiles client = ca.issue("probe").written(dir, "probe");
    HealthService health = HealthService.create();
    ServerInterceptor token = new ServerInterceptor() {
      @Override
      public <Req, Resp> CompletionStage<Resp> intercept(Chain<Req, Resp> chain) throws Exception {
        if (!"Bearer s3cret".equals(ServerContext.current().metadata().get("authorization"))) {
          throw Status.UNAUTHENTICATED.withDescription("no valid token").asException();
        }
        return chain.proceed();
      }
    };
    RpcServer srv = startServer(b -> b.addService(health.definition()).addLifecycleListener(health)
        .intercept(token).tls(TlsConfig.builder().keyPair(server.certificate(), server.key())
            .trustCertificates(caPem).clientAuth(TlsConfig.ClientAuth.REQUIRE).build()));
    String target = "127.0.0.1:" + srv.port();
    String[] tls = {"--tls-ca-cert", caPem.toString(), "--tls-client-cert=" + client.certificate(),
        "--tls-client-key", client.key().toString()};
    String header = "authorization: Bearer s3cret";
    assertThat(probe(join(tls, "--header", header, target))).isEqualTo("0 SERVING");
    assertThat(probe(join(tls, "--header=" + header, target, "test.Echo", "3000"))).isEqualTo("0 SERVING");
    assertThat(probe(join(tls, target, "", "3000"))).isEqualTo("3 UNAUTHENTICATED: no valid token");
    // A probe that does not speak the server's TLS is refused (UNAVAILABLE) well before its deadline; 10 s, not
    // 3, because a cold handshake on a loaded 2-core machine took over 3 s once (DEADLINE_EXCEEDED instead).
    assertThat(probe("--header", header, target, "", "10000")).startsWith("3 UNAVAILABLE: ");
    assertThat(probe("--tls-ca-cert", caPem.toString(), "--header", header, target, "", "10000"))
        .startsWith("3 UNAVAILABLE: ");
    // Usage errors: exit 2 saying what is wrong.
    assertThat(probe("--tls-client-cert", client.certificate().toString(), target))
        .startsWith("2 --tls-client-cert and --tls-client-key go together");
    assertThat(probe("--tls-ca-cert", dir.resolve("missing.pem").toString(), target))
        .startsWith("2 --tls-ca-cert: cannot read ");
    assertThat(probe("--header", "no-colon", target)).startsWith("2 --header takes 'NAME: VALUE'");
    assertThat(probe("--tsl", target)).startsWith("2 unknown option --tsl");
    assertThat(probe("--tls-ca-cert")).startsWith("2 --tls-ca-cert needs a value");
    assertThat(probe("--tls=yes", target)).startsWith("2 --tls takes no value");
  }

  /**
   * A server reached at 127.0.0.1 whose certificate names only its service's name: {@code --tls-server-name}
   * expects that name, where without it the probe could not ask.
   */
  @Test
  void theProbeExpectsTheServerNameItIsGiven(@TempDir Path dir) throws Exception {
    TestCertificates.Authority ca = TestCertificates.Authority.create("Probe Test CA");
    Path caPem = ca.write(dir.resolve("ca.pem"));
    TestCertificates.PemFiles server = ca.issue("greeter", "greeter.default.svc").written(dir, "server");
    HealthService health = HealthService.create();
    RpcServer srv = startServer(b -> b.addService(health.definition()).addLifecycleListener(health)
        .tls(TlsConfig.builder().keyPair(server.certificate(), server.key()).build()));
    String target = "127.0.0.1:" + srv.port();
    assertThat(probe("--tls-ca-cert", caPem.toString(), "--tls-server-name", "greeter.default.svc", target))
        .isEqualTo("0 SERVING");
    assertThat(probe("--tls-ca-cert", caPem.toString(), target, "", "3000"))
        .startsWith("3 UNAVAILABLE: ").contains("does not match the host name '127.0.0.1'");
    assertThat(probe("--tls-ca-cert", caPem.toString(), "--tls-server-name=other.default.svc", target, "", "3000"))
        .startsWith("3 UNAVAILABLE: ").contains("'other.default.svc' the client expects");
    assertThat(probe("--tls-server-name", "greeter.default.svc:7000", target))
        .startsWith("2 serverName is the name the server's certificate must carry");
  }

  private static String[] join(String[] first, String... rest) {
    String[] all = java.util.Arrays.copyOf(first, first.length + rest.length);
    System.arraycopy(rest, 0, all, first.length, rest.length);
    return all;
  }

  private static String probe(String... args) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    int code = HealthService.probe(args, new PrintStream(bytes, true, StandardCharsets.UTF_8));
    return code + " " + bytes.toString(StandardCharsets.UTF_8).trim();
  }
}
