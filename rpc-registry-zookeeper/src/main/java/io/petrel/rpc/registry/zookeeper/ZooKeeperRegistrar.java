package io.petrel.rpc.registry.zookeeper;

import io.petrel.rpc.Endpoint;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServerLifecycleListener;
import io.petrel.rpc.ServiceDefinition;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.recipes.nodes.PersistentNode;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.framework.recipes.nodes.PersistentNodeListener;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.CreateMode;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Registers a server's services in ZooKeeper while it serves: when the server starts serving
 * ({@link #onServing}) one ephemeral node per service, {@code basePath/service/host:port}, whose data is the
 * endpoint (host, port, weight, zone, version, metadata; see docs/cluster.md); when it is about to drain
 * ({@link #onDraining}, before the server's {@code drainDelay} and its GOAWAY) the nodes are deleted, so clients
 * stop sending new calls here while the server still serves. The nodes are Curator {@link PersistentNode}s: if
 * the session expires (the nodes vanish with it) they are created again in the new session. Made by
 * {@link ZooKeeperRegistry#registrar}; one registrar per server.
 */
public final class ZooKeeperRegistrar implements ServerLifecycleListener {
  private static final Logger log = LoggerFactory.getLogger(ZooKeeperRegistrar.class);

  private final ZooKeeperRegistry registry;
  private final List<String> services;
  private final @Nullable String host;
  private final int weight;
  private final @Nullable String zone;
  private final @Nullable String version;
  private final Map<String, String> metadata;
  private final List<PersistentNode> nodes = new ArrayList<>();
  /** The ZooKeeper paths of {@link #nodes}, in the same order. */
  private final List<String> paths = new ArrayList<>();
  private @Nullable ConnectionStateListener connectionLines;
  /** Set when one of the nodes was first created: until then the server is not registered. */
  private final AtomicBoolean createdOnce = new AtomicBoolean();
  private @Nullable Endpoint registered;
  private volatile List<String> registeredServices = List.of();

  private ZooKeeperRegistrar(Builder b) {
    this.registry = b.registry;
    this.services = List.copyOf(b.services);
    this.host = b.host;
    this.weight = b.weight;
    this.zone = b.zone;
    this.version = b.version;
    this.metadata = Map.copyOf(b.metadata);
  }

  /**
   * Creates the nodes and waits until ZooKeeper has them, at most the registry's connection timeout; if it
   * cannot reach ZooKeeper by then it logs a warning and the nodes are created as soon as it can.
   */
  @Override
  public synchronized void onServing(RpcServer server) {
    InetSocketAddress bound;
    try {
      bound = server.localAddress();
    } catch (IllegalStateException e) {
      log.warn("not registering {} in ZooKeeper: the server has no network address ({})", services,
          e.getMessage());
      return;
    }
    List<String> served = server.services().stream().map(ServiceDefinition::name).toList();
    List<String> toRegister = new ArrayList<>();
    for (String service : services) {
      if (served.contains(service)) {
        toRegister.add(service);
      } else {
        log.error("not registering {} in ZooKeeper: this server does not serve it (it serves {}), so every call a"
            + " client sent here would fail with UNIMPLEMENTED. Check the name given to registry.registrar(...),"
            + " or add the service to the server", service, served);
      }
    }
    if (toRegister.isEmpty()) {
      return;
    }
    Advertised chosen = hostToAdvertise(host, bound, InetAddress::getLocalHost);
    String advertised = chosen.host();
    if (advertised == null) {
      log.error("not registering {} in ZooKeeper: {}", toRegister, chosen.refused());
      return;
    }
    Endpoint e = new Endpoint(advertised, bound.getPort(), weight, zone, version, metadata);
    byte[] data = RegistryNode.encode(e);
    if (data.length > RegistryNode.MAX_BYTES) {
      log.error("not registering {} in ZooKeeper for {}: its node would hold {} bytes, more than the {} clients"
          + " read (they would skip it). Register less metadata", e.authority(), toRegister, data.length,
          RegistryNode.MAX_BYTES);
      return;
    }
    List<Recreations> creations = new ArrayList<>(); // in step with nodes
    long started = System.nanoTime();
    long deadline = started + registry.connectionTimeout().toNanos();
    makeParents(toRegister, deadline);
    for (String service : toRegister) {
      String path = registry.servicePath(service) + "/" + RegistryNode.name(e);
      PersistentNode node = new PersistentNode(registry.curator(), CreateMode.EPHEMERAL, false, path, data);
      Recreations creation = new Recreations(service, e, createdOnce, started);
      node.getListenable().addListener(creation);
      node.start();
      nodes.add(node);
      paths.add(path);
      creations.add(creation);
    }
    registered = e;
    registeredServices = List.copyOf(toRegister);
    registry.live(this, true);
    ConnectionStateListener lines = new ConnectionLines(e);
    registry.curator().getConnectionStateListenable().addListener(lines);
    connectionLines = lines;
    List<Integer> late = new ArrayList<>();
    try {
      for (int i = 0; i < nodes.size(); i++) {
        long left = deadline - System.nanoTime();
        if (!nodes.get(i).waitForInitialCreate(Math.max(0, left), TimeUnit.NANOSECONDS)) {
          late.add(i);
        }
      }
    } catch (InterruptedException ie) {
      Thread.currentThread().interrupt();
      return;
    }
    if (!late.isEmpty()) {
      // Refused under an ephemeral parent: Curator would send the create again at once, for as long as that node
      // lives (thousands of requests a second to ZooKeeper). Stop those; the others wait for ZooKeeper.
      List<String> kept = new ArrayList<>(toRegister); // the service of each node left, in step with nodes
      long checks = System.nanoTime() + CHECK_NANOS;
      for (int k = late.size() - 1; k >= 0; k--) {
        int i = late.get(k);
        String refused = ephemeralAncestor(paths.get(i), checks);
        if (refused == null) {
          continue;
        }
        PersistentNode stuck = nodes.remove(i);
        String path = paths.remove(i);
        kept.remove(i);
        creations.remove(i);
        late.remove(k);
        try {
          stuck.close();
        } catch (java.io.IOException | RuntimeException closeFailed) {
          log.debug("closing the refused node {}", path, closeFailed);
        }
        log.error("{} is not registered in ZooKeeper ({}): ZooKeeper refuses its node {}, because {} is an"
            + " ephemeral node, which can have no children (something other than a Petrel registrar made it)."
            + " Delete that node, then restart this server: its registrar creates the node, and the missing"
            + " parents as container nodes", e.authority(), registry.target(toRegister.get(i)), path, refused);
      }
      registeredServices = List.copyOf(kept);
      if (nodes.isEmpty()) {
        registry.curator().getConnectionStateListenable().removeListener(lines);
        connectionLines = null; // nothing registered or waiting: no line about its nodes
        registered = null;
        registry.live(this, false);
        return;
      }
      if (!late.isEmpty()) {
        log.warn("{} is not registered in ZooKeeper ({}) yet after {} ms; it will be once ZooKeeper answers",
            e.authority(), late.stream().map(i -> registry.target(toRegister.get(i))).toList(),
            registry.connectionTimeout().toMillis());
        return;
      }
      // The others are registered: on to what a registration says.
    }
    // Curator's PersistentNode takes a node it finds already there (NodeExists: it sets its data) as created,
    // without nodeCreated. One still of another session (a server at this address before a crash) is not this
    // server's registration: it is only once that session ends and the node is created in this one, which its
    // Recreations says then. Checked after the waits, so that the read comes after this session's create.
    List<String> mine = new ArrayList<>();
    long checks = System.nanoTime() + CHECK_NANOS; // one second for all of them: the start waits on these
    for (int i = 0; i < paths.size(); i++) {
      String owner = previousOwner(paths.get(i), checks);
      if (owner != null && creations.get(i).awaitTakeover(owner)) {
        log.info("ZooKeeper node {} is still the one of session {}, not this server's: a server at this address"
            + " (this one before a restart?) registered it and its session has not ended yet, so {} is not"
            + " registered for {} yet. Clients list the address meanwhile; when that session ends (within its"
            + " session timeout) the node goes and is created again in this server's session (an INFO"
            + " \"registered ... took over\" says so)", paths.get(i), owner, e.authority(), registeredServices.get(i));
      } else {
        mine.add(registeredServices.get(i));
      }
    }
    if (!mine.isEmpty()) {
      createdOnce.set(true); // also when the node was there already (this session's): no nodeCreated then
      log.info("registered {} in ZooKeeper for {}", e, mine);
    }
  }

  /**
   * Makes the services' nodes and the base path (container nodes, as Curator would) before the servers' nodes,
   * waiting at most until {@code deadline} (then the nodes' creation makes what is missing, as before). Curator
   * makes a node's missing parents with synchronous calls on its background thread, which a close of the registry
   * cuts (ZooKeeperRegistry's CLOSING listener) and, if ZooKeeper answers first, follows with the node's create,
   * answered after the close (docs/cluster.md); made here, on a thread of the registrar's, they are not.
   */
  private void makeParents(List<String> services, long deadline) {
    CompletableFuture<Void> made = new CompletableFuture<>();
    Thread t = new Thread(() -> {
      try {
        for (String service : services) {
          registry.curator().createContainers(registry.servicePath(service));
        }
        made.complete(null);
      } catch (Exception e) {
        made.completeExceptionally(e);
      }
    }, "petrel-zk-parents");
    t.setDaemon(true);
    t.start();
    try {
      made.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      log.debug("the parents of the nodes of {} are not made yet ({}); the nodes' creation makes them", services,
          String.valueOf(e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e));
    }
  }

  /** The session (0x...) owning the ephemeral node at {@code path} when it is not this registry's, else null. */
  private @Nullable String previousOwner(String path, long deadline) {
    try {
      Read read = statWithin(path, deadline);
      org.apache.zookeeper.data.Stat st = read.stat();
      if (st != null && st.getEphemeralOwner() != 0 && st.getEphemeralOwner() != read.session()) {
        return "0x" + Long.toHexString(st.getEphemeralOwner());
      }
    } catch (Exception ex) {
      log.debug("could not read the owner of {}", path, ex);
    }
    return null;
  }

  /** How long a check the registrar makes while the server starts may wait for ZooKeeper's answer. */
  private static final long CHECK_NANOS = TimeUnit.SECONDS.toNanos(1);

  /** A node as ZooKeeper gave it (null: there is none), and the session of the handle that asked. */
  private record Read(org.apache.zookeeper.data.@Nullable Stat stat, long session) {}

  /**
   * The node at {@code path} (its stat null if there is none); asked once, without Curator's retries, and waited
   * for at most until {@code deadline} (a nanoTime; a TimeoutException after it), so that a check made while the
   * server starts cannot hold the start (or the shutdown waiting on this registrar's lock) for a whole retry
   * policy. Curator's handle is taken on a thread of its own, within the same bound: getting it may block (Curator
   * makes a new handle after a session ends, resolving the connect string's host names, or closes the old one,
   * waiting for ZooKeeper).
   */
  private Read statWithin(String path, long deadline) throws Exception {
    CompletableFuture<Read> f = new CompletableFuture<>();
    // The raw handle, which knows nothing of a Curator namespace (an application's own client may have one).
    String full = org.apache.curator.utils.ZKPaths.fixForNamespace(registry.curator().getNamespace(), path);
    Thread asking = new Thread(() -> {
      try {
        org.apache.zookeeper.ZooKeeper zk = registry.curator().getZookeeperClient().getZooKeeper();
        long session = zk.getSessionId();
        zk.exists(full, false, (rc, p, ctx, stat) -> {
          if (rc == org.apache.zookeeper.KeeperException.Code.OK.intValue()) {
            f.complete(new Read(stat, session));
          } else if (rc == org.apache.zookeeper.KeeperException.Code.NONODE.intValue()) {
            f.complete(new Read(null, session));
          } else {
            f.completeExceptionally(org.apache.zookeeper.KeeperException.create(
                org.apache.zookeeper.KeeperException.Code.get(rc), p));
          }
        }, null);
      } catch (Exception e) {
        f.completeExceptionally(e);
      }
    }, "petrel-zk-check");
    asking.setDaemon(true); // left behind if Curator never gives the handle: it ends with the process
    asking.start();
    return f.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
  }

  /**
   * Logs each creation of a node after its first: the session that held it ended (expired, or closed by
   * ZooKeeper) and Curator created it again in a new one. Between the two, clients' resolvers kept this server
   * for their removal delay (docs/cluster.md). Also logs the first creation when the server started while the node
   * was still another session's ({@link #awaitTakeover}): that is when the server is registered.
   */
  private static final class Recreations implements PersistentNodeListener {
    private final String service;
    private final Endpoint endpoint;
    private final AtomicBoolean createdOnce;
    /** When the registrar started creating the node (a nanoTime). */
    private final long started;
    private int created;
    /** The session (0x...) whose node this one waits to take over, or null. */
    private @Nullable String previousOwner;

    Recreations(String service, Endpoint endpoint, AtomicBoolean createdOnce, long started) {
      this.service = service;
      this.endpoint = endpoint;
      this.createdOnce = createdOnce;
      this.started = started;
    }

    /**
     * The node was found to be session {@code owner}'s: its creation in this server's session, when that one has
     * ended, is the registration, logged then. False if this session created it already (the read was older).
     */
    synchronized boolean awaitTakeover(String owner) {
      if (created > 0) {
        return false;
      }
      previousOwner = owner;
      return true;
    }

    @Override
    public synchronized void nodeCreated(String path) {
      createdOnce.set(true);
      created++;
      String owner = previousOwner;
      if (owner != null) {
        previousOwner = null;
        log.info("registered {} in ZooKeeper for {} (node {}): took over the address after the node of session {}"
            + " (a server here before) went with that session, {} ms after this server started registering",
            endpoint, service, path, owner, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
      } else if (created > 1) {
        log.info("registered {} in ZooKeeper again for {} (node {}): the ZooKeeper session that held its node"
            + " ended, and the node was created in a new session", endpoint, service, path);
      }
    }
  }

  /**
   * The first ancestor of {@code path} that is an ephemeral node (ZooKeeper refuses children under one), with its
   * session, or null (none, or ZooKeeper cannot be asked now, or does not answer by {@code deadline}, a
   * nanoTime).
   */
  private @Nullable String ephemeralAncestor(String path, long deadline) {
    if (!registry.curator().getZookeeperClient().isConnected()) {
      return null;
    }
    long until = deadline;
    try {
      for (int slash = path.indexOf('/', 1); slash > 0; slash = path.indexOf('/', slash + 1)) {
        String ancestor = path.substring(0, slash);
        org.apache.zookeeper.data.Stat st = statWithin(ancestor, until).stat();
        if (st != null && st.getEphemeralOwner() != 0) {
          return ancestor + " (of session 0x" + Long.toHexString(st.getEphemeralOwner()) + ")";
        }
      }
    } catch (Exception e) {
      log.debug("could not look at the parents of {}", path, e);
    }
    return null;
  }

  /**
   * Says what the server's registration goes through when the registry's connection to ZooKeeper changes (on a
   * Curator thread): ZooKeeper's and Curator's own lines (a WARN with a stack trace at each reconnection attempt,
   * "Session expired event received") do not say what happens to the server's nodes.
   */
  private final class ConnectionLines implements ConnectionStateListener {
    private final Endpoint endpoint;
    private boolean suspended;

    ConnectionLines(Endpoint endpoint) {
      this.endpoint = endpoint;
    }

    @Override
    public void stateChanged(org.apache.curator.framework.CuratorFramework client, ConnectionState state) {
      List<String> services = registeredServices; // those whose nodes it keeps (not the refused ones)
      switch (state) {
        case SUSPENDED -> {
          if (!createdOnce.get()) {
            log.warn("no connection to ZooKeeper ({}): {} is not registered for {} yet, and will be once ZooKeeper"
                + " answers; it serves meanwhile, unlisted", registry.connectString(), endpoint.authority(),
                services);
            return;
          }
          suspended = true;
          log.warn("lost the connection to ZooKeeper ({}): {} stays registered for {} while its session lives (up"
              + " to the session timeout); Curator reconnects by itself, nothing to do unless ZooKeeper stays"
              + " unreachable", registry.connectString(), endpoint.authority(), services);
        }
        case LOST -> {
          suspended = false;
          if (!createdOnce.get()) {
            log.warn("the ZooKeeper session of the registry ({}) ended before {} was registered for {}: its nodes are"
                + " created in a new session when ZooKeeper answers; it serves meanwhile, unlisted",
                registry.connectString(), endpoint.authority(), services);
            return;
          }
          log.warn("the ZooKeeper session holding the nodes of {} for {} ended (it expired, or ZooKeeper was"
              + " unreachable for the session timeout): clients keep the server for their removal delay, and the"
              + " nodes are created again in a new session when ZooKeeper answers (an INFO says so); nothing to"
              + " do unless ZooKeeper stays unreachable", endpoint.authority(), services);
        }
        case RECONNECTED -> {
          if (suspended) {
            suspended = false;
            log.info("reconnected to ZooKeeper ({}) within the session: the nodes of {} for {} stayed",
                registry.connectString(), endpoint.authority(), services);
          }
        }
        default -> {}
      }
    }
  }

  /**
   * Deletes the nodes, so clients stop picking this server; the server then waits its drain delay. Waits for
   * ZooKeeper at most the registry's connection timeout: if it cannot be reached, Curator keeps trying to delete
   * the nodes in the background, and they go anyway when the registry's session ends or expires.
   */
  @Override
  public void onDraining(RpcServer server) {
    deregister(false, null); // its own bound, from when it has this registrar
  }

  /**
   * The registry is closing while this registrar's server still serves (it should have been closed after the
   * server): deregisters the server as its shutdown would, so that Curator does not go on creating its nodes on a
   * closed client. Waits until {@code deadline} ({@link System#nanoTime()}) at most: the registry's close gives
   * all its registrars one bound, as documented.
   */
  void registryClosing(long deadline) {
    deregister(true, deadline);
  }

  private synchronized void deregister(boolean registryClosing, @Nullable Long until) {
    long deadline = until != null ? until : System.nanoTime() + registry.connectionTimeout().toNanos();
    registry.live(this, false);
    List<PersistentNode> closing = List.copyOf(nodes);
    List<String> closingPaths = List.copyOf(paths);
    nodes.clear();
    paths.clear();
    ConnectionStateListener lines = connectionLines;
    connectionLines = null;
    if (lines != null) {
      registry.curator().getConnectionStateListenable().removeListener(lines);
    }
    Endpoint e = registered;
    registered = null;
    if (closing.isEmpty()) {
      return;
    }
    if (registryClosing) {
      log.info("the ZooKeeper registry of {} is closing while the server still serves: deregistering it for {}"
          + " first (close a registry after the server it registers)", e, registeredServices);
    }
    CompletableFuture<Void> deleted = new CompletableFuture<>();
    // On ZooKeeper's event thread (closed from a Curator callback), the callback that ends a node's creation
    // cannot run while this waits: waiting for it would always last the whole bound.
    boolean callbacksRun = !ZooKeeperRegistry.onZooKeeperEventThread();
    Thread t = new Thread(() -> {
      for (int i = 0; i < closing.size(); i++) {
        try {
          PersistentNode node = closing.get(i);
          if (callbacksRun && registry.curator().getZookeeperClient().isConnected()) {
            // A node closed while Curator still creates it is created afterwards and then deleted in the
            // background by Curator, which fails with an ERROR ("Could not delete node after close") once the
            // registry has closed too: let a creation ZooKeeper is answering end first, within the same bound.
            node.waitForInitialCreate(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
          }
          node.close();
        } catch (InterruptedException ex) {
          Thread.currentThread().interrupt();
          break;
        } catch (IOException | RuntimeException ex) {
          if (registry.curator().getState() == CuratorFrameworkState.STOPPED) {
            // The registry was closed (the server's shutdown went on after the connection timeout) before
            // ZooKeeper answered: the delete cannot be sent any more.
            log.info("ZooKeeper node {} was not deleted: the registry was closed before ZooKeeper answered. ZooKeeper"
                + " deletes it when the registry's session expires (its session timeout after the registry last"
                + " reached it); clients skip the server meanwhile since it no longer answers", closingPaths.get(i));
          } else {
            log.warn("could not delete ZooKeeper node {} ({}); it goes when the registry's session ends",
                closingPaths.get(i), String.valueOf(ex.getCause() != null ? ex.getCause() : ex));
          }
        }
      }
      deleted.complete(null);
    }, "petrel-zk-deregister");
    t.setDaemon(true);
    t.start();
    try {
      deleted.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      log.info("deregistered {} from ZooKeeper for {}", e, registeredServices);
    } catch (TimeoutException ex) {
      log.warn("ZooKeeper did not confirm the deregistration of {} for {} within {} ms; draining anyway (the"
          + " nodes go when ZooKeeper answers or the session ends)", e, registeredServices,
          registry.connectionTimeout().toMillis());
    } catch (InterruptedException ex) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException ex) {
      log.warn("deregistering {} failed", e, ex.getCause());
    }
  }

  /** The endpoint registered now, or null when not registered. */
  public synchronized @Nullable Endpoint registered() {
    return registered;
  }

  /** This host's address, as {@link InetAddress#getLocalHost()} gives it (tests give another). */
  interface LocalHost {
    InetAddress get() throws UnknownHostException;
  }

  /**
   * The host a registrar advertises, as clients read it ({@code host}), or, when it would not register one (null),
   * why not and what to set ({@code refused}, the ERROR's text after "not registering [...] in ZooKeeper: ").
   */
  record Advertised(@Nullable String host, String refused) {}

  /** What a refusal adds when the host came from the server's bound address. */
  static final String FROM_BOUND_ADDRESS = "It is the address the server is bound to"
      + " (RpcServer.builder().bindAddress(...)), which the registrar advertises when no host is set on it: bind the"
      + " server to an address clients on other machines can use, or to all addresses (RpcServer.builder().port(...))"
      + " and set that address with ZooKeeperRegistrar.Builder.host(...)";
  /** What a refusal adds when the host came from this host's address (the server listens on all addresses). */
  static final String FROM_LOCAL_HOST = "It is this host's address as InetAddress.getLocalHost() gives it, which"
      + " the registrar advertises when the server listens on all addresses and no host is set on it: set the address"
      + " clients should use with ZooKeeperRegistrar.Builder.host(...) (registry.registrar(...).host(\"10.0.0.7\")),"
      + " a global address or a host name clients on other machines can use, or map this host's name to such an"
      + " address (DNS, /etc/hosts)";
  /** What a refusal adds when the host was set (not reached: Builder.host makes the same checks). */
  static final String FROM_BUILDER = "It was set with ZooKeeperRegistrar.Builder.host(...): set a global address or a"
      + " host name clients on other machines can use";

  /**
   * The host to advertise: {@code configured} ({@link Builder#host}), else the bound address, else, when the server
   * listens on all addresses, this host's address ({@link #localHostAddress}), written as clients read it (one
   * spelling per address, so that the node's name and its data agree). Refused, saying where it came from and what
   * to set instead, when clients would skip its node or could use it only on this machine
   * ({@link #onThisMachineOnly}).
   */
  static Advertised hostToAdvertise(@Nullable String configured, InetSocketAddress bound, LocalHost localHost) {
    InetAddress a = bound.getAddress();
    String raw;
    String from;
    if (configured != null) {
      raw = configured;
      from = FROM_BUILDER;
    } else if (a != null && !a.isAnyLocalAddress()) {
      raw = a.getHostAddress();
      from = FROM_BOUND_ADDRESS;
    } else {
      raw = localHostAddress(localHost);
      from = FROM_LOCAL_HOST;
    }
    String checked;
    try {
      checked = RegistryNode.checkHost(raw);
    } catch (IllegalArgumentException bad) {
      return new Advertised(null, "the host to advertise " + String.valueOf(bad.getMessage())
          .replace("field 'host' is ", "is ") + "; clients would skip its node. " + from);
    }
    String local = onThisMachineOnly(checked);
    if (local != null) {
      return new Advertised(null, "the host to advertise, " + checked + ", " + local + ". " + from);
    }
    return new Advertised(checked, "");
  }

  /**
   * This host's address (the server listens on all addresses), with a WARN if that is a loopback one. A server
   * bound to a loopback address gets no WARN: only its own machine can connect to it, whatever it advertised, and
   * such a bind is a deliberate local setup (docs/cluster.md).
   */
  private static String localHostAddress(LocalHost localHost) {
    try {
      InetAddress local = localHost.get();
      if (local.isLoopbackAddress()) {
        log.warn("the server listens on all addresses, and this host's address (InetAddress.getLocalHost()) is"
            + " {}, a loopback address: other machines cannot reach it there. Set ZooKeeperRegistrar.Builder"
            + ".host(...) to the address clients should use (or map this host's name to it)",
            local.getHostAddress());
      }
      return local.getHostAddress();
    } catch (UnknownHostException e) {
      throw new IllegalStateException("the server listens on all addresses and this host's address cannot be"
          + " found (" + e.getMessage() + "); set ZooKeeperRegistrar.Builder.host(...)", e);
    }
  }

  /**
   * Why {@code host} (as {@link RegistryNode#checkHost} writes it) cannot be used by a client on another machine
   * although it is an address, or null: an IPv6 address with a scope id ({@code fe80::1%eth0}: the scope names an
   * interface of this machine, meaningless on the client's, where it names another interface or none), or a
   * link-local one without it (fe80::/10: usable only with the scope of an interface on the client's machine,
   * which a registry cannot give each client). Not registered rather than stripped: a link-local address without
   * its scope still fails on clients with several interfaces, and one on another link cannot reach it at all.
   * Loopback addresses are taken (a local setup, docs/cluster.md).
   */
  static @Nullable String onThisMachineOnly(String host) {
    if (host.indexOf(':') < 0) {
      return null; // IPv4, or a host name
    }
    int percent = host.indexOf('%');
    if (percent >= 0) {
      return "is an IPv6 address with a scope id (" + host.substring(percent) + "), which names an interface of"
          + " this machine: clients on other machines cannot use it";
    }
    try {
      if (InetAddress.getByName(host).isLinkLocalAddress()) { // a literal: parsed, never looked up
        return "is a link-local IPv6 address (fe80::/10), which clients can use only with the scope id of an"
            + " interface of their own machine";
      }
    } catch (UnknownHostException e) {
      return null; // checkHost took it: not reached
    }
    return null;
  }

  /** What a registrar registers besides the server's port. */
  public static final class Builder {
    private final ZooKeeperRegistry registry;
    private final List<String> services;
    private @Nullable String host;
    private int weight = Endpoint.DEFAULT_WEIGHT;
    private @Nullable String zone;
    private @Nullable String version;
    private final Map<String, String> metadata = new LinkedHashMap<>();

    Builder(ZooKeeperRegistry registry, List<String> services) {
      if (services.isEmpty()) {
        throw new IllegalArgumentException("a registrar needs at least one service name");
      }
      services.forEach(ZooKeeperRegistry::checkService);
      this.registry = registry;
      this.services = services;
    }

    /**
     * The host clients connect to (default: the server's bound address, or, when it listens on all addresses,
     * this host's address as {@link InetAddress#getLocalHost()} gives it).
     */
    public Builder host(String host) {
      Objects.requireNonNull(host, "host");
      if (host.isBlank()) {
        throw new IllegalArgumentException("host is empty");
      }
      try {
        host = RegistryNode.checkHost(host); // the spelling clients read: the node's name and data agree
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("host "
            + String.valueOf(e.getMessage()).replace("field 'host' is ", "is ")
            + " (clients accept an IPv4 or IPv6 address or a host name)", e);
      }
      String local = onThisMachineOnly(host);
      if (local != null) {
        throw new IllegalArgumentException("host " + host + " " + local + "; advertise a global address or a host"
            + " name that clients on other machines can use");
      }
      this.host = host;
      return this;
    }

    /** The weight load balancers give the server (default 1, at most {@value Endpoint#MAX_WEIGHT}). */
    public Builder weight(int weight) {
      if (weight < 1 || weight > Endpoint.MAX_WEIGHT) {
        throw new IllegalArgumentException("weight must be 1.." + Endpoint.MAX_WEIGHT + ": " + weight);
      }
      this.weight = weight;
      return this;
    }

    /** The zone (or data center) the server runs in; {@link Endpoint#zone()} on the clients. */
    public Builder zone(String zone) {
      this.zone = Objects.requireNonNull(zone, "zone");
      return this;
    }

    /** The server's version; {@link Endpoint#version()} on the clients. */
    public Builder version(String version) {
      this.version = Objects.requireNonNull(version, "version");
      return this;
    }

    /** A further attribute; {@link Endpoint#attribute(String)} on the clients. */
    public Builder metadata(String name, String value) {
      Objects.requireNonNull(name, "metadata name");
      Objects.requireNonNull(value, "metadata value");
      metadata.put(name, value);
      return this;
    }

    public ZooKeeperRegistrar build() {
      return new ZooKeeperRegistrar(this);
    }
  }
}
