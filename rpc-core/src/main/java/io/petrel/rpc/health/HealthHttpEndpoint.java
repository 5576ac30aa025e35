package io.petrel.rpc.health;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.petrel.rpc.health.HealthService.ServingStatus;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link HealthService}'s answers over plain HTTP, for Kubernetes' {@code httpGet} probes (made by
 * {@link HealthService#serveHttp}; {@link #close} stops it and frees the port):
 * <ul>
 *   <li>{@code GET /livez}: 200 "ok" while the JVM answers, whatever the server's state (starting, serving,
 *       draining, its business pool full): liveness;
 *   <li>{@code GET /readyz}: 200 "SERVING" while the server serves, else 503 with the status (NOT_SERVING before
 *       it starts and from the start of its shutdown, through its drain delay): readiness;
 *   <li>{@code GET /readyz?service=NAME}: that service's status, 200 for SERVING, 503 for NOT_SERVING, 404 for
 *       SERVICE_UNKNOWN (a failure to the kubelet as 503 is, and to a person it says the name is wrong).
 * </ul>
 * Requests run on four daemon threads of its own, never on the server's business pool or event loops. Only GET and
 * HEAD (405 otherwise), no request body (413), no other path (404) or query parameter (400); every answer closes
 * its connection. What it cannot bound: a client that sends half a request and waits holds a thread until it goes
 * away (the JDK 17 server has no request timeout unless the JVM runs with
 * {@code -Dsun.net.httpserver.maxReqTime=SECONDS}, which applies to every HttpServer in it), so four such clients
 * stop the probes: keep the port to the kubelet (a NetworkPolicy). It does not speak
 * TLS: probes come from the kubelet over the pod network; a policy that wants TLS everywhere uses the exec probe
 * ({@link HealthService#main}). See docs/observability.md.
 */
public final class HealthHttpEndpoint implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(HealthHttpEndpoint.class);
  /** Connections the listening socket queues while the threads answer others. */
  private static final int BACKLOG = 16;
  /**
   * Threads answering probes: a client that sends half a request holds one until it goes away (see the class
   * comment), so one such client cannot stop the kubelet's probes.
   */
  static final int THREADS = 4;
  /**
   * Requests waiting for a thread; beyond them a connection is closed at once (the executor refuses it and the JDK
   * server closes it; a discarding policy left each such socket open until close()); the prober retries.
   */
  private static final int QUEUE = 64;

  private final HttpServer server;
  private final ExecutorService thread;
  private final InetSocketAddress address;

  HealthHttpEndpoint(HealthService health, InetSocketAddress bindTo) throws IOException {
    HttpServer s = HttpServer.create(bindTo, BACKLOG);
    java.util.concurrent.atomic.AtomicInteger n = new java.util.concurrent.atomic.AtomicInteger();
    ExecutorService t = new java.util.concurrent.ThreadPoolExecutor(THREADS, THREADS, 0, TimeUnit.MILLISECONDS,
        new java.util.concurrent.ArrayBlockingQueue<>(QUEUE), r -> {
          Thread th = new Thread(r, "petrel-health-http-" + n.incrementAndGet());
          th.setDaemon(true);
          return th;
        }, new java.util.concurrent.ThreadPoolExecutor.AbortPolicy()); // the JDK server closes a refused one
    s.setExecutor(t);
    s.createContext("/", exchange -> answer(health, exchange));
    startAsDaemon(s);
    this.server = s;
    this.thread = t;
    this.address = s.getAddress();
    log.info("health over HTTP on http://{}:{}/livez and /readyz", address.getHostString(), address.getPort());
  }

  /**
   * Starts the server from a daemon thread: the JDK's dispatcher thread takes the daemon status of the thread that
   * starts it, and a non-daemon dispatcher kept the JVM alive after the RPC server had stopped.
   */
  private static void startAsDaemon(HttpServer s) throws IOException {
    java.util.concurrent.atomic.AtomicReference<RuntimeException> failed =
        new java.util.concurrent.atomic.AtomicReference<>();
    Thread starter = new Thread(() -> {
      try {
        s.start();
      } catch (RuntimeException e) {
        failed.set(e);
      }
    }, "petrel-health-http-start");
    starter.setDaemon(true);
    starter.start();
    try {
      starter.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      s.stop(0);
      throw new IOException("interrupted while starting the health endpoint", e);
    }
    RuntimeException e = failed.get();
    if (e != null) {
      s.stop(0);
      throw e;
    }
  }

  /** The address it listens on, with the port it was given when asked for port 0. */
  public InetSocketAddress address() {
    return address;
  }

  /** Stops listening (the port is free when it returns) and ends its threads. Idempotent. */
  @Override
  public void close() {
    server.stop(0);
    thread.shutdownNow();
  }

  @Override
  public String toString() {
    return "HealthHttpEndpoint[http://" + address.getHostString() + ":" + address.getPort() + "]";
  }

  private static void answer(HealthService health, HttpExchange exchange) throws IOException {
    try (exchange) {
      String method = exchange.getRequestMethod();
      boolean head = "HEAD".equals(method);
      if (!head && !"GET".equals(method)) {
        exchange.getResponseHeaders().set("Allow", "GET, HEAD");
        send(exchange, head, 405, "only GET and HEAD");
        return;
      }
      String length = exchange.getRequestHeaders().getFirst("Content-Length");
      if (exchange.getRequestHeaders().containsKey("Transfer-Encoding")
          || (length != null && !"0".equals(length.trim()))) {
        send(exchange, head, 413, "a probe sends no body");
        return;
      }
      String path = exchange.getRequestURI().getRawPath();
      String query = exchange.getRequestURI().getRawQuery();
      if ("/livez".equals(path)) {
        send(exchange, head, 200, "ok");
      } else if ("/readyz".equals(path)) {
        String service = service(query);
        if (service == null) {
          send(exchange, head, 400, "/readyz takes one parameter, service=NAME");
          return;
        }
        ServingStatus status = health.status(service);
        int code = switch (status) {
          case SERVING -> 200;
          case NOT_SERVING -> 503;
          case SERVICE_UNKNOWN -> 404;
        };
        send(exchange, head, code, status.name());
      } else {
        send(exchange, head, 404, "not found: /livez and /readyz[?service=NAME] are");
      }
    } catch (IOException | RuntimeException e) {
      log.debug("health over HTTP: an exchange failed", e); // the prober went away; nothing to tell anyone
    }
  }

  /** The service a readiness query names ("" without a query), or null for a query it does not take. */
  private static @Nullable String service(@Nullable String rawQuery) {
    if (rawQuery == null || rawQuery.isEmpty()) {
      return "";
    }
    if (!rawQuery.startsWith("service=") || rawQuery.indexOf('&') >= 0) {
      return null;
    }
    try {
      return URLDecoder.decode(rawQuery.substring("service=".length()), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      return null; // a bad %-escape
    }
  }

  private static void send(HttpExchange exchange, boolean head, int code, String text) throws IOException {
    byte[] body = (text + "\n").getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
    exchange.getResponseHeaders().set("Cache-Control", "no-store");
    exchange.getResponseHeaders().set("Connection", "close");
    if (head) {
      exchange.sendResponseHeaders(code, -1);
      return;
    }
    exchange.sendResponseHeaders(code, body.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(body);
    }
  }
}
