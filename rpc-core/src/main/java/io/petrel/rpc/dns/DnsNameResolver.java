package io.petrel.rpc.dns;

import io.petrel.rpc.Endpoint;
import io.petrel.rpc.Status;
import io.petrel.rpc.NameResolver;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.TreeSet;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Resolves a host name to all its addresses (A and AAAA records, through the JVM's resolver) and lists one
 * endpoint per address, on one port: a Kubernetes headless service gives one address per pod. The name is looked
 * up when the client starts (on the thread that builds it), again every {@link Builder#refreshInterval} (default
 * {@value #DEFAULT_REFRESH_INTERVAL_SECONDS} s), and when the client asks ({@link #refresh()}: it lost a connection
 * or failed to connect), at most once per {@link Builder#minRefreshInterval} (default 1 s). The client hears of a
 * new list only when the addresses changed. A failed lookup (unknown name, DNS unreachable) is an error, not an
 * empty list: the client keeps the endpoints it had.
 *
 * <p>The JVM caches answers: {@code networkaddress.cache.ttl} (a security property; 30 s when unset) bounds how
 * soon a changed record is seen, whatever the refresh interval; lower it to follow changes faster.
 *
 * <p>Made by the {@code dns} target scheme ({@code dns:///host:port}, {@code dns:///host:port?refresh=10s}) or by
 * {@link #builder} for {@link io.petrel.rpc.RpcClientBuilder#nameResolver}.
 */
public final class DnsNameResolver implements NameResolver {
  private static final Logger log = LoggerFactory.getLogger(DnsNameResolver.class);
  static final long DEFAULT_REFRESH_INTERVAL_SECONDS = 30;
  /** How often the name is looked up again when nothing asks sooner. */
  public static final Duration DEFAULT_REFRESH_INTERVAL = Duration.ofSeconds(DEFAULT_REFRESH_INTERVAL_SECONDS);
  /** The least time between two lookups asked for by {@link #refresh()}. */
  public static final Duration DEFAULT_MIN_REFRESH_INTERVAL = Duration.ofSeconds(1);

  /** Looks a host name up: {@link InetAddress#getAllByName} by default; replaceable, e.g. in tests. */
  @FunctionalInterface
  public interface Lookup {
    /**
     * All addresses of {@code host}.
     *
     * @throws UnknownHostException when the name has none or cannot be resolved
     */
    InetAddress[] lookup(String host) throws UnknownHostException;
  }

  private final String host;
  private final int port;
  private final long refreshNanos;
  private final long minRefreshNanos;
  private final Lookup lookup;
  private final ScheduledThreadPoolExecutor thread;

  // Owned by `thread` once started.
  private @Nullable Listener listener;
  private @Nullable List<Endpoint> last;
  private long lastLookup;
  private @Nullable ScheduledFuture<?> next;
  private boolean asked;

  private DnsNameResolver(Builder b) {
    this.host = b.host;
    this.port = b.port;
    this.refreshNanos = b.refreshInterval.toNanos();
    this.minRefreshNanos = b.minRefreshInterval.toNanos();
    this.lookup = b.lookup;
    this.thread = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(r, "petrel-dns " + host);
      t.setDaemon(true);
      return t;
    });
    thread.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    thread.setRemoveOnCancelPolicy(true);
  }

  /** A resolver of {@code host} whose endpoints listen on {@code port}. */
  public static Builder builder(String host, int port) {
    return new Builder(host, port);
  }

  /** Looks the name up on this thread (so that calls made right after the client is built have endpoints). */
  @Override
  public void start(Listener listener) {
    try {
      thread.submit(() -> {
        this.listener = listener;
        resolve();
      }).get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (java.util.concurrent.ExecutionException e) {
      log.warn("DNS resolver of {} failed", this, e.getCause());
    }
  }

  /** Looks the name up again soon: now, or {@link Builder#minRefreshInterval} after the last lookup. */
  @Override
  public void refresh() {
    try {
      thread.execute(() -> {
        if (listener == null || asked) {
          return; // not started, or a lookup is already due soon
        }
        long wait = lastLookup + minRefreshNanos - System.nanoTime();
        if (next != null && next.getDelay(TimeUnit.NANOSECONDS) <= Math.max(0, wait)) {
          return; // the periodic lookup comes first
        }
        asked = true;
        schedule(Math.max(0, wait));
      });
    } catch (RejectedExecutionException e) {
      // shut down
    }
  }

  @Override
  public void shutdown() {
    thread.shutdownNow();
  }

  private void schedule(long delayNanos) {
    if (next != null) {
      next.cancel(false);
    }
    next = thread.schedule(this::resolve, delayNanos, TimeUnit.NANOSECONDS);
  }

  private void resolve() {
    Listener l = listener;
    if (l == null || thread.isShutdown()) {
      return;
    }
    asked = false;
    lastLookup = System.nanoTime();
    try {
      InetAddress[] found = lookup.lookup(host);
      if (found == null || found.length == 0) {
        throw new UnknownHostException(host + ": no address");
      }
      TreeSet<String> addresses = new TreeSet<>();
      for (InetAddress a : found) {
        addresses.add(a.getHostAddress());
      }
      List<Endpoint> now = new ArrayList<>();
      for (String a : addresses) {
        now.add(Endpoint.of(a, port));
      }
      if (!now.equals(last)) {
        log.debug("{}: addresses {}", this, addresses);
        last = List.copyOf(now);
        l.onEndpoints(last);
      }
    } catch (UnknownHostException | RuntimeException e) {
      List<Endpoint> had = last;
      l.onError(Status.UNAVAILABLE.withDescription("cannot resolve " + host + " (" + e + ")"
          + (had == null ? "" : "; keeping its last " + had.size() + " address(es)")));
    } finally {
      if (!thread.isShutdown()) {
        schedule(refreshNanos);
      }
    }
  }

  @Override
  public String toString() {
    return "dns:///" + (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
  }

  /** Options of a {@link DnsNameResolver}. */
  public static final class Builder {
    private final String host;
    private final int port;
    private Duration refreshInterval = DEFAULT_REFRESH_INTERVAL;
    private Duration minRefreshInterval = DEFAULT_MIN_REFRESH_INTERVAL;
    private Lookup lookup = InetAddress::getAllByName;

    private Builder(String host, int port) {
      Objects.requireNonNull(host, "host");
      if (host.isBlank()) {
        throw new IllegalArgumentException("DNS name is empty");
      }
      if (port < 1 || port > 65535) {
        throw new IllegalArgumentException("port must be 1..65535: " + port);
      }
      this.host = host;
      this.port = port;
    }

    /** How often the name is looked up again (default 30 s, at least 10 ms). */
    public Builder refreshInterval(Duration interval) {
      this.refreshInterval = check("refreshInterval", interval);
      return this;
    }

    /**
     * The least time between the last lookup and one asked for by the client after a lost connection
     * (default 1 s, at least 10 ms), so that a flapping endpoint does not flood DNS.
     */
    public Builder minRefreshInterval(Duration interval) {
      this.minRefreshInterval = check("minRefreshInterval", interval);
      return this;
    }

    /** How names are looked up (default {@link InetAddress#getAllByName}). */
    public Builder lookup(Lookup lookup) {
      this.lookup = Objects.requireNonNull(lookup, "lookup");
      return this;
    }

    public DnsNameResolver build() {
      return new DnsNameResolver(this);
    }

    private static Duration check(String name, Duration d) {
      Objects.requireNonNull(d, name);
      if (d.toMillis() < 10) {
        throw new IllegalArgumentException(name + " must be at least 10 ms: " + d);
      }
      return d;
    }
  }
}
