package io.petrel.rpc.registry.zookeeper;

import io.petrel.rpc.Endpoint;
import io.petrel.rpc.Status;
import io.petrel.rpc.NameResolver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.curator.utils.ZKPaths;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows the nodes of one service in ZooKeeper ({@code basePath/service/host:port}, see {@link RegistryNode})
 * with a Curator cache, and tells the client the endpoints they list. It keeps the last known set through a
 * ZooKeeper outage: nothing is dropped while the connection is down, endpoints missing after a reconnection are
 * kept for {@code reconnectSettle} (servers whose sessions expired register again meanwhile), and an endpoint
 * missing while connected is dropped only after {@code removalDelay}. Additions are told at once.
 *
 * <p>All its state belongs to one thread of its own, which also calls the listener (so never concurrently).
 */
final class ZooKeeperResolver implements NameResolver {
  private static final Logger log = LoggerFactory.getLogger(ZooKeeperResolver.class);

  private final CuratorFramework curator;
  private final String servicePath;
  private final String target;
  private final Duration startWait;
  private final long removalDelayNanos;
  private final long reconnectSettleNanos;
  /** The registry made for this resolver alone (a zk:// target), closed with it; null when shared. */
  private final @Nullable AutoCloseable owned;
  /** The shared registry this resolver was made by (told when it shuts down); null for a zk:// target's own. */
  private final @Nullable ZooKeeperRegistry shared;
  private final ScheduledExecutorService thread;
  private final CountDownLatch firstAnswer = new CountDownLatch(1);
  private final ConnectionStateListener stateListener = (c, state) -> run(() -> stateChanged(state));

  // Owned by `thread`.
  private @Nullable Listener listener;
  private @Nullable CuratorCache cache;
  private boolean initialized;
  private boolean connected;
  private boolean stopped;
  private long settleUntil = System.nanoTime();
  /** The endpoints last told to the listener, by node name; null before the first list. */
  private @Nullable Map<String, Endpoint> published;
  private final Map<String, Long> missingSince = new HashMap<>();
  private final Set<String> badNodes = new HashSet<>();
  private @Nullable ScheduledFuture<?> recheck;

  ZooKeeperResolver(CuratorFramework curator, String servicePath, String target, Duration startWait,
      Duration removalDelay, Duration reconnectSettle, @Nullable AutoCloseable owned,
      @Nullable ZooKeeperRegistry shared) {
    this.shared = shared;
    this.curator = curator;
    this.servicePath = servicePath;
    this.target = target;
    this.startWait = startWait;
    this.removalDelayNanos = removalDelay.toNanos();
    this.reconnectSettleNanos = reconnectSettle.toNanos();
    this.owned = owned;
    ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, r -> {
      Thread th = new Thread(r, "petrel-zk-resolver " + servicePath);
      th.setDaemon(true);
      return th;
    });
    t.setExecuteExistingDelayedTasksAfterShutdownPolicy(false); // shutdown() does not wait for the timers
    t.setRemoveOnCancelPolicy(true);
    this.thread = t;
  }

  /**
   * Starts watching and waits for the first list, at most the registry's connection timeout, so that calls made
   * right after the client is built find their endpoints; if ZooKeeper does not answer by then the client hears
   * an error (its calls fail UNAVAILABLE naming ZooKeeper) and the list follows when ZooKeeper answers.
   */
  @Override
  public void start(Listener listener) {
    run(() -> {
      this.listener = listener;
      if (curator.getState() == CuratorFrameworkState.STOPPED || (shared != null && shared.closedItsClient())) {
        listener.onError(closedStatus());
        firstAnswer.countDown();
        return;
      }
      connected = curator.getZookeeperClient().isConnected();
      curator.getConnectionStateListenable().addListener(stateListener);
      CuratorCache c = CuratorCache.build(curator, servicePath);
      c.listenable().addListener(CuratorCacheListener.builder()
          .forAll((type, oldData, data) -> run(this::recompute))
          .forInitialized(() -> run(this::initialized))
          .build());
      cache = c;
      c.start();
      thread.schedule(this::startTimedOut, startWait.toNanos(), TimeUnit.NANOSECONDS);
    });
    try {
      firstAnswer.await(startWait.toNanos() + TimeUnit.MILLISECONDS.toNanos(100), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Why this resolver's endpoints no longer follow ZooKeeper: its registry (or Curator client) was closed. */
  private Status closedStatus() {
    return Status.UNAVAILABLE.withDescription("the ZooKeeper client of " + target + " is closed (its"
        + " ZooKeeperRegistry was closed while a client still used it): the endpoints no longer follow ZooKeeper;"
        + " close a registry only after the clients that use it");
  }

  /** The shared registry closed while this resolver's client still uses it: says so, keeps the last list. */
  void registryClosed() {
    run(() -> {
      if (stopped) {
        return;
      }
      Listener l = listener;
      if (l == null) {
        return; // not started: start() finds the client closed and says so
      }
      Map<String, Endpoint> p = published;
      log.warn("the ZooKeeperRegistry of {} was closed while a client still uses it: keeping the {} endpoint(s)"
          + " last known, which no longer follow ZooKeeper (close a registry after the clients that use it)",
          target, p == null ? 0 : p.size());
      if (p == null) {
        l.onError(closedStatus());
      }
      firstAnswer.countDown(); // after the listener heard it: a client's build() returns knowing why
    });
  }

  @Override
  public void shutdown() {
    if (shared != null) {
      shared.forget(this);
    }
    run(() -> {
      stopped = true;
      curator.getConnectionStateListenable().removeListener(stateListener);
      CuratorCache c = cache;
      if (c != null) {
        c.close();
      }
    });
    thread.shutdown();
    try {
      thread.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (owned != null) {
      try {
        owned.close();
      } catch (Exception e) {
        log.warn("closing the ZooKeeper client of {} failed", target, e);
      }
    }
  }

  private void run(Runnable task) {
    try {
      thread.execute(() -> {
        try {
          task.run();
        } catch (RuntimeException e) {
          log.warn("ZooKeeper resolver of {} failed", target, e);
        }
      });
    } catch (RejectedExecutionException e) {
      // Shut down: nothing more to tell.
    }
  }

  private void initialized() {
    if (stopped || initialized) {
      return;
    }
    initialized = true;
    connected = true;
    recompute();
  }

  private void startTimedOut() {
    if (stopped || initialized) {
      return;
    }
    Listener l = listener;
    if (l != null) {
      l.onError(Status.UNAVAILABLE.withDescription("cannot reach ZooKeeper at " + target + " within "
          + startWait.toMillis() + " ms; the endpoints follow once it answers"));
    }
    firstAnswer.countDown();
  }

  private void stateChanged(ConnectionState state) {
    if (stopped) {
      return;
    }
    switch (state) {
      case SUSPENDED, LOST -> {
        if (connected) {
          Map<String, Endpoint> p = published;
          log.warn("{} ZooKeeper connection for {}; keeping the {} endpoint(s) last known",
              state == ConnectionState.LOST ? "lost the" : "suspended the", target, p == null ? 0 : p.size());
        }
        connected = false;
      }
      case CONNECTED, RECONNECTED -> {
        if (!connected) {
          connected = true;
          if (initialized) { // back after an outage; the first connection (a new session) settles nothing
            settleUntil = System.nanoTime() + reconnectSettleNanos;
            log.info("ZooKeeper connection for {} is back; endpoints missing now are kept for {} ms", target,
                TimeUnit.NANOSECONDS.toMillis(reconnectSettleNanos));
          }
          recompute();
        }
      }
      default -> {}
    }
  }

  /** Reads the cache and tells the listener what changed, holding removals as the class comment says. */
  private void recompute() {
    CuratorCache c = cache;
    Listener l = listener;
    if (stopped || !initialized || c == null || l == null) {
      return;
    }
    Map<String, Endpoint> now = new LinkedHashMap<>();
    c.stream().forEach(d -> read(d, now));
    long t = System.nanoTime();
    Map<String, Endpoint> next = new LinkedHashMap<>(now);
    long due = Long.MAX_VALUE;
    Map<String, Endpoint> before = published;
    if (before != null) {
      for (Map.Entry<String, Endpoint> e : before.entrySet()) {
        String name = e.getKey();
        if (now.containsKey(name)) {
          missingSince.remove(name);
          continue;
        }
        long since = missingSince.computeIfAbsent(name, k -> t);
        long removeAt = Math.max(since + removalDelayNanos, settleUntil);
        if (!connected || t - removeAt < 0) {
          next.put(name, e.getValue()); // keep it for now
          if (connected) {
            due = Math.min(due, removeAt);
          }
        } else {
          missingSince.remove(name);
        }
      }
    }
    missingSince.keySet().retainAll(next.keySet());
    if (recheck != null) {
      recheck.cancel(false);
      recheck = null;
    }
    if (due != Long.MAX_VALUE) {
      recheck = thread.schedule(() -> run(this::recompute), Math.max(0, due - t), TimeUnit.NANOSECONDS);
    }
    if (!next.equals(before)) {
      published = next;
      List<Endpoint> list = new ArrayList<>(next.values());
      list.sort(Comparator.comparing(Endpoint::authority));
      log.debug("{}: endpoints {}", target, list);
      l.onEndpoints(List.copyOf(list));
    }
    firstAnswer.countDown();
  }

  /** Adds the endpoint of {@code d} if it is a server's node of this service with good data. */
  private void read(ChildData d, Map<String, Endpoint> into) {
    String path = d.getPath();
    ZKPaths.PathAndNode pn = ZKPaths.getPathAndNode(path);
    if (!pn.getPath().equals(servicePath)) {
      return; // the service node itself, or deeper
    }
    byte[] data = d.getData();
    try {
      if (data == null || data.length == 0) {
        throw new IllegalArgumentException("the node has no data");
      }
      into.put(pn.getNode(), RegistryNode.decode(data));
    } catch (IllegalArgumentException e) {
      String key = path + "@" + (d.getStat() == null ? 0 : d.getStat().getMzxid());
      if (badNodes.add(key)) {
        log.warn("ignoring ZooKeeper node {} of {}: {} (expected JSON with host and port, see docs/cluster.md)",
            path, target, e.getMessage());
      }
    }
  }

  @Override
  public String toString() {
    return target;
  }
}
