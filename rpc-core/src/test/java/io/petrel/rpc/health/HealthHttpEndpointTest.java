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
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
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
  /** What a loaded machine may add to a bound. */
  private static final Duration MARGIN = Duration.ofSeconds(3);
  /** Connections in a flood: more than the threads and the queue take. */
  private static final int FLOOD = 200;
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

  /**
   * More clients than threads send half a request (the request line and a header, not the blank line that ends the
   * headers) and hold their sockets: with no request timeout they held every thread and the probes behind them
   * waited for as long as the clients cared to wait. Now each exchange is closed {@code EXCHANGE_TIMEOUT} after its
   * first bytes came, and a probe made right after them is answered within that (and {@code LATE_GRACE}).
   */
  @Test
  void morePartialRequestsThanThreadsDelayTheProbesByTheExchangeTimeoutOnly() throws Exception {
    assertTheProbeOutlivesClientsThatStall("GET /livez HTTP/1.1\r\nHost: x\r\n");
  }

  /**
   * The same with requests whose headers are whole but that announce a body of 100 bytes and send 10: the handler
   * answers 413, and then the JDK server reads the rest of the body before it ends the exchange: without the
   * exchange timeout that held the thread until the client went away.
   */
  @Test
  void requestsWhoseBodyNeverComesDelayTheProbesByTheExchangeTimeoutOnly() throws Exception {
    List<String> answers = assertTheProbeOutlivesClientsThatStall(
        "GET /livez HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789");
    assertThat(answers).allSatisfy(a -> assertThat(a).startsWith("HTTP/1.1 413"));
  }

  /** What each stalling client read before the server closed its connection. */
  private List<String> assertTheProbeOutlivesClientsThatStall(String stall) throws Exception {
    HealthService health = HealthService.create();
    int clients = 2 * HealthHttpEndpoint.THREADS;
    try (HealthHttpEndpoint endpoint = health.serveHttp(new InetSocketAddress("127.0.0.1", 0));
        CloseWatch stalled = new CloseWatch()) {
      int port = endpoint.address().getPort();
      long start = System.nanoTime();
      for (int i = 0; i < clients; i++) {
        stalled.add(send(port, stall));
      }
      // Half of them hold the threads, half wait for one, and the probe waits behind them all.
      Duration bound = HealthHttpEndpoint.EXCHANGE_TIMEOUT.plus(HealthHttpEndpoint.LATE_GRACE.multipliedBy(2))
          .plus(MARGIN);
      HttpResponse<String> probe = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
          + "/livez")).timeout(bound).GET().build(), HttpResponse.BodyHandlers.ofString());
      long answeredAfter = System.nanoTime() - start;
      assertThat(probe.statusCode() + " " + probe.body().trim()).isEqualTo("200 ok");
      assertThat(Duration.ofNanos(answeredAfter)).isLessThan(bound);
      // The server closed every stalling client's connection, within the same bound.
      assertThat(stalled.awaitAllClosed(bound)).allSatisfy(d -> assertThat(d).isLessThan(bound));
      assertThat(get("http://127.0.0.1:" + port + "/livez")).isEqualTo("200 ok");
      return stalled.read();
    }
  }

  /**
   * A flood of connections that send nothing: the JDK server waits for their first bytes on its dispatcher thread,
   * so they hold none of the endpoint's threads, and a probe among them is answered at once. (The JDK server closes
   * them after {@code sun.net.httpserver.idleInterval}, 30 s by default.)
   */
  @Test
  void aFloodOfSilentConnectionsHoldsNoThread() throws Exception {
    HealthService health = HealthService.create();
    List<SocketChannel> silent = new ArrayList<>();
    try (HealthHttpEndpoint endpoint = health.serveHttp(new InetSocketAddress("127.0.0.1", 0))) {
      int port = endpoint.address().getPort();
      for (int i = 0; i < FLOOD; i++) {
        silent.add(send(port, ""));
      }
      long start = System.nanoTime();
      assertThat(get("http://127.0.0.1:" + port + "/livez")).isEqualTo("200 ok");
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(HealthHttpEndpoint.EXCHANGE_TIMEOUT);
      assertThat(endpointThreads()).hasSizeLessThanOrEqualTo(HealthHttpEndpoint.THREADS + 1) // and the watchdog
          .allSatisfy(t -> assertThat(t.isDaemon()).as(t.getName() + " is a daemon").isTrue());
    } finally {
      for (SocketChannel c : silent) {
        c.close();
      }
    }
  }

  /**
   * A flood of connections that each send half a request: the threads take four, the queue 64, the rest are refused
   * and closed at once; those taken are closed at the exchange timeout (a queued one that gets its thread after it,
   * {@code LATE_GRACE} later), and the kubelet's next probe (tried here every 250 ms, each with its 1 s timeout) is
   * answered within that. No thread is left behind.
   */
  @Test
  void aFloodOfPartialRequestsIsRefusedOrClosedAndTheProbesComeBack() throws Exception {
    HealthService health = HealthService.create();
    List<Thread> threads;
    HealthHttpEndpoint endpoint = health.serveHttp(new InetSocketAddress("127.0.0.1", 0));
    try (CloseWatch flood = new CloseWatch()) {
      int port = endpoint.address().getPort();
      long start = System.nanoTime();
      for (int i = 0; i < FLOOD; i++) {
        flood.add(send(port, "GET /livez HTTP/1.1\r\nHost: x\r\n"));
      }
      long flooded = System.nanoTime(); // seconds later: beyond the backlog (16), the kernel drops connects a while
      Duration bound = HealthHttpEndpoint.EXCHANGE_TIMEOUT.plus(HealthHttpEndpoint.LATE_GRACE
          .multipliedBy(HealthHttpEndpoint.QUEUE / HealthHttpEndpoint.THREADS + 1)).plus(MARGIN);
      HttpClient kubelet = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
      // A prober as the kubelet's (its period shortened to 250 ms): the test waits for its first answer.
      CompletableFuture<String> answered = new CompletableFuture<>();
      java.util.concurrent.atomic.AtomicInteger probes = new java.util.concurrent.atomic.AtomicInteger();
      java.util.concurrent.ScheduledExecutorService period =
          java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
      String answer;
      try {
        period.scheduleWithFixedDelay(() -> {
          probes.incrementAndGet();
          try {
            HttpResponse<String> r = kubelet.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                + "/livez")).timeout(Duration.ofSeconds(1)).GET().build(), HttpResponse.BodyHandlers.ofString());
            answered.complete(r.statusCode() + " " + r.body().trim());
          } catch (java.io.IOException refusedOrTimedOut) {
            // the next probe, a period later
          } catch (InterruptedException stopped) {
            Thread.currentThread().interrupt();
          }
        }, 0, 250, TimeUnit.MILLISECONDS);
        long left = bound.toNanos() - (System.nanoTime() - flooded);
        try {
          answer = answered.get(Math.max(left, 0), TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.TimeoutException none) {
          answer = null;
        }
      } finally {
        period.shutdownNow();
      }
      int tries = probes.get();
      long answeredAfter = System.nanoTime() - flooded;
      assertThat(answer).as("a probe answered within " + bound + " of the flood (" + tries + " tries)")
          .isEqualTo("200 ok");
      List<Duration> closedAfter = flood.awaitAllClosed(bound);
      long atOnce = closedAfter.stream().filter(d -> d.compareTo(Duration.ofSeconds(1)) < 0).count();
      System.out.printf("flood of %d partial requests sent in %d ms; a probe answered %d ms after (%d tries); %d"
          + " connections closed within 1 s of their request, the slowest after %d ms%n", FLOOD,
          (flooded - start) / 1_000_000, answeredAfter / 1_000_000, tries, atOnce,
          closedAfter.stream().max(Duration::compareTo).orElseThrow().toMillis());
      assertThat(closedAfter).allSatisfy(d -> assertThat(d).isLessThan(bound));
      // Refused ones are closed as they come (a discarding policy left each open until close()); how many are
      // refused depends on how fast the kernel let the flood in (the slots free up every EXCHANGE_TIMEOUT).
      assertThat(atOnce).as("closed at once").isPositive();
      threads = endpointThreads();
      assertThat(threads).hasSizeLessThanOrEqualTo(HealthHttpEndpoint.THREADS + 1) // and the watchdog
          .allSatisfy(t -> assertThat(t.isDaemon()).as(t.getName() + " is a daemon").isTrue());
    } finally {
      endpoint.close();
    }
    for (Thread t : threads) {
      t.join(TIMEOUT.toMillis());
      assertThat(t.isAlive()).as(t.getName() + " ended with close()").isFalse();
    }
  }

  /** Connects to the endpoint and sends {@code text}, leaving the connection open. */
  private static SocketChannel send(int port, String text) throws java.io.IOException {
    SocketChannel c = SocketChannel.open(new InetSocketAddress("127.0.0.1", port));
    ByteBuffer bytes = ByteBuffer.wrap(text.getBytes(StandardCharsets.US_ASCII));
    while (bytes.hasRemaining()) {
      c.write(bytes);
    }
    return c;
  }

  /**
   * Watches connections for the server closing them (a read answers -1, or the connection is reset), on a selector
   * thread of its own, from the moment each is added; closes them all when closed.
   */
  private static final class CloseWatch implements AutoCloseable {
    private final Selector selector = Selector.open();
    private final java.util.Queue<SocketChannel> added = new java.util.concurrent.ConcurrentLinkedQueue<>();
    private final List<SocketChannel> all = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final java.util.Map<SocketChannel, Long> addedAt = new java.util.concurrent.ConcurrentHashMap<>();
    private final java.util.Map<SocketChannel, Long> closedAt = new java.util.concurrent.ConcurrentHashMap<>();
    private final java.util.Map<SocketChannel, StringBuilder> read = new java.util.concurrent.ConcurrentHashMap<>();
    private final Thread thread = new Thread(this::watch, "close-watch");
    private volatile boolean stopped;
    private volatile Exception failed;

    CloseWatch() throws java.io.IOException {
      thread.setDaemon(true);
      thread.start();
    }

    void add(SocketChannel c) {
      addedAt.put(c, System.nanoTime());
      all.add(c);
      added.add(c);
      selector.wakeup();
    }

    /** How long after it was added the server closed each connection; fails if one is open after {@code within}. */
    List<Duration> awaitAllClosed(Duration within) throws InterruptedException {
      long end = System.nanoTime() + within.toNanos();
      synchronized (this) {
        while (closedAt.size() < all.size() && System.nanoTime() < end) {
          wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime())));
        }
      }
      assertThat(failed).as("the watch's own failure").isNull();
      assertThat(all.size() - closedAt.size()).as("connections the server left open").isZero();
      return all.stream().map(c -> Duration.ofNanos(closedAt.get(c) - addedAt.get(c))).toList();
    }

    /** What the server sent on each connection before it closed it. */
    List<String> read() {
      return all.stream().map(c -> read.get(c).toString()).toList();
    }

    private void watch() {
      ByteBuffer buffer = ByteBuffer.allocate(4096);
      try {
        while (!stopped) {
          for (SocketChannel c; (c = added.poll()) != null; ) {
            read.put(c, new StringBuilder());
            c.configureBlocking(false);
            c.register(selector, SelectionKey.OP_READ);
          }
          selector.select(100);
          for (SelectionKey key : selector.selectedKeys()) {
            SocketChannel c = (SocketChannel) key.channel();
            int n;
            try {
              buffer.clear();
              n = c.read(buffer);
            } catch (java.io.IOException reset) {
              n = -1;
            }
            if (n > 0) {
              read.get(c).append(new String(buffer.array(), 0, n, StandardCharsets.ISO_8859_1));
            } else if (n < 0) {
              key.cancel();
              synchronized (this) {
                closedAt.put(c, System.nanoTime());
                notifyAll();
              }
            }
          }
          selector.selectedKeys().clear();
        }
      } catch (java.io.IOException | RuntimeException e) {
        failed = e;
      }
    }

    @Override
    public void close() throws java.io.IOException {
      stopped = true;
      selector.wakeup();
      try {
        thread.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      selector.close();
      for (SocketChannel c : all) {
        c.close();
      }
    }
  }

  private static List<Thread> endpointThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().startsWith("petrel-health-http") && t.isAlive()).toList();
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
