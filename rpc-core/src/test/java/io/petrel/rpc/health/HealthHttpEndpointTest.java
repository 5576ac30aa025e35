package io.petrel.rpc.health;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.health.HealthService.ServingStatus;
import io.petrel.rpc.marshal.Marshallers;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.util.List;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The health endpoint over HTTP, asked with real HTTP requests on 127.0.0.1: /livez answers 200 even when the
 * business pool is full (where a check over Petrel gets RESOURCE_EXHAUSTED), /readyz follows the server (200
 * serving, 503 through its drain delay) and a service's status (404 for one it does not serve), only GET and HEAD
 * are taken, and close frees the port. Also: the probe lower-cases a header's name.
 */
class HealthHttpEndpointTest {
  private static final MethodDescriptor<byte[], byte[]> WORK = MethodDescriptor.<byte[], byte[]>newBuilder()
      .serviceName("shop.Orders").methodName("work").requestMarshaller(Marshallers.bytes())
      .responseMarshaller(Marshallers.bytes()).build();
  private static final Duration TIMEOUT = Duration.ofSeconds(5);
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();

  @Test
  void livezAnswersWithTheBusinessPoolFullAndReadyzFollowsTheServer() throws Exception {
    HealthService health = HealthService.create();
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch running = new CountDownLatch(1);
    RpcServer server = RpcServer.builder().inProcess("health-http")
        .businessThreads(1).businessQueueSize(0) // one call fills the pool
        .addService(ServiceDefinition.builder("shop.Orders").unary(WORK, b -> {
          running.countDown();
          release.await();
          return b;
        }).build())
        .addService(health.definition()).addLifecycleListener(health)
        .drainDelay(Duration.ofSeconds(30))
        .build();
    try (HealthHttpEndpoint endpoint = health.serveHttp(new InetSocketAddress("127.0.0.1", 0));
        RpcClient client = RpcClient.builder().inProcess("health-http").build()) {
      assertThat(endpoint.address().getPort()).isPositive();
      String base = "http://127.0.0.1:" + endpoint.address().getPort();
      assertThat(get(base + "/readyz")).isEqualTo("503 NOT_SERVING"); // not started yet
      assertThat(get(base + "/livez")).isEqualTo("200 ok");
      server.start();
      assertThat(get(base + "/readyz")).isEqualTo("200 SERVING");
      assertThat(get(base + "/readyz?service=shop.Orders")).isEqualTo("200 SERVING");
      assertThat(get(base + "/readyz?service=shop%2ENothing")).isEqualTo("404 SERVICE_UNKNOWN");
      assertThat(get(base + "/readyz?service=shop.Orders&x=1")).startsWith("400 ");
      health.setStatus("shop.Orders", ServingStatus.NOT_SERVING);
      assertThat(get(base + "/readyz?service=shop.Orders")).isEqualTo("503 NOT_SERVING");
      assertThat(get(base + "/readyz")).isEqualTo("200 SERVING");
      health.setStatus("shop.Orders", ServingStatus.SERVING);

      // The business pool full: a check over Petrel is refused, the HTTP endpoint still answers.
      CompletableFuture<byte[]> held = client.unaryCallAsync(WORK, new byte[0],
          io.petrel.rpc.CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(30)));
      assertThat(running.await(5, TimeUnit.SECONDS)).isTrue();
      assertThatThrownBy(() -> HealthService.check(client, "", TIMEOUT)).isInstanceOf(StatusException.class)
          .satisfies(e -> assertThat(((StatusException) e).code()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED));
      assertThat(get(base + "/livez")).isEqualTo("200 ok");
      assertThat(get(base + "/readyz")).isEqualTo("200 SERVING");
      release.countDown();
      held.get(5, TimeUnit.SECONDS);

      // Only GET and HEAD, no body.
      HttpResponse<String> post = http.send(HttpRequest.newBuilder(URI.create(base + "/livez")).timeout(TIMEOUT)
          .POST(HttpRequest.BodyPublishers.ofString("x")).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(post.statusCode()).isEqualTo(405);
      assertThat(post.headers().firstValue("Allow")).hasValue("GET, HEAD");
      HttpResponse<String> getWithBody = http.send(HttpRequest.newBuilder(URI.create(base + "/livez"))
          .timeout(TIMEOUT).method("GET", HttpRequest.BodyPublishers.ofString("body")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(getWithBody.statusCode()).isEqualTo(413);
      HttpResponse<String> head = http.send(HttpRequest.newBuilder(URI.create(base + "/readyz")).timeout(TIMEOUT)
          .method("HEAD", HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(head.statusCode()).isEqualTo(200);
      assertThat(head.body()).isEmpty();
      assertThat(get(base + "/metrics")).startsWith("404 ");

      // Shutdown with a drain delay: not ready, still alive.
      server.shutdown();
      assertThat(get(base + "/readyz")).isEqualTo("503 NOT_SERVING");
      assertThat(get(base + "/readyz?service=shop.Orders")).isEqualTo("503 NOT_SERVING");
      assertThat(get(base + "/livez")).isEqualTo("200 ok");
    } finally {
      release.countDown();
      server.shutdownNow();
    }
  }

  @Test
  void closingFreesThePort() throws Exception {
    HealthService health = HealthService.create();
    HealthHttpEndpoint endpoint = health.serveHttp(new InetSocketAddress("127.0.0.1", 0));
    int port = endpoint.address().getPort();
    assertThat(get("http://127.0.0.1:" + port + "/livez")).isEqualTo("200 ok");
    // None of its threads keeps the JVM alive: the JDK's dispatcher took the non-daemon status of the test's
    // thread before, and a main() that returned after the RPC server stopped did not exit.
    assertThat(Thread.getAllStackTraces().keySet()).filteredOn(t -> t.getName().startsWith("HTTP-Dispatcher")
        || t.getName().startsWith("petrel-health-http")).isNotEmpty().allSatisfy(t -> assertThat(t.isDaemon())
            .as(t.getName() + " is a daemon").isTrue());
    endpoint.close();
    endpoint.close(); // idempotent
    try (ServerSocket again = new ServerSocket()) {
      again.bind(new InetSocketAddress("127.0.0.1", port));
      assertThat(again.getLocalPort()).isEqualTo(port);
    }
    try (HealthHttpEndpoint second = health.serveHttp(new InetSocketAddress("127.0.0.1", port))) {
      assertThat(get("http://127.0.0.1:" + port + "/livez")).isEqualTo("200 ok");
    }
  }

  /**
   * Clients that send half a request and wait (hostile, or broken) each hold a thread of the endpoint: three of
   * them leave the kubelet's probes answered (with one thread, one such client stopped every probe: a liveness
   * probe that times out restarts the pod).
   */
  @Test
  void clientsThatSendHalfARequestDoNotStopTheProbes() throws Exception {
    HealthService health = HealthService.create();
    try (HealthHttpEndpoint endpoint = health.serveHttp(new InetSocketAddress("127.0.0.1", 0))) {
      int port = endpoint.address().getPort();
      List<java.net.Socket> halves = new java.util.ArrayList<>();
      try {
        for (int i = 0; i < HealthHttpEndpoint.THREADS - 1; i++) {
          java.net.Socket half = new java.net.Socket("127.0.0.1", port);
          half.getOutputStream().write("GET /livez HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII));
          half.getOutputStream().flush();
          halves.add(half);
        }
        for (int i = 0; i < 5; i++) {
          assertThat(get("http://127.0.0.1:" + port + "/livez")).isEqualTo("200 ok");
        }
      } finally {
        for (java.net.Socket h : halves) {
          h.close();
        }
      }
    }
  }

  /** {@code --header "Authorization: ..."}: HTTP header names are case-insensitive, Petrel's keys lower-case. */
  @Test
  void theProbeLowerCasesHeaderNames() throws Exception {
    HealthService health = HealthService.create();
    RpcServer server = RpcServer.builder().inProcess("health-header")
        .addService(health.definition()).addLifecycleListener(health)
        .intercept(new io.petrel.rpc.ServerInterceptor() {
          @Override
          public <Q, R> java.util.concurrent.CompletionStage<R> intercept(Chain<Q, R> chain) throws Exception {
            if (!"Bearer x".equals(io.petrel.rpc.ServerContext.current().metadata().get("authorization"))) {
              throw Status.UNAUTHENTICATED.withDescription("no token").asException();
            }
            return chain.proceed();
          }
        }).build().start();
    try {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      int code = HealthService.probe(new String[] {"--header", "Authorization: Bearer x", "inprocess:health-header"},
          new PrintStream(bytes, true, StandardCharsets.UTF_8));
      assertThat(code + " " + bytes.toString(StandardCharsets.UTF_8).trim()).isEqualTo("0 SERVING");
    } finally {
      server.shutdownNow();
    }
  }

  private String get(String url) throws Exception {
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(TIMEOUT).GET().build(),
        HttpResponse.BodyHandlers.ofString());
    return r.statusCode() + " " + r.body().trim();
  }
}
