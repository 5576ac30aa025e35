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
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.data.Stat;
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
 * <p>A node that is not a server's node with good data is skipped, and named in a WARN once per change of the
 * node; at most {@value #BAD_NODE_LINES} such lines per {@value #BAD_NODE_WINDOW_SECONDS} s, then one line counting
 * the others. A node's data is read once per change of the node, and a burst of changes costs one pass over the
 * nodes, not one per change.
 *
 * <p>All its state belongs to one thread of its own, which also calls the listener (so never concurrently).
 */
final class ZooKeeperResolver implements NameResolver {
  private static final Logger log = LoggerFactory.getLogger(ZooKeeperResolver.class);
  /** Bad nodes named one by one per window; beyond them, one line counts the others at the window's end. */
  static final int BAD_NODE_LINES = 20;
  static final int BAD_NODE_WINDOW_SECONDS = 10;
  /** The longest reason for a bad node that is logged (a bad value is quoted in it). */
  private static final int MAX_REASON_CHARS = 300;

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
  /** A recompute is queued and has not started: further changes need no other (it reads the cache as it is then). */
  private final AtomicBoolean recomputeQueued = new AtomicBoolean();
  /** Set when shut down: the cache's late failures (its operations cancelled by a close) are expected then. */
  private volatile boolean shuttingDown;

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
  /** What was read from each node of the cache at the last recompute, by path: only nodes still there are kept. */
  private Map<String, NodeRead> reads = new HashMap<>();
  /** The nodes skipped at the last recompute because another node lists the same address. */
  private Set<String> duplicateNodes = new HashSet<>();
  private @Nullable ScheduledFuture<?> recheck;
  // The WARN lines about bad nodes (see the class comment).
  private long badWindowStart = System.nanoTime() - TimeUnit.SECONDS.toNanos(BAD_NODE_WINDOW_SECONDS);
  private int badLinesInWindow;
  private int badNotLogged;
  private @Nullable String firstNotLogged;
  private @Nullable ScheduledFuture<?> badSummary;

  /** What one version of a node said: its endpoint, or why it is skipped (then endpoint is null). */
  private record NodeRead(long czxid, long mzxid, @Nullable Endpoint endpoint, @Nullable String problem) {
    boolean sameVersion(@Nullable Stat st) {
      return st != null && st.getCzxid() == czxid && st.getMzxid() == mzxid;
    }
  }

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
      // Its own handler: Curator's logs "CuratorCache error" at ERROR with a stack trace, for instance for each
      // read still pending when the Curator client is closed while ZooKeeper is down.
      CuratorCache c = CuratorCache.builder(curator, servicePath).withExceptionHandler(this::cacheFailed).build();
      c.listenable().addListener(CuratorCacheListener.builder()
          .forAll((type, oldData, data) -> changed())
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

  /** A read of the cache failed (on a Curator thread). */
  void cacheFailed(Exception e) {
    if (shuttingDown || curator.getState() == CuratorFrameworkState.STOPPED) {
      log.debug("a ZooKeeper read for {} ended as its client closed: {}", target, e.toString());
      return;
    }
    run(() -> {
      if (stopped) {
        return;
      }
      boolean underService = e instanceof org.apache.zookeeper.KeeperException k && k.getPath() != null
          && k.getPath().startsWith(servicePath + "/");
      if (e instanceof org.apache.zookeeper.KeeperException ke
          && ((ke.code() == org.apache.zookeeper.KeeperException.Code.NOAUTH && (ke.getPath() == null || underService))
              || (underService && !isOutage(ke.code())))) {
        // A node ZooKeeper will not let this client read (an ACL without READ): that node's problem, counted with
        // the other bad nodes (rate-limited), not one WARN per node and resync. (Curator's cache passes the code
        // without the node's path.)
        badNode(ke.getPath() != null ? ke.getPath() : "(a node under " + servicePath + ", or that node itself: Curator"
            + " does not say which)", "ZooKeeper refuses to read it: " + ke.code() + " (an ACL that denies this"
            + " client READ?)");
        return;
      }
      Map<String, Endpoint> p = published;
      String what = "could not read the nodes of " + target + " from ZooKeeper (" + e + "): keeping the "
          + (p == null ? 0 : p.size()) + " endpoint(s) last known; they are read again at ZooKeeper's next change"
          + " or reconnection";
      long now = System.nanoTime();
      if (connected && now - lastReadWarning >= TimeUnit.SECONDS.toNanos(BAD_NODE_WINDOW_SECONDS)) {
        // The failures left out are those since the last WARN, which may be long before this one's window.
        String leftOut = readWarningsLeftOut == 0 ? "" : " (and " + readWarningsLeftOut + " more like it since the"
            + " last such WARN, " + TimeUnit.NANOSECONDS.toSeconds(now - lastReadWarning) + " s ago, logged at"
            + " DEBUG)";
        lastReadWarning = now;
        log.warn(what + leftOut);
        readWarningsLeftOut = 0;
      } else {
        if (connected) {
          readWarningsLeftOut++;
        }
        log.debug(what); // during an outage, which a WARN has told already, or within the window of the last
      }
    });
  }

  @Override
  public void shutdown() {
    shuttingDown = true;
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

  /** Runs {@code task} on this resolver's thread in {@code nanos}; null when shut down meanwhile. */
  private @Nullable ScheduledFuture<?> later(Runnable task, long nanos) {
    try {
      return thread.schedule(() -> run(task), Math.max(0, nanos), TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      return null; // shutting down: a task queued before the shutdown ran after it began
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

  /**
   * Tests: runs {@code task} on the resolver's thread after everything queued there before it (what the cache
   * handed over, with its logging), and returns once it has run.
   */
  void runOnResolverThread(Runnable task) throws Exception {
    thread.submit(task).get(10, TimeUnit.SECONDS);
  }

  /** Tests (resolver thread): the last failed-read WARN is taken as {@code nanos} older than it is. */
  void backdateReadWarning(long nanos) {
    lastReadWarning -= nanos;
  }

  /** The cache changed: queues one recompute unless one is queued already (a burst of changes costs one). */
  private void changed() {
    if (recomputeQueued.compareAndSet(false, true)) {
      run(() -> {
        recomputeQueued.set(false); // before reading the cache: a change from now on queues another
        recompute();
      });
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
        Map<String, Endpoint> p = published;
        int kept = p == null ? 0 : p.size();
        if (connected) {
          log.warn("{} ZooKeeper connection for {}; keeping the {} endpoint(s) last known",
              state == ConnectionState.LOST ? "lost the" : "suspended the", target, kept);
        }
        if (state == ConnectionState.LOST) {
          log.warn("the ZooKeeper session of {} ended (it expired, or ZooKeeper was unreachable for the session"
              + " timeout); keeping the {} endpoint(s) last known. Curator starts a new session when ZooKeeper"
              + " answers, and the endpoints follow ZooKeeper again; nothing to do unless ZooKeeper stays"
              + " unreachable", target, kept);
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
    Map<String, NodeRead> previous = reads;
    Map<String, NodeRead> nextReads = new HashMap<>();
    c.stream().forEach(d -> read(d, previous, nextReads, now));
    reads = nextReads;
    dropDuplicates(now);
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
      recheck = later(this::recompute, due - t);
    }
    if (!next.equals(before)) {
      published = next;
      List<Endpoint> list = new ArrayList<>();
      Set<String> addresses = new HashSet<>();
      for (Endpoint e : next.values()) {
        if (addresses.add(e.authority())) { // a node held for its removal delay may name a listed address
          list.add(e);
        }
      }
      list.sort(Comparator.comparing(Endpoint::authority));
      log.debug("{}: endpoints {}", target, list);
      l.onEndpoints(List.copyOf(list));
    }
    firstAnswer.countDown();
  }

  /**
   * Adds the endpoint of {@code d} if it is a server's node of this service with good data; a node read at an
   * earlier recompute in the same version is not read again (nor logged again).
   */
  private void read(ChildData d, Map<String, NodeRead> previous, Map<String, NodeRead> next,
      Map<String, Endpoint> into) {
    String path = d.getPath();
    if (path.equals(servicePath)) {
      byte[] data = d.getData();
      if (data != null && data.length > 0) {
        remember(d, previous, next, () -> "the service's node holds " + data.length + " bytes of data, which is"
            + " ignored: servers are listed as its children, basePath/service/host:port");
      }
      return;
    }
    ZKPaths.PathAndNode pn = ZKPaths.getPathAndNode(path);
    if (!pn.getPath().equals(servicePath)) {
      remember(d, previous, next, () -> "a node under a server's node, ignored: servers are listed as the"
          + " children of the service's node, basePath/service/host:port");
      return;
    }
    NodeRead r = remember(d, previous, next, () -> {
      byte[] data = d.getData();
      if (data == null || data.length == 0) {
        throw new IllegalArgumentException("the node has no data");
      }
      Endpoint e = RegistryNode.decode(data);
      String mismatch = RegistryNode.nameMismatch(pn.getNode(), e);
      return mismatch != null ? mismatch : e;
    });
    if (r.endpoint() != null) {
      into.put(pn.getNode(), r.endpoint());
    }
  }

  /**
   * What {@code d} says: read before in this version, or read now by {@code reader} (an {@link Endpoint}, or the
   * reason the node is skipped as a String or an IllegalArgumentException); a new problem is logged.
   */
  private NodeRead remember(ChildData d, Map<String, NodeRead> previous, Map<String, NodeRead> next,
      java.util.function.Supplier<Object> reader) {
    String path = d.getPath();
    Stat st = d.getStat();
    NodeRead r = previous.get(path);
    if (r == null || !r.sameVersion(st)) {
      Object what;
      try {
        what = reader.get();
      } catch (IllegalArgumentException e) {
        what = String.valueOf(e.getMessage());
      }
      long czxid = st == null ? 0 : st.getCzxid();
      long mzxid = st == null ? 0 : st.getMzxid();
      if (what instanceof Endpoint e) {
        r = new NodeRead(czxid, mzxid, e, null);
      } else {
        String why = what.toString();
        if (why.length() > MAX_REASON_CHARS) {
          why = why.substring(0, MAX_REASON_CHARS) + "...";
        }
        r = new NodeRead(czxid, mzxid, null, why);
        badNode(path, why);
      }
    }
    next.put(path, r);
    return r;
  }

  /**
   * Keeps one node per address: several nodes for one address would give the client that server several times
   * over (one connection each, and its share of calls multiplied). Each node is named after its address (others
   * are skipped before), so these are spellings of one address ("[::1]:7000" and "[0:0:0:0:0:0:0:1]:7000"): the
   * node named as a registrar names it is kept, else the first by name; each other is named in a WARN once, while
   * it lasts.
   */
  private void dropDuplicates(Map<String, Endpoint> now) {
    List<Map.Entry<String, Endpoint>> nodes = new ArrayList<>(now.entrySet());
    nodes.sort(Map.Entry.comparingByKey());
    Map<String, String> byAddress = new HashMap<>();
    for (Map.Entry<String, Endpoint> n : nodes) {
      String address = n.getValue().authority();
      String kept = byAddress.get(address);
      if (kept == null || (!kept.equals(address) && n.getKey().equals(address))) {
        byAddress.put(address, n.getKey());
      }
    }
    Set<String> duplicates = new HashSet<>();
    for (Map.Entry<String, Endpoint> n : nodes) {
      String address = n.getValue().authority();
      String kept = byAddress.getOrDefault(address, n.getKey());
      if (!kept.equals(n.getKey())) {
        duplicates.add(n.getKey());
        if (!duplicateNodes.contains(n.getKey())) {
          badNode(servicePath + "/" + n.getKey(), "it lists " + address + ", as node " + servicePath + "/" + kept
              + " does, which is kept");
        }
        now.remove(n.getKey());
      }
    }
    duplicateNodes = duplicates;
  }

  /** When the last WARN of a failed read was logged (resolver thread only): one per window. */
  private long lastReadWarning = System.nanoTime() - TimeUnit.SECONDS.toNanos(BAD_NODE_WINDOW_SECONDS);
  /** Failed reads not logged since that WARN (resolver thread only). */
  private long readWarningsLeftOut;

  /** A failure of the connection or session, which the connection lines tell, not a node's. */
  private static boolean isOutage(org.apache.zookeeper.KeeperException.Code code) {
    return switch (code) {
      case CONNECTIONLOSS, SESSIONEXPIRED, SESSIONMOVED, OPERATIONTIMEOUT, REQUESTTIMEOUT -> true;
      default -> false;
    };
  }

  /** Logs a bad node, at most {@link #BAD_NODE_LINES} lines per window, then counts them for one line. */
  private void badNode(String path, String why) {
    long t = System.nanoTime();
    if (t - badWindowStart >= TimeUnit.SECONDS.toNanos(BAD_NODE_WINDOW_SECONDS)) {
      logNotLogged();
      badWindowStart = t;
      badLinesInWindow = 0;
    }
    if (badLinesInWindow < BAD_NODE_LINES) {
      badLinesInWindow++;
      log.warn("ignoring ZooKeeper node {} of {}: {} (a server's node holds JSON with host and port, see"
          + " docs/cluster.md); calls go to the other endpoints", path, target, why);
      return;
    }
    if (badNotLogged++ == 0) {
      firstNotLogged = path + " (" + why + ")";
      long left = badWindowStart + TimeUnit.SECONDS.toNanos(BAD_NODE_WINDOW_SECONDS) - t;
      badSummary = later(this::logNotLogged, left);
    }
  }

  /** The line that counts the bad nodes not named one by one in the window that ends. */
  private void logNotLogged() {
    if (badSummary != null) {
      badSummary.cancel(false);
      badSummary = null;
    }
    if (badNotLogged == 0 || stopped) {
      badNotLogged = 0;
      return;
    }
    long skipped = reads.values().stream().filter(r -> r.endpoint() == null).count();
    log.warn("ignoring {} more bad ZooKeeper node change(s) under {} of {} in {} s, not logged one by one (the"
        + " first: {}); {} node(s) under it are skipped now; calls go to the other endpoints", badNotLogged,
        servicePath, target, BAD_NODE_WINDOW_SECONDS, firstNotLogged, skipped);
    badNotLogged = 0;
    firstNotLogged = null;
  }

  @Override
  public String toString() {
    return target;
  }
}
