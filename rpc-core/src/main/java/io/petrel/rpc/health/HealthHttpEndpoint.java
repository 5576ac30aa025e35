package io.petrel.rpc.health;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.petrel.rpc.health.HealthService.ServingStatus;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
 * its connection. A slow client is bounded by the exchange timeout (5 s, {@link #EXCHANGE_TIMEOUT}): the JDK server
 * reads a request's line, headers and body on the thread that runs the exchange, with blocking reads and no timeout
 * of its own (unless the JVM sets {@code sun.net.httpserver.maxReqTime}, for every HttpServer in it), so a client
 * that sends half a request, or announces a body it does not send, held a thread until it went away, and four such
 * clients stopped every probe. Here an exchange still running 5 s after its first bytes came (its wait for a thread
 * included) has its thread interrupted, which closes its connection (a blocking socket channel read ends with
 * ClosedByInterruptException) and frees the thread. It does not speak TLS: probes come from the kubelet over the
 * pod network; a policy that wants TLS everywhere uses the exec probe ({@link HealthService#main}). See
 * docs/observability.md.
 */
public final class HealthHttpEndpoint implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(HealthHttpEndpoint.class);
  /** Connections the listening socket queues while the threads answer others. */
  private static final int BACKLOG = 16;
  /**
   * Threads answering probes: a client that sends half a request holds one for up to {@link #EXCHANGE_TIMEOUT}, so
   * fewer such clients than threads do not even delay the kubelet's probes.
   */
  static final int THREADS = 4;
  /**
   * Requests waiting for a thread; beyond them a connection is closed at once (the executor refuses it and the JDK
   * server closes it; a discarding policy left each such socket open until close()); the prober retries.
   */
  static final int QUEUE = 64;
  /**
   * How long an exchange may last from the moment the JDK server hands it over (its first bytes came) to its end,
   * its wait for a thread included; one still running then has its thread interrupted, which closes its connection.
   * A probe takes milliseconds; this bounds how long clients that stall (half a request, a body that never comes)
   * keep a probe waiting: Kubernetes' default probe timeout is 1 s, and a liveness probe fails the pod after
   * failureThreshold (3) misses in a row, period (10 s) apart.
   */
  static final Duration EXCHANGE_TIMEOUT = Duration.ofSeconds(5);
  /**
   * What an exchange that gets its thread after {@link #EXCHANGE_TIMEOUT} has passed (it waited behind stalling
   * ones) still has on it: a probe queued right behind them gets its answer, and each stalling one queued costs
   * its thread this long at most.
   */
  static final Duration LATE_GRACE = Duration.ofMillis(250);

  private final HttpServer server;
  private final ThreadPoolExecutor threads;
  private final ScheduledThreadPoolExecutor watchdog;
  private final InetSocketAddress address;

  HealthHttpEndpoint(HealthService health, InetSocketAddress bindTo) throws IOException {
    HttpServer s = HttpServer.create(bindTo, BACKLOG);
    AtomicInteger n = new AtomicInteger();
    ThreadPoolExecutor t = new ThreadPoolExecutor(THREADS, THREADS, 0, TimeUnit.MILLISECONDS,
        new ArrayBlockingQueue<>(QUEUE), r -> daemon(r, "petrel-health-http-" + n.incrementAndGet()),
        new ThreadPoolExecutor.AbortPolicy()); // the JDK server closes a refused one
    ScheduledThreadPoolExecutor w = new ScheduledThreadPoolExecutor(1,
        r -> daemon(r, "petrel-health-http-watchdog"));
    w.setRemoveOnCancelPolicy(true); // most exchanges end in milliseconds: their timers go with them
    s.setExecutor(new WatchedExecutor(t, w));
    s.createContext("/", exchange -> answer(health, exchange));
    try {
      startAsDaemon(s);
    } catch (IOException | RuntimeException e) {
      t.shutdownNow();
      w.shutdownNow();
      throw e;
    }
    this.server = s;
    this.threads = t;
    this.watchdog = w;
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
    server.stop(0); // closes every connection: an exchange blocked on one ends
    threads.shutdownNow();
    watchdog.shutdownNow();
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  /**
   * The JDK server's executor: runs each exchange on the pool with a deadline ({@link #EXCHANGE_TIMEOUT} after it
   * was handed over, at least {@link #LATE_GRACE} after it started) at which the watchdog interrupts the thread if
   * that exchange still runs on it. The JDK server reads the request on that thread with blocking reads of the
   * connection's SocketChannel, an interruptible channel: the interrupt closes it (ClosedByInterruptException, or
   * at once when the read starts after it), the exchange fails and the JDK server forgets the connection.
   */
  private static final class WatchedExecutor implements Executor {
    private final ThreadPoolExecutor threads;
    private final ScheduledThreadPoolExecutor watchdog;

    WatchedExecutor(ThreadPoolExecutor threads, ScheduledThreadPoolExecutor watchdog) {
      this.threads = threads;
      this.watchdog = watchdog;
    }

    @Override
    public void execute(Runnable exchange) {
      threads.execute(new Watched(exchange, System.nanoTime())); // refused: the JDK server closes the connection
    }

    private final class Watched implements Runnable {
      private final Runnable exchange;
      private final long handedOver;
      /** The thread running the exchange, null before and after: the watchdog interrupts only this exchange. */
      private @Nullable Thread runner; // guarded by this

      Watched(Runnable exchange, long handedOver) {
        this.exchange = exchange;
        this.handedOver = handedOver;
      }

      @Override
      public void run() {
        long left = Math.max(handedOver + EXCHANGE_TIMEOUT.toNanos() - System.nanoTime(), LATE_GRACE.toNanos());
        synchronized (this) {
          runner = Thread.currentThread();
        }
        ScheduledFuture<?> timer = null;
        try {
          timer = watchdog.schedule(this::interruptIfRunning, left, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException closed) {
          Thread.currentThread().interrupt(); // close() stopped the watchdog: end this exchange at once
        }
        try {
          exchange.run();
        } finally {
          if (timer != null) {
            timer.cancel(false);
          }
          synchronized (this) {
            runner = null;
            // An interrupt that came as the exchange ended must not reach the next one on this thread.
            boolean unused = Thread.interrupted();
          }
        }
      }

      private synchronized void interruptIfRunning() {
        Thread t = runner;
        if (t != null) {
          log.debug("health over HTTP: an exchange still ran {} after its first bytes came (a client that sent half"
              + " a request, or not all of its body?): closing its connection", EXCHANGE_TIMEOUT);
          t.interrupt();
        }
      }
    }
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
