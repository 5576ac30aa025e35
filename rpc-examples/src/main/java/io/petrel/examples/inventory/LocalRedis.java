package io.petrel.examples.inventory;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import redis.embedded.RedisServer;

/**
 * A real redis-server on 127.0.0.1 for the example, its test and the HeTu benchmark, started on a free port and
 * stopped by {@link #close()}. In order: the Redis at {@code -Dpetrel.redis.url} (or {@code PETREL_REDIS_URL}),
 * started by nobody here; the Redis 7.0.15 that {@code org.signal:embedded-redis} ships (linux x86_64 and
 * arm64, macOS); a {@code redis-server} on the PATH (Debian's {@code redis-server} package). Where none can
 * run, {@link #start()} throws {@link Unavailable} saying how to get one. No data is saved to disk.
 */
public final class LocalRedis implements AutoCloseable {
  /** How to get a Redis where none could start. */
  public static final String HOW_TO_GET_ONE = "install one (Debian/Ubuntu: apt-get install redis-server, which"
      + " puts redis-server on the PATH) or point -Dpetrel.redis.url=redis://HOST:PORT (or PETREL_REDIS_URL) at a"
      + " running Redis";

  private final String uri;
  private final String description;
  private final AutoCloseable stop;

  private LocalRedis(String uri, String description, AutoCloseable stop) {
    this.uri = uri;
    this.description = description;
    this.stop = stop;
  }

  /** Thrown when no Redis can be started or reached; its message says how to get one. */
  public static final class Unavailable extends Exception {
    Unavailable(String message) {
      super(message);
    }
  }

  /** A Redis to use: the configured one, or one started here. */
  public static LocalRedis start() throws Unavailable {
    String url = System.getProperty("petrel.redis.url", System.getenv("PETREL_REDIS_URL"));
    if (url != null && !url.isBlank()) {
      return new LocalRedis(url, "the Redis at " + url, () -> { });
    }
    String embeddedFailure;
    int port = freePort();
    try {
      RedisServer server = RedisServer.builder().bind("127.0.0.1").port(port)
          .setting("save \"\"").setting("appendonly no").build();
      server.start();
      return new LocalRedis("redis://127.0.0.1:" + port,
          "redis-server 7.0.15 of org.signal:embedded-redis on 127.0.0.1:" + port, server::stop);
    } catch (RuntimeException e) {
      embeddedFailure = e.toString();
    }
    port = freePort();
    try {
      Process p = new ProcessBuilder("redis-server", "--bind", "127.0.0.1", "--port", Integer.toString(port),
          "--save", "", "--appendonly", "no").redirectErrorStream(true).start();
      if (awaitReady(p)) {
        return new LocalRedis("redis://127.0.0.1:" + port, "redis-server from the PATH on 127.0.0.1:" + port, () -> {
          p.destroy();
          if (!p.waitFor(10, TimeUnit.SECONDS)) {
            p.destroyForcibly();
          }
        });
      }
      p.destroyForcibly();
      throw new Unavailable("no Redis: the embedded one failed (" + embeddedFailure + ") and redis-server from the"
          + " PATH did not get ready; " + HOW_TO_GET_ONE);
    } catch (IOException e) {
      throw new Unavailable("no Redis: the embedded one failed (" + embeddedFailure + ") and there is no"
          + " redis-server on the PATH (" + e.getMessage() + "); " + HOW_TO_GET_ONE);
    }
  }

  /** "redis://127.0.0.1:PORT". */
  public String uri() {
    return uri;
  }

  /** Which Redis this is and where. */
  public String description() {
    return description;
  }

  @Override
  public void close() {
    try {
      stop.close();
    } catch (Exception e) {
      System.err.println("cannot stop " + description + ": " + e);
    }
  }

  private static boolean awaitReady(Process p) {
    CompletableFuture<Boolean> ready = CompletableFuture.supplyAsync(() -> {
      BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
      try {
        String line;
        while ((line = r.readLine()) != null) {
          if (line.contains("Ready to accept connections")) {
            Thread pump = new Thread(() -> drain(r), "redis-output");
            pump.setDaemon(true);
            pump.start();
            return true;
          }
        }
        return false;
      } catch (IOException e) {
        return false;
      }
    });
    try {
      return ready.get(30, TimeUnit.SECONDS);
    } catch (Exception e) {
      return false;
    }
  }

  private static void drain(BufferedReader r) {
    try {
      while (r.readLine() != null) {
        // Keep the pipe from filling.
      }
    } catch (IOException e) {
      // The server stopped.
    }
  }

  private static int freePort() throws Unavailable {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new Unavailable("no free port on 127.0.0.1: " + e);
    }
  }
}
