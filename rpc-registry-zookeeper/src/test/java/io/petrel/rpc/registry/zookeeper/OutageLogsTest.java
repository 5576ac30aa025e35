package io.petrel.rpc.registry.zookeeper;

import static io.petrel.rpc.registry.zookeeper.Greeters.SERVICE;
import static io.petrel.rpc.registry.zookeeper.Greeters.WHO;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.registry.zookeeper.Greeters.Server;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * What a user reads in the logs when ZooKeeper goes away, comes back, or expires a session: a Petrel line saying
 * what happened and what Petrel does, and no Curator ERROR caused by the order in which Petrel closes things.
 */
class OutageLogsTest {
  private final List<ILoggingEvent> logged = new CopyOnWriteArrayList<>();
  private final List<Watch> watches = new CopyOnWriteArrayList<>();
  private final AppenderBase<ILoggingEvent> appender = new AppenderBase<>() {
    @Override
    protected void append(ILoggingEvent event) {
      if (event.getLevel().isGreaterOrEqual(Level.INFO)) {
        logged.add(event);
        for (Watch w : watches) {
          if (event.getFormattedMessage().contains(w.text)) {
            w.seen.complete(event);
          }
        }
      }
    }
  };

  private record Watch(String text, CompletableFuture<ILoggingEvent> seen) {}

  @BeforeEach
  void watchLogs() {
    appender.start();
    root().addAppender(appender);
  }

  @AfterEach
  void stopWatchingLogs() {
    root().detachAppender(appender);
  }

  private static ch.qos.logback.classic.Logger root() {
    return (ch.qos.logback.classic.Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
  }

  /** Completes with the first line logged from now on that contains {@code text}. */
  private CompletableFuture<ILoggingEvent> logs(String text) {
    Watch w = new Watch(text, new CompletableFuture<>());
    watches.add(w);
    return w.seen;
  }

  private static ZooKeeperRegistry registry(TestingServer zk) {
    return ZooKeeperRegistry.builder().connectString(zk.getConnectString()).sessionTimeout(Duration.ofSeconds(3))
        .connectionTimeout(Duration.ofSeconds(1)).build();
  }

  private static CountDownLatch on(ZooKeeperRegistry r, ConnectionState wanted) {
    CountDownLatch l = new CountDownLatch(1);
    r.curator().getConnectionStateListenable().addListener((c, s) -> {
      if (s == wanted) {
        l.countDown();
      }
    });
    return l;
  }

  /**
   * ZooKeeper stops; then the server shuts down (its deregistration times out), the client closes, and both
   * registries close while ZooKeeper is still down, in the documented order (clients before their registry).
   * Before, Curator logged ERROR "CuratorCache error" (a SessionExpiredException with a stack trace) for the
   * resolver's reads still pending, and the registrar "could not delete ZooKeeper node null" with a stack trace.
   */
  @Test
  void closingEverythingWhileZooKeeperIsDownLogsNoErrorAndNamesTheNodeLeft() throws Exception {
    try (TestingServer zk = new TestingServer()) {
      ZooKeeperRegistry serverSide = registry(zk);
      ZooKeeperRegistry clientSide = registry(zk);
      Server a = new Server("a", serverSide.registrar(SERVICE).build(), Duration.ZERO);
      RpcClient client = RpcClient.builder().nameResolver(clientSide.target(SERVICE), clientSide.resolver(SERVICE))
          .build();
      client.unaryCall(WHO, new byte[0]);
      // An outage longer than the session timeout (Curator ends the sessions itself), ZooKeeper back, then each
      // session expired by ZooKeeper: what a bad day brings, before the outage during which all is closed.
      CountDownLatch lost = on(serverSide, ConnectionState.LOST);
      CountDownLatch clientLost = on(clientSide, ConnectionState.LOST);
      zk.stop();
      assertThat(lost.await(30, TimeUnit.SECONDS) && clientLost.await(30, TimeUnit.SECONDS)).isTrue();
      CountDownLatch back = on(serverSide, ConnectionState.RECONNECTED);
      CountDownLatch clientBack = on(clientSide, ConnectionState.RECONNECTED);
      zk.restart();
      assertThat(back.await(30, TimeUnit.SECONDS) && clientBack.await(30, TimeUnit.SECONDS)).isTrue();
      back = on(serverSide, ConnectionState.RECONNECTED);
      ZooKeeperSessions.expire(serverSide.curator(), zk);
      assertThat(back.await(30, TimeUnit.SECONDS)).isTrue();
      clientBack = on(clientSide, ConnectionState.RECONNECTED);
      ZooKeeperSessions.expire(clientSide.curator(), zk);
      assertThat(clientBack.await(30, TimeUnit.SECONDS)).isTrue();
      client.unaryCall(WHO, new byte[0]);

      String node = serverSide.servicePath(SERVICE) + "/127.0.0.1:" + a.server.port();
      CompletableFuture<ILoggingEvent> notDeleted = logs("ZooKeeper node " + node + " was not deleted");
      zk.stop();
      a.server.shutdown(); // the deregistration waits the connection timeout (1 s), then drains
      assertThat(a.server.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
      client.close();
      serverSide.close();
      clientSide.close();
      assertThat(logged).filteredOn(e -> e.getLevel() == Level.ERROR)
          .extracting(e -> e.getLoggerName() + ": " + e.getFormattedMessage()).isEmpty();
      assertThat(notDeleted.get(10, TimeUnit.SECONDS).getFormattedMessage())
          .contains("ZooKeeper deletes it when the registry's session expires");
      assertThat(logged).extracting(ILoggingEvent::getFormattedMessage).noneMatch(m -> m.contains("node null"));
    }
  }

  /** A server's and a client's sessions expire: each says what it means for it, in one line. */
  @Test
  void serverAndClientSayWhenTheirSessionsEndAndWhatTheyDo() throws Exception {
    try (TestingServer zk = new TestingServer(); ZooKeeperRegistry serverSide = registry(zk);
        ZooKeeperRegistry clientSide = registry(zk);
        Server a = new Server("a", serverSide.registrar(SERVICE).build(), Duration.ZERO)) {
      Greeters.Recording resolver = new Greeters.Recording(clientSide.resolver(SERVICE));
      try (RpcClient client = RpcClient.builder().nameResolver(clientSide.target(SERVICE), resolver).build()) {
        client.unaryCall(WHO, new byte[0]);
        String authority = "127.0.0.1:" + a.server.port();

        CompletableFuture<ILoggingEvent> serverEnded =
            logs("the ZooKeeper session holding the nodes of " + authority);
        CompletableFuture<ILoggingEvent> again = logs("registered " + authority + " in ZooKeeper again");
        ZooKeeperSessions.expire(serverSide.curator(), zk);
        assertThat(serverEnded.get(20, TimeUnit.SECONDS).getLevel()).isEqualTo(Level.WARN);
        assertThat(again.get(20, TimeUnit.SECONDS).getLevel()).isEqualTo(Level.INFO);
        // The client may have dropped the server while its node was gone (after its removal delay): it lists it
        // again once its cache has seen the new node, which the next expiry must not overtake.
        resolver.until(Greeters.listing(a)).get(20, TimeUnit.SECONDS);

        CompletableFuture<ILoggingEvent> clientEnded =
            logs("the ZooKeeper session of " + clientSide.target(SERVICE) + " ended");
        ZooKeeperSessions.expire(clientSide.curator(), zk);
        assertThat(clientEnded.get(20, TimeUnit.SECONDS).getFormattedMessage()).contains("keeping the 1 endpoint(s)");

        CompletableFuture<ILoggingEvent> serverLost = logs("lost the connection to ZooKeeper");
        CompletableFuture<ILoggingEvent> serverBack = logs("within the session: the nodes of " + authority);
        zk.restart(); // a short outage: the sessions live on
        assertThat(serverLost.get(20, TimeUnit.SECONDS).getFormattedMessage())
            .contains(authority + " stays registered");
        assertThat(serverBack.get(20, TimeUnit.SECONDS).getLevel()).isEqualTo(Level.INFO);
        client.unaryCall(WHO, new byte[0]);
      }
    }
  }

  /**
   * A server started while ZooKeeper is down, for longer than Curator's retries (10, up to 2 s apart): Curator
   * logs ERROR "Background operation retry gave up" for the node it could not create. Petrel now says once what
   * that means, and the registrar does not claim the server "stays registered" when it never was; the node is
   * created when ZooKeeper returns.
   */
  @Test
  void curatorGivingUpDuringAnOutageIsExplainedOnce() throws Exception {
    try (TestingServer zk = new TestingServer()) {
      zk.stop();
      CompletableFuture<ILoggingEvent> curatorError = logs("retry gave up");
      CompletableFuture<ILoggingEvent> explained = logs("failed through all of Curator's retries");
      try (ZooKeeperRegistry serverSide = registry(zk);
          Server a = new Server("a", serverSide.registrar(SERVICE).build(), Duration.ZERO)) {
        assertThat(curatorError.get(60, TimeUnit.SECONDS).getLevel()).isEqualTo(Level.ERROR);
        assertThat(explained.get(10, TimeUnit.SECONDS).getFormattedMessage())
            .contains("servers' nodes are created again");
        CountDownLatch connected = on(serverSide, ConnectionState.CONNECTED);
        zk.restart();
        assertThat(connected.await(20, TimeUnit.SECONDS)).isTrue();
        try (ZooKeeperRegistry clientSide = registry(zk)) {
          Greeters.Recording resolver = new Greeters.Recording(clientSide.resolver(SERVICE));
          try (RpcClient client = RpcClient.builder().nameResolver(clientSide.target(SERVICE), resolver).build()) {
            resolver.until(Greeters.listing(a)).get(20, TimeUnit.SECONDS);
          }
        }
        assertThat(logged).extracting(ILoggingEvent::getFormattedMessage)
            .noneMatch(m -> m.contains("stays registered"))
            .filteredOn(m -> m.contains("failed through all of Curator's retries")).hasSize(1);
      }
    }
  }

  /**
   * A server restarted at the same address before its old session ended (a crash, then a restart within the
   * session timeout): its node is still the old session's. Before, the new server said only "registered ... in
   * ZooKeeper"; now it says whose node it is and what happens next. When the old session ends the node is created
   * in the new server's session. Then, and only then, it says "registered" (before, it said so at once, 4 ms
   * before saying the node was still the old one's, and nothing at the takeover). Bound to 127.0.0.1 on purpose,
   * the address it advertises is loopback without a WARN (docs/cluster.md: only a wildcard bind gets one).
   */
  @Test
  void aServerRestartedBeforeItsOldSessionEndedSaysWhoseNodeItIs() throws Exception {
    try (TestingServer zk = new TestingServer(); ZooKeeperRegistry old = registry(zk);
        ZooKeeperRegistry fresh = registry(zk)) {
      int port;
      try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
        port = s.getLocalPort(); // the address the "crashed" server had: free again
      }
      String node = old.servicePath(SERVICE) + "/127.0.0.1:" + port;
      old.curator().create().creatingParentContainersIfNeeded().withMode(org.apache.zookeeper.CreateMode.EPHEMERAL)
          .forPath(node, RegistryNode.encode(io.petrel.rpc.Endpoint.of("127.0.0.1", port)));
      String oldSession = "0x" + Long.toHexString(old.curator().getZookeeperClient().getZooKeeper().getSessionId());
      CompletableFuture<ILoggingEvent> stillOld = logs("ZooKeeper node " + node + " is still the one of session "
          + oldSession);
      CompletableFuture<ILoggingEvent> tookOver = logs("took over the address");
      io.petrel.rpc.ServiceDefinition def = io.petrel.rpc.ServiceDefinition.builder(SERVICE).unary(WHO, req -> req)
          .build();
      io.petrel.rpc.RpcServer server = io.petrel.rpc.RpcServer.builder().bindAddress("127.0.0.1", port)
          .addService(def).addLifecycleListener(fresh.registrar(SERVICE).weight(3).version("1.0.0").build())
          .drainDelay(Duration.ZERO).build().start();
      try {
        assertThat(stillOld.get(5, TimeUnit.SECONDS).getLevel()).isEqualTo(Level.INFO);
        assertThat(stillOld.get().getFormattedMessage()).contains("127.0.0.1:" + port + " is not registered for "
            + SERVICE + " yet");
        assertThat(registrarLines()).as("start() has returned: nothing says it is registered")
            .noneMatch(m -> m.contains("registered 127.0.0.1:" + port));
        ZooKeeperSessions.expire(old.curator(), zk);
        ILoggingEvent registered = tookOver.get(20, TimeUnit.SECONDS);
        assertThat(registered.getLevel()).isEqualTo(Level.INFO);
        assertThat(registered.getFormattedMessage())
            .startsWith("registered 127.0.0.1:" + port + ";weight=3;version=1.0.0 in ZooKeeper for " + SERVICE
                + " (node " + node + "): took over the address after the node of session " + oldSession)
            .containsPattern("went with that session, \\d+ ms after this server started registering");
        long mine = fresh.curator().getZookeeperClient().getZooKeeper().getSessionId();
        org.apache.zookeeper.data.Stat st = fresh.curator().checkExists().forPath(node); // created when it says so
        assertThat(st).isNotNull();
        assertThat(st.getEphemeralOwner()).as("the node, created again in the new server's session").isEqualTo(mine);
        List<String> lines = registrarLines();
        assertThat(lines).filteredOn(m -> m.contains("registered 127.0.0.1:" + port))
            .as("one registered line, the takeover's").hasSize(1);
        assertThat(lines).as("the registrar's lines, in order").hasSize(2);
        assertThat(lines.get(0)).isEqualTo(stillOld.get().getFormattedMessage());
        assertThat(lines.get(1)).isEqualTo(registered.getFormattedMessage());
      } finally {
        server.close();
      }
    }
  }

  /** What the registrar logged so far (INFO and above), in order. */
  private List<String> registrarLines() {
    return logged.stream().filter(e -> e.getLoggerName().equals(ZooKeeperRegistrar.class.getName()))
        .map(ILoggingEvent::getFormattedMessage).toList();
  }
}
