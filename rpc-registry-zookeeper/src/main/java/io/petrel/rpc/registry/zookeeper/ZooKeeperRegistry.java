package io.petrel.rpc.registry.zookeeper;

import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.NameResolver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.Objects;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.framework.api.CuratorEventType;
import org.apache.curator.framework.api.CuratorListener;
import org.apache.curator.framework.api.UnhandledErrorListener;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.curator.retry.BoundedExponentialBackoffRetry;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A ZooKeeper ensemble used as Petrel's service registry: one Curator client (one ZooKeeper session) and the
 * base path under which services are listed ({@value #DEFAULT_BASE_PATH} by default). Servers register with a
 * {@link #registrar}; clients resolve with a {@link #resolver}. Both may share one registry.
 *
 * <pre>{@code
 * ZooKeeperRegistry registry = ZooKeeperRegistry.builder().connectString("127.0.0.1:2181").build();
 * RpcServer server = RpcServer.builder().port(0).addService(greeter)
 *     .addLifecycleListener(registry.registrar("demo.Greeter").zone("eu-1").build())
 *     .drainDelay(Duration.ofSeconds(1)).build().start();
 * RpcClient client = RpcClient.builder()
 *     .nameResolver(registry.target("demo.Greeter"), registry.resolver("demo.Greeter")).build();
 * }</pre>
 *
 * <p>A registry built from a connect string owns its Curator client and closes it in {@link #close()} (which
 * ends its session: the ephemeral nodes it made are gone at once; when ZooKeeper did not answer within the close's
 * bound, when the session expires). One built from the caller's {@link Builder#curator(CuratorFramework)} never
 * closes that client.
 */
public final class ZooKeeperRegistry implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ZooKeeperRegistry.class);
  /** Where services are listed when no base path is given. */
  public static final String DEFAULT_BASE_PATH = "/petrel";
  /** The ZooKeeper session timeout of a registry's own Curator client. */
  public static final Duration DEFAULT_SESSION_TIMEOUT = Duration.ofSeconds(10);
  /** How long a registry's own Curator client waits for a connection before an operation fails. */
  public static final Duration DEFAULT_CONNECTION_TIMEOUT = Duration.ofSeconds(5);
  /** How long an endpoint missing from ZooKeeper stays listed before a resolver drops it. */
  public static final Duration DEFAULT_REMOVAL_DELAY = Duration.ofMillis(200);
  /** After a reconnection to ZooKeeper, how long a resolver keeps endpoints that are missing. */
  public static final Duration DEFAULT_RECONNECT_SETTLE = Duration.ofSeconds(5);

  private final CuratorFramework curator;
  private final boolean owned;
  private final String connectString;
  private final String basePath;
  private final Duration connectionTimeout;
  private final Duration removalDelay;
  private final Duration reconnectSettle;
  /** The resolvers made by {@link #resolver} and not yet shut down: told when this registry closes. */
  private final Set<ZooKeeperResolver> resolvers = ConcurrentHashMap.newKeySet();
  /** The registrars whose nodes are live (from onServing to onDraining): deregistered when this registry closes. */
  private final Set<ZooKeeperRegistrar> registrars = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;
  /** Whether the Curator failure line was logged since the last (re)connection: once per outage. */
  private final AtomicBoolean toldGaveUp = new AtomicBoolean();
  /**
   * Explains Curator's ERROR "Background operation retry gave up" (and the like), logged when an operation of this
   * registry's client (a server's node being created or deleted, a resolver's read) failed through all its
   * retries, typically through a ZooKeeper outage: what it means for Petrel.
   */
  private final UnhandledErrorListener gaveUp = (message, e) -> {
    if (closed) {
      return; // operations cut short by the close: nothing left to redo
    }
    Throwable cause = e;
    while (cause != null && !(cause instanceof org.apache.zookeeper.KeeperException)) {
      cause = cause.getCause();
    }
    if (!(cause instanceof org.apache.zookeeper.KeeperException ke) || !outage(ke.code())) {
      return; // not an outage: not what this line explains (Curator's own ERROR stands)
    }
    if (toldGaveUp.compareAndSet(false, true)) {
      log.warn("a ZooKeeper operation of the registry {} failed through all of Curator's retries ({}: {}); Curator"
          + " logs it as ERROR. Petrel redoes what it needs when ZooKeeper answers: servers' nodes are created"
          + " again, resolvers read the nodes again and keep their endpoints meanwhile. Nothing to do unless"
          + " ZooKeeper stays unreachable", connectString(), message, String.valueOf(e));
    }
  };
  private static boolean outage(org.apache.zookeeper.KeeperException.Code code) {
    return switch (code) {
      case CONNECTIONLOSS, SESSIONEXPIRED, SESSIONMOVED, OPERATIONTIMEOUT, REQUESTTIMEOUT -> true;
      default -> false;
    };
  }

  /**
   * Closing the Curator client interrupts its background thread, which may be waiting in a synchronous ZooKeeper
   * call: Curator makes a node's missing parents that way (a server's first node under a service, or after the
   * service's node was deleted). Interrupted, Curator logs ERROR "Background exception was not retry-able or retry
   * gave up" with an InterruptedException, on an ordinary shutdown. Told first that the client closes (its state
   * already STOPPED, so nothing is retried), this closes the ZooKeeper handle: such a call then ends as a lost
   * connection, which Curator drops quietly, and the interrupt finds nothing to cut. The handle is closed within a
   * bound ({@link #closeHandle}).
   */
  private final CuratorListener closing = (c, event) -> {
    if (event.getType() == CuratorEventType.CLOSING) {
      closeHandle(c);
    }
  };
  /**
   * Until when ({@link System#nanoTime()}) closing ZooKeeper's handle may wait for ZooKeeper to answer the close
   * of the session: set by {@link #close()} (null when the application closes this registry's Curator client
   * itself: then the connection timeout).
   */
  private volatile @Nullable Long sessionCloseUntil;

  /**
   * Closes ZooKeeper's handle of {@code c}, waiting for ZooKeeper to answer the close of the session (which ends
   * the session on the server at once, and its ephemeral nodes with it) until {@link #sessionCloseUntil} at most.
   * ZooKeeper's own close waits for that answer until its client gives up on the connection: two thirds of the
   * session timeout after ZooKeeper last answered, or the session timeout for a ZooKeeper that never completed the
   * session's handshake (one that accepts connections and answers nothing); its {@code close(int)} waits for that
   * too, then for its threads. At the deadline the thread closing the handle is interrupted, which is how
   * ZooKeeper's close is told to stop waiting: it then closes the connection and ends its client's threads without
   * the answer (the session ends on the server when it expires). The caller's interrupt does the same as the
   * deadline.
   */
  private void closeHandle(CuratorFramework c) {
    Long until = sessionCloseUntil;
    long deadline = until != null ? until : System.nanoTime() + connectionTimeout.toNanos();
    java.util.concurrent.CompletableFuture<org.apache.zookeeper.ZooKeeper> handle =
        new java.util.concurrent.CompletableFuture<>();
    Thread closer = new Thread(() -> {
      try {
        org.apache.zookeeper.ZooKeeper zk = c.getZookeeperClient().getZooKeeper();
        handle.complete(zk);
        zk.close();
      } catch (InterruptedException e) {
        // told to stop waiting for ZooKeeper's answer: the handle is closed without it
      } catch (Exception e) {
        handle.completeExceptionally(e);
        log.debug("closing the ZooKeeper handle of the registry {} before its Curator client", connectString, e);
      }
    }, "petrel-zk-close-session");
    closer.setDaemon(true);
    closer.start();
    // The caller's interrupt means "stop waiting" here too, as at the deadline: the closer must then be told so and
    // its end waited for (milliseconds). Left waiting for ZooKeeper's answer, it would hold the handle's lock, which
    // Curator's own close of the handle right after this waits for: until ZooKeeper's client gave up on the
    // connection (two thirds of the session timeout). So these waits do not end on the interrupt; it is kept.
    boolean interrupted = false;
    try {
      TimeUnit.NANOSECONDS.timedJoin(closer, Math.max(0, deadline - System.nanoTime()));
    } catch (InterruptedException e) {
      interrupted = true;
    }
    long end = System.nanoTime() + CLOSE_HANDLE_NANOS;
    if (closer.isAlive()) {
      org.apache.zookeeper.ZooKeeper zk = null;
      for (boolean waiting = true; waiting; ) {
        try {
          zk = handle.get(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS);
          waiting = false;
        } catch (InterruptedException e) {
          interrupted = true;
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
          log.debug("Curator did not give the ZooKeeper handle of the registry {} to close; its client closes"
              + " anyway", connectString);
          waiting = false;
        }
      }
      // Not once the close ends anyway (its state is CLOSED as it stops its threads): an interrupt while it
      // waits for them is logged as a WARN.
      if (zk != null && zk.getState().isAlive()) {
        closer.interrupt();
      }
    }
    while (closer.isAlive() && end - System.nanoTime() > 0) {
      try {
        TimeUnit.NANOSECONDS.timedJoin(closer, end - System.nanoTime());
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (closer.isAlive()) {
      log.debug("the ZooKeeper handle of the registry {} is not closed yet; its Curator client closes anyway",
          connectString);
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * How long to wait for the end of the close of ZooKeeper's handle once it is told not to wait for ZooKeeper: it
   * takes milliseconds, unless no ZooKeeper server accepts connections (then ZooKeeper's client thread ends between
   * two connection attempts, up to 2 s later; Curator's own close of the handle waits for the rest).
   */
  private static final long CLOSE_HANDLE_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final ConnectionStateListener reconnections = (c, state) -> {
    if (state == ConnectionState.CONNECTED || state == ConnectionState.RECONNECTED) {
      toldGaveUp.set(false);
    }
  };

  private ZooKeeperRegistry(Builder b, CuratorFramework curator, boolean owned) {
    this.curator = curator;
    this.owned = owned;
    String cs = b.connectString != null ? b.connectString : curator.getZookeeperClient().getCurrentConnectionString();
    this.connectString = cs != null ? cs : "zookeeper";
    this.basePath = b.basePath;
    this.connectionTimeout = owned ? b.connectionTimeout
        : Duration.ofMillis(curator.getZookeeperClient().getConnectionTimeoutMs());
    this.removalDelay = b.removalDelay;
    this.reconnectSettle = b.reconnectSettle;
    if (owned) { // a Curator client of the application's own: its failures are not only this registry's
      curator.getUnhandledErrorListenable().addListener(gaveUp);
      curator.getConnectionStateListenable().addListener(reconnections);
      curator.getCuratorListenable().addListener(closing);
    }
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * A registrar for these services (each registered on its own node), to add to the server with
   * {@link io.petrel.rpc.RpcServerBuilder#addLifecycleListener}.
   */
  public ZooKeeperRegistrar.Builder registrar(String... services) {
    return new ZooKeeperRegistrar.Builder(this, List.of(services));
  }

  /** A registrar for these services (their {@link ServiceDefinition#name() names}). */
  public ZooKeeperRegistrar.Builder registrar(ServiceDefinition... services) {
    List<String> names = new ArrayList<>();
    for (ServiceDefinition s : services) {
      names.add(s.name());
    }
    return new ZooKeeperRegistrar.Builder(this, names);
  }

  /**
   * A name resolver that follows the servers registered for {@code service}; give it to
   * {@link io.petrel.rpc.RpcClientBuilder#nameResolver} (one resolver per client: the client shuts it down).
   * Resolvers share this registry's session; closing the registry ends them.
   */
  public NameResolver resolver(String service) {
    if (closed) {
      throw new IllegalStateException("this ZooKeeperRegistry (" + target(service) + ") is closed: make resolvers"
          + " from an open registry, and close a registry only after the clients that use it");
    }
    ZooKeeperResolver r = new ZooKeeperResolver(curator, servicePath(service), target(service), connectionTimeout,
        removalDelay, reconnectSettle, null, this);
    resolvers.add(r);
    return r;
  }

  /** A resolver made by {@link #resolver} was shut down (its client closed). */
  void forget(ZooKeeperResolver r) {
    resolvers.remove(r);
  }

  /** A registrar of this registry made its nodes (true), or deleted them (false). */
  void live(ZooKeeperRegistrar r, boolean live) {
    if (live) {
      registrars.add(r);
    } else {
      registrars.remove(r);
    }
  }

  /** The {@code zk://} target naming {@code service} in this registry, for messages and metrics. */
  public String target(String service) {
    return "zk://" + connectString + servicePath(service);
  }

  /** The ZooKeeper path of {@code service}: {@code basePath/service}. */
  public String servicePath(String service) {
    checkService(service);
    return (basePath.equals("/") ? "" : basePath) + "/" + service;
  }

  /** The Curator client (owned by this registry unless it was given one). */
  public CuratorFramework curator() {
    return curator;
  }

  String connectString() {
    return connectString;
  }

  Duration connectionTimeout() {
    return connectionTimeout;
  }

  /**
   * Closes the Curator client if this registry made it; its session ends and its nodes go with it. Clients still
   * using a resolver of this registry then keep the endpoints they have, which no longer follow ZooKeeper: each is
   * told (a WARN, and its calls that find no endpoint say so). Close a registry after the clients that use it. A
   * registry on the caller's Curator client leaves it open, and its resolvers go on following ZooKeeper.
   *
   * <p>A registry that owns its client and is closed while a server it registered still serves (close it after
   * the server, as the docs say) first deregisters that server, waiting for ZooKeeper as a shutdown does (at most
   * the connection timeout, for all such servers together): its nodes would go with the session anyway, and
   * Curator, left to create them on a closed client, logged ERRORs. Closed on ZooKeeper's event thread (from a
   * Curator callback), it does not wait for ZooKeeper's callbacks, which run on that thread.
   *
   * <p>It returns within twice the connection timeout (and the milliseconds closing takes; up to 2 s more when no
   * ZooKeeper server accepts connections: ZooKeeper's client ends between its connection attempts), whatever
   * ZooKeeper does: the deregistrations, then ZooKeeper's answers to what the registry asked, at most the
   * connection timeout each; the close of the session waits for ZooKeeper's answer within the second bound only
   * if ZooKeeper answered the rest (else the session ends on the server when it expires, and its nodes with it).
   * Interrupted (or called on an interrupted thread), it stops waiting for ZooKeeper, still closes its connection,
   * and keeps the interrupt.
   */
  @Override
  public void close() {
    closed = true;
    curator.getUnhandledErrorListenable().removeListener(gaveUp);
    curator.getConnectionStateListenable().removeListener(reconnections);
    if (owned) {
      // One bound for all (a registrar each would make it one per server still serving).
      long deadline = System.nanoTime() + connectionTimeout.toNanos();
      for (ZooKeeperRegistrar r : List.copyOf(registrars)) {
        r.registryClosing(deadline);
      }
      long answersDeadline = System.nanoTime() + connectionTimeout.toNanos();
      // ZooKeeper answered all this registry asked: the close of the session may wait for its answer, within the
      // same bound. Otherwise (requests unanswered, or no connection) it does not: ZooKeeper answers in order, so
      // the answers still to come would run their callbacks on the closed client (a node's create answered late:
      // Curator's ERROR "Could not delete node after close"), and a ZooKeeper that does not answer would hold the
      // close until its client gives up on the connection.
      sessionCloseUntil = awaitAnswers(answersDeadline) ? answersDeadline : System.nanoTime();
      curator.close(); // first: a resolver starting meanwhile finds it closed (see closedItsClient)
      for (ZooKeeperResolver r : resolvers) {
        r.registryClosed();
      }
    } // else the caller's Curator client goes on, and the resolvers with it
  }

  /**
   * Waits, at most until {@code deadline}, until ZooKeeper has answered what this registry's client asked so far
   * (ZooKeeper answers a session's requests in order: one more, answered, says so), so that Curator's callbacks
   * for them run while its client is open. A server's node closed while ZooKeeper was still creating it is
   * created, then deleted by Curator in such a callback, which fails with an ERROR ("Could not delete node after
   * close") once the client is closed. Not when disconnected: nothing is answered then. Nor when closed on
   * ZooKeeper's event thread (from a Curator callback, watcher or cache listener): that thread runs the callbacks,
   * none can run before this returns, and the wait would always last the whole connection timeout.
   *
   * @return whether ZooKeeper answered by {@code deadline} ({@link System#nanoTime()}); on ZooKeeper's event thread,
   *     where it does not wait, true: what ZooKeeper answers runs after the close returns, whatever it waits for
   */
  private boolean awaitAnswers(long deadline) {
    if (onZooKeeperEventThread()) {
      return true; // unknown, and none of their callbacks can run before this returns
    }
    if (!curator.getZookeeperClient().isConnected()) {
      return false;
    }
    java.util.concurrent.CompletableFuture<Void> answered = new java.util.concurrent.CompletableFuture<>();
    Thread asking = new Thread(() -> {
      try { // Curator's handle may take time to get (see ZooKeeperRegistrar.statWithin): within the bound too
        curator.getZookeeperClient().getZooKeeper().exists("/", false, (rc, path, ctx, stat) ->
            answered.complete(null), null);
      } catch (Exception e) {
        answered.completeExceptionally(e);
      }
    }, "petrel-zk-close");
    asking.setDaemon(true);
    asking.start();
    try {
      answered.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      log.debug("ZooKeeper did not answer the registry {} before it closed", connectString, e);
    }
    return false;
  }

  /**
   * Whether this thread is a ZooKeeper client's event thread, which runs the callbacks of ZooKeeper's answers
   * (Curator's background callbacks, watchers, cache listeners): waiting on it for such a callback waits for
   * nothing, until its bound.
   */
  static boolean onZooKeeperEventThread() {
    return Thread.currentThread().getClass().getName().equals("org.apache.zookeeper.ClientCnxn$EventThread");
  }

  /** Closed, and its own Curator client with it: its resolvers no longer follow ZooKeeper. */
  boolean closedItsClient() {
    return closed && owned;
  }

  static void checkService(String service) {
    Objects.requireNonNull(service, "service");
    if (service.isEmpty() || service.indexOf('/') >= 0 || service.equals(".") || service.equals("..")) {
      throw new IllegalArgumentException("service name must be non-empty and contain no '/': '" + service + "'");
    }
  }

  /**
   * The service of a {@code zk://} target: also without spaces, '?', '#' or '%', which a target's text would have
   * by mistake (options, a fragment) and which would silently name another service.
   */
  static void checkTargetService(String service) {
    checkService(service);
    for (int i = 0; i < service.length(); i++) {
      char c = service.charAt(i);
      if (c <= ' ' || c == '?' || c == '#' || c == '%') {
        throw new IllegalArgumentException("the service of a zk:// target has no spaces, '?', '#' or '%': '"
            + service + "'" + (c == '?' ? " (a zk:// target takes no options: for options, use"
                + " ZooKeeperRegistry.builder() and its resolver(service) with RpcClient.builder().nameResolver)"
                : ""));
      }
    }
  }

  static String checkPath(String name, String path) {
    Objects.requireNonNull(path, name);
    if (!path.startsWith("/")) {
      throw new IllegalArgumentException(name + " must be an absolute ZooKeeper path like /petrel: '" + path + "'");
    }
    if (path.length() > 1 && path.endsWith("/")) {
      throw new IllegalArgumentException(name + " must not end with '/': '" + path + "' (write '"
          + path.substring(0, path.length() - 1) + "')");
    }
    if (path.contains("//")) {
      throw new IllegalArgumentException(name + " must not contain '//': '" + path + "'");
    }
    return path;
  }

  static Duration checkDuration(String name, Duration d, boolean zeroAllowed) {
    Objects.requireNonNull(d, name);
    if (d.isNegative() || (!zeroAllowed && d.isZero())) {
      throw new IllegalArgumentException(name + " must be " + (zeroAllowed ? ">= 0" : "> 0") + ": " + d);
    }
    return d;
  }

  /** Options of a {@link ZooKeeperRegistry}; {@link #connectString} or {@link #curator} is required. */
  public static final class Builder {
    private @Nullable String connectString;
    private @Nullable CuratorFramework curator;
    private String basePath = DEFAULT_BASE_PATH;
    private Duration sessionTimeout = DEFAULT_SESSION_TIMEOUT;
    private Duration connectionTimeout = DEFAULT_CONNECTION_TIMEOUT;
    private Duration removalDelay = DEFAULT_REMOVAL_DELAY;
    private Duration reconnectSettle = DEFAULT_RECONNECT_SETTLE;

    private Builder() {}

    /** The ensemble, e.g. {@code "zk1:2181,zk2:2181,zk3:2181"}: the registry makes and owns its Curator client. */
    public Builder connectString(String connectString) {
      Objects.requireNonNull(connectString, "connectString");
      if (connectString.isBlank()) {
        throw new IllegalArgumentException("connectString is empty; expected host:port[,host:port...]");
      }
      this.connectString = connectString;
      return this;
    }

    /**
     * The caller's Curator client instead of a connect string: started by the caller, never closed by the
     * registry; its session and connection timeouts apply.
     */
    public Builder curator(CuratorFramework curator) {
      this.curator = Objects.requireNonNull(curator, "curator");
      return this;
    }

    /** The path under which services are listed (default {@value ZooKeeperRegistry#DEFAULT_BASE_PATH}). */
    public Builder basePath(String basePath) {
      this.basePath = checkPath("basePath", basePath);
      return this;
    }

    /**
     * The ZooKeeper session timeout (default 10 s; the ensemble bounds it, by default to 2..20 ticks of 2 s). A
     * server that dies without deregistering stays listed this long; clients skip it meanwhile because they
     * cannot connect to it.
     */
    public Builder sessionTimeout(Duration timeout) {
      this.sessionTimeout = checkDuration("sessionTimeout", timeout, false);
      return this;
    }

    /**
     * How long to wait for a connection to ZooKeeper (default 5 s): a client's {@code build()} waits this long at
     * most for the first list of endpoints, a server's {@code start()} this long at most for its registration, its
     * shutdown for its deregistration, and {@link #close()} for ZooKeeper's answers to what the registry asked
     * ({@code close()} returns within twice this, whatever ZooKeeper does; up to 2 s more when no ZooKeeper server
     * accepts connections).
     */
    public Builder connectionTimeout(Duration timeout) {
      this.connectionTimeout = checkDuration("connectionTimeout", timeout, false);
      return this;
    }

    /**
     * How long an endpoint must be missing from ZooKeeper before resolvers drop it (default 200 ms; 0: at
     * once), so that a node deleted and created again at once (a server whose session expired registers again)
     * does not take its server out of the clients' lists.
     */
    public Builder removalDelay(Duration delay) {
      this.removalDelay = checkDuration("removalDelay", delay, true);
      return this;
    }

    /**
     * After a resolver's connection to ZooKeeper comes back, how long it keeps endpoints that are missing
     * (default 5 s; 0: no wait), so that servers whose sessions expired during the outage have time to register
     * again before clients drop them.
     */
    public Builder reconnectSettle(Duration settle) {
      this.reconnectSettle = checkDuration("reconnectSettle", settle, true);
      return this;
    }

    /** Starts the registry's own Curator client (it connects in the background) or checks the caller's. */
    public ZooKeeperRegistry build() {
      if (curator != null) {
        if (curator.getState() != CuratorFrameworkState.STARTED) {
          throw new IllegalStateException("the Curator client given to ZooKeeperRegistry.builder().curator(...)"
              + " must be started (its state is " + curator.getState() + ")");
        }
        return new ZooKeeperRegistry(this, curator, false);
      }
      if (connectString == null) {
        throw new IllegalStateException("no ZooKeeper to use: set connectString(\"host:2181\") or curator(...)");
      }
      CuratorFramework c = CuratorFrameworkFactory.builder().connectString(connectString)
          .sessionTimeoutMs(Math.toIntExact(sessionTimeout.toMillis()))
          .connectionTimeoutMs(Math.toIntExact(connectionTimeout.toMillis()))
          // 100 ms doubling to at most 2 s, 10 retries. Bounded: ExponentialBackoffRetry with a maximum logs a WARN
          // ("Sleep extension too large ... Pinning to 2000") at every retry past the fifth, through an outage.
          .retryPolicy(new BoundedExponentialBackoffRetry(100, 2_000, 10))
          .build();
      c.start();
      return new ZooKeeperRegistry(this, c, true);
    }
  }
}
