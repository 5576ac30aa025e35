package io.petrel.rpc;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.petrel.rpc.health.HealthService;
import io.petrel.rpc.health.HealthService.ServingStatus;
import io.petrel.rpc.marshal.Marshallers;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link BearerTokenServerInterceptor#allowUnauthenticated}: the named services and methods run without a token,
 * everything else still needs one, and a name is matched exactly. Real calls through the in-process transport
 * (secure, so the client interceptor sends its token).
 */
class BearerTokenServerInterceptorTest {
  private static final AtomicInteger SERVERS = new AtomicInteger();
  private static final Duration TIMEOUT = Duration.ofSeconds(5);
  private static final MethodDescriptor<byte[], byte[]> WORK = method("shop.Orders", "work");
  private static final MethodDescriptor<byte[], byte[]> PING = method("shop.Orders", "ping");
  /** A service whose name starts with the health service's: not let through by "petrel.health.Health". */
  private static final MethodDescriptor<byte[], byte[]> ADMIN = method("petrel.health.HealthAdmin", "reset");

  private RpcServer server;
  private String name;

  private static MethodDescriptor<byte[], byte[]> method(String service, String method) {
    return MethodDescriptor.<byte[], byte[]>newBuilder().serviceName(service).methodName(method)
        .type(MethodType.UNARY).requestMarshaller(Marshallers.bytes()).responseMarshaller(Marshallers.bytes())
        .build();
  }

  private void start(BearerTokenServerInterceptor auth) throws Exception {
    HealthService health = HealthService.create();
    name = "bearer-token-test-" + SERVERS.incrementAndGet();
    server = RpcServer.builder().inProcess(name)
        .intercept(auth)
        .addService(ServiceDefinition.builder("shop.Orders").unary(WORK, b -> b).unary(PING, b -> b).build())
        .addService(ServiceDefinition.builder("petrel.health.HealthAdmin").unary(ADMIN, b -> b).build())
        .addService(health.definition())
        .addLifecycleListener(health)
        .build().start();
  }

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
  }

  private RpcClient client(boolean withToken) {
    RpcClientBuilder b = RpcClient.builder().inProcess(name);
    if (withToken) {
      b.intercept(BearerTokenClientInterceptor.of("s3cret"));
    }
    return b.build();
  }

  private static Status.Code outcome(RpcClient client, MethodDescriptor<byte[], byte[]> method) {
    try {
      client.unaryCall(method, "x".getBytes(UTF_8), CallOptions.DEFAULT.withTimeout(TIMEOUT));
      return Status.Code.OK;
    } catch (StatusException e) {
      return e.status().code();
    }
  }

  private static Status.Code healthOutcome(RpcClient client) {
    try {
      assertThat(HealthService.check(client, "", TIMEOUT)).isEqualTo(ServingStatus.SERVING);
      return Status.Code.OK;
    } catch (StatusException e) {
      return e.status().code();
    }
  }

  @Test
  void theHealthServicePassesWithoutATokenWhileOtherCallsStillNeedOne() throws Exception {
    start(BearerTokenServerInterceptor.of("s3cret"::equals).allowUnauthenticated(HealthService.SERVICE));
    try (RpcClient probe = client(false); RpcClient app = client(true)) {
      assertThat(healthOutcome(probe)).isEqualTo(Status.Code.OK);
      assertThat(outcome(probe, WORK)).isEqualTo(Status.Code.UNAUTHENTICATED);
      assertThat(outcome(probe, PING)).isEqualTo(Status.Code.UNAUTHENTICATED);
      // Matched exactly: a service whose name merely starts with the health service's is not let through.
      assertThat(outcome(probe, ADMIN)).isEqualTo(Status.Code.UNAUTHENTICATED);

      assertThat(healthOutcome(app)).isEqualTo(Status.Code.OK);
      assertThat(outcome(app, WORK)).isEqualTo(Status.Code.OK);
      assertThat(outcome(app, ADMIN)).isEqualTo(Status.Code.OK);
    }
  }

  /**
   * An unknown method is answered before any interceptor runs, so to a caller without a token too: the answer
   * names the id it sent and what to check, not the server's name or the services it serves (docs/security.md,
   * "What a server tells an unauthenticated peer").
   */
  @Test
  void anUnknownMethodTellsACallerWithoutATokenNothingOfTheServer() throws Exception {
    start(BearerTokenServerInterceptor.of(t -> t.equals("s3cret")));
    MethodDescriptor<byte[], byte[]> guess = method("guess.Admin", "dump");
    try (RpcClient anonymous = client(false)) {
      assertThatThrownBy(() -> anonymous.unaryCall(guess, new byte[0], CallOptions.DEFAULT.withTimeout(TIMEOUT)))
          .isInstanceOfSatisfying(StatusException.class, e -> {
            assertThat(e.status().code()).isEqualTo(Status.Code.UNIMPLEMENTED);
            String d = e.status().description();
            // The client's own prefix names the method and the address it called; the server's part follows.
            assertThat(d).startsWith("guess.Admin/dump is not implemented by inprocess:" + name + ": ");
            assertThat(d.substring(d.indexOf(": ") + 2))
                .startsWith("no method with id 0x" + Integer.toHexString(guess.id()) + " on this server")
                .contains("same version of the interface")
                .doesNotContain(name).doesNotContain("shop.Orders").doesNotContain("petrel.health");
          });
      assertThat(outcome(anonymous, WORK)).isEqualTo(Status.Code.UNAUTHENTICATED);
    }
  }

  @Test
  void withoutTheHealthServiceNamedTheProbeNeedsATokenToo() throws Exception {
    start(BearerTokenServerInterceptor.of("s3cret"::equals));
    try (RpcClient probe = client(false)) {
      assertThat(healthOutcome(probe)).isEqualTo(Status.Code.UNAUTHENTICATED);
    }
  }

  @Test
  void aMethodNameLetsThatMethodThroughAndNotItsService() throws Exception {
    start(BearerTokenServerInterceptor.of("s3cret"::equals).allowUnauthenticated("shop.Orders/ping",
        "petrel.health.Health/check"));
    try (RpcClient probe = client(false)) {
      assertThat(outcome(probe, PING)).isEqualTo(Status.Code.OK);
      assertThat(healthOutcome(probe)).isEqualTo(Status.Code.OK);
      assertThat(outcome(probe, WORK)).isEqualTo(Status.Code.UNAUTHENTICATED);
      // "petrel.health.Health/check" lets no other service through.
      assertThat(outcome(probe, ADMIN)).isEqualTo(Status.Code.UNAUTHENTICATED);
    }
  }

  @Test
  void namesMatchExactlyNotByPrefixOrCase() throws Exception {
    start(BearerTokenServerInterceptor.of("s3cret"::equals).allowUnauthenticated("petrel.health.Health",
        "shop.orders", "shop.Orders/pin", "shop"));
    try (RpcClient probe = client(false)) {
      assertThat(healthOutcome(probe)).isEqualTo(Status.Code.OK);
      assertThat(outcome(probe, ADMIN)).isEqualTo(Status.Code.UNAUTHENTICATED); // petrel.health.HealthAdmin
      assertThat(outcome(probe, WORK)).isEqualTo(Status.Code.UNAUTHENTICATED);  // not "shop.orders", not "shop"
      assertThat(outcome(probe, PING)).isEqualTo(Status.Code.UNAUTHENTICATED);  // not "shop.Orders/pin"
    }
  }

  @Test
  void itReturnsANewInterceptorAndRefusesNamesThatCannotMatch() {
    BearerTokenServerInterceptor strict = BearerTokenServerInterceptor.of("s3cret"::equals);
    BearerTokenServerInterceptor open = strict.allowUnauthenticated(HealthService.SERVICE);
    BearerTokenServerInterceptor more = open.allowUnauthenticated("shop.Orders/ping");
    assertThat(strict.unauthenticatedNames()).isEmpty();
    assertThat(open.unauthenticatedNames()).containsExactly("petrel.health.Health");
    assertThat(more.unauthenticatedNames()).containsExactly("petrel.health.Health", "shop.Orders/ping");
    assertThatThrownBy(() -> more.unauthenticatedNames().add("x")).isInstanceOf(UnsupportedOperationException.class);

    for (String bad : new String[] {"", " ", "petrel.health.*", "a/b/c", "/check", "shop.Orders/", " shop.Orders"}) {
      assertThatThrownBy(() -> strict.allowUnauthenticated(bad)).as(bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("allowUnauthenticated: '" + bad + "'");
    }
    assertThatThrownBy(() -> strict.allowUnauthenticated((String) null)).isInstanceOf(NullPointerException.class);
  }
}
