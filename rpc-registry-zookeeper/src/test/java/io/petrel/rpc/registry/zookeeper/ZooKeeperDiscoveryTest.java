package io.petrel.rpc.registry.zookeeper;

import static io.petrel.rpc.registry.zookeeper.Greeters.SERVICE;
import static io.petrel.rpc.registry.zookeeper.Greeters.WHO;
import static io.petrel.rpc.registry.zookeeper.Greeters.listing;
import static io.petrel.rpc.registry.zookeeper.Greeters.without;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import io.petrel.rpc.Endpoint;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.registry.zookeeper.Greeters.Recording;
import io.petrel.rpc.registry.zookeeper.Greeters.Server;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.RetryPolicy;
import org.apache.curator.RetrySleeper;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Discovery through a real ZooKeeper (Curator's TestingServer on a random port) and real servers on loopback. */
class ZooKeeperDiscoveryTest {
  private static final byte[] EMPTY = new byte[0];
  private static final AtomicInteger PATHS = new AtomicInteger();
  private static TestingServer zk;

  @BeforeAll
  static void startZooKeeper() throws Exception {
    zk = new TestingServer();
  }

  @AfterAll
  static void stopZooKeeper() throws Exception {
    zk.close();
  }

  /** A registry of its own (a session of its own) under a base path no other test uses. */
  private static ZooKeeperRegistry registry(TestingServer server, String base) {
    return ZooKeeperRegistry.builder().connectString(server.getConnectString()).basePath(base).build();
  }

  private static String newBase() {
    return "/petrel-" + PATHS.incrementAndGet();
  }

  private static String call(RpcClient client) {
    return new String(client.unaryCall(WHO, EMPTY), StandardCharsets.UTF_8);
  }

  @Test
  void aServerThatRegistersGetsCallsWithinOneSecond() throws Exception {
    String base = newBase();
    try (ZooKeeperRegistry clientSide = registry(zk, base); ZooKeeperRegistry regA = registry(zk, base);
        ZooKeeperRegistry regB = registry(zk, base);
        Server a = new Server("a", regA.registrar(SERVICE).build(), Duration.ZERO)) {
      Recording resolver = new Recording(clientSide.resolver(SERVICE));
      try (RpcClient client = RpcClient.builder().nameResolver(clientSide.target(SERVICE), resolver).build()) {
        assertThat(call(client)).isEqualTo("a"); // build() waited for the first list
        try (Server b = new Server("b", regB.registrar(SERVICE).build(), Duration.ZERO)) {
          long registered = System.nanoTime(); // start() returns once the node is in ZooKeeper
          long limit = registered + TimeUnit.SECONDS.toNanos(1);
          int calls = 0;
          while (b.calls.get() == 0 && System.nanoTime() - limit < 0) {
            call(client);
            calls++;
          }
          long firstCallMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - registered);
          assertThat(b.calls.get()).as("calls to b within 1 s of its registration (%d calls made)", calls)
              .isPositive();
          assertThat(firstCallMs).isLessThan(1000);
        }
      }
    }
  }

  @Test
  void aServerThatLeavesGetsNoCallsOneSecondAfterItDeregisters() throws Exception {
    String base = newBase();
    try (ZooKeeperRegistry clientSide = registry(zk, base); ZooKeeperRegistry regA = registry(zk, base);
        ZooKeeperRegistry regB = registry(zk, base);
        Server a = new Server("a", regA.registrar(SERVICE).build(), Duration.ZERO);
        // b keeps serving for 1 s after it deregisters: calls stop because clients drop it, not because of GOAWAY
        Server b = new Server("b", regB.registrar(SERVICE).build(), Duration.ofSeconds(1))) {
      Recording resolver = new Recording(clientSide.resolver(SERVICE));
      try (RpcClient client = RpcClient.builder().nameResolver(clientSide.target(SERVICE), resolver)
          .loadBalancer("round_robin").build()) {
        resolver.until(listing(a, b)).get(5, TimeUnit.SECONDS);
        for (int i = 0; i < 20; i++) {
          call(client);
        }
        assertThat(b.calls.get()).isPositive();
        long left = System.nanoTime();
        b.server.shutdown(); // deregisters first, then waits its drain delay
        List<Endpoint> after = resolver.until(without(b)).get(1, TimeUnit.SECONDS);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - left)).isLessThan(1000);
        assertThat(after).extracting(Endpoint::port).containsExactly(a.server.port());
        assertThat(b.server.isTerminated()).as("b still serves during its drain delay").isFalse();
        int bCalls = b.calls.get();
        int aCalls = a.calls.get();
        for (int i = 0; i < 200; i++) {
          assertThat(call(client)).isEqualTo("a");
        }
        assertThat(b.calls.get()).isEqualTo(bCalls);
        assertThat(a.calls.get()).isEqualTo(aCalls + 200);
      }
    }
  }

  @Test
  void callsGoOnToTheLastKnownServersWhileZooKeeperIsDownAndAfterItRestarts() throws Exception {
    try (TestingServer own = new TestingServer()) {
      String base = newBase();
      try (ZooKeeperRegistry clientSide = registry(own, base); ZooKeeperRegistry regA = registry(own, base);
          ZooKeeperRegistry regB = registry(own, base);
          Server a = new Server("a", regA.registrar(SERVICE).build(), Duration.ZERO);
          Server b = new Server("b", regB.registrar(SERVICE).build(), Duration.ZERO)) {
        CountDownLatch suspended = new CountDownLatch(1);
        CountDownLatch reconnected = new CountDownLatch(1);
        clientSide.curator().getConnectionStateListenable().addListener((c, state) -> {
          if (state == ConnectionState.SUSPENDED) {
            suspended.countDown();
          } else if (state == ConnectionState.RECONNECTED) {
            reconnected.countDown();
          }
        });
        Recording resolver = new Recording(clientSide.resolver(SERVICE));
        try (RpcClient client = RpcClient.builder().nameResolver(clientSide.target(SERVICE), resolver)
            .loadBalancer("round_robin").build()) {
          resolver.until(listing(a, b)).get(5, TimeUnit.SECONDS);
          int listsBefore = resolver.lists.size();

          own.stop();
          assertThat(suspended.await(10, TimeUnit.SECONDS)).as("the client saw ZooKeeper go").isTrue();
          Map<String, Integer> down = new HashMap<>();
          for (int i = 0; i < 200; i++) {
            down.merge(call(client), 1, Integer::sum);
          }
          assertThat(down).containsOnlyKeys("a", "b");

          own.restart();
          assertThat(reconnected.await(20, TimeUnit.SECONDS)).as("the client reconnected").isTrue();
          Map<String, Integer> back = new HashMap<>();
          for (int i = 0; i < 200; i++) {
            back.merge(call(client), 1, Integer::sum);
          }
          assertThat(back).containsOnlyKeys("a", "b");
          // Every list the client was given, before, during and after the outage, had both servers.
          assertThat(resolver.lists).allSatisfy(list -> assertThat(listing(a, b).test(list)).isTrue());
          assertThat(resolver.lists.size()).isEqualTo(listsBefore);
          assertThat(resolver.errors).isEmpty();
        }
      }
    }
  }

  /** Completes when the registrar logs a line containing {@code text}; remove with {@link #stopWatching}. */
  private static CompletableFuture<ILoggingEvent> registrarLogs(String text) {
    CompletableFuture<ILoggingEvent> seen = new CompletableFuture<>();
    AppenderBase<ILoggingEvent> appender = new AppenderBase<>() {
      @Override
      protected void append(ILoggingEvent event) {
        if (event.getFormattedMessage().contains(text)) {
          seen.complete(event);
        }
      }
    };
    appender.setName("watch-" + text);
    appender.start();
    registrarLogger().addAppender(appender);
    seen.whenComplete((e, t) -> registrarLogger().detachAppender(appender));
    return seen;
  }

  private static ch.qos.logback.classic.Logger registrarLogger() {
    return (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(ZooKeeperRegistrar.class);
  }

  @Test
  void aRegistrarDoesNotRegisterAServiceItsServerDoesNotServe() throws Exception {
    String base = newBase();
    CompletableFuture<ILoggingEvent> refused = registrarLogs("not registering demo.Greeterr");
    try (ZooKeeperRegistry clientSide = registry(zk, base); ZooKeeperRegistry regA = registry(zk, base);
        Server a = new Server("a", regA.registrar(SERVICE, "demo.Greeterr").build(), Duration.ZERO)) {
      CuratorFramework c = clientSide.curator();
      String node = "/127.0.0.1:" + a.server.port();
      // onServing ran before start() returned: the served service's node is there, the misspelt one's is not.
      assertThat(c.checkExists().forPath(clientSide.servicePath(SERVICE) + node)).isNotNull();
      assertThat(c.checkExists().forPath(clientSide.servicePath("demo.Greeterr") + node)).isNull();
      ILoggingEvent e = refused.get(5, TimeUnit.SECONDS);
      assertThat(e.getLevel()).isEqualTo(Level.ERROR);
      assertThat(e.getFormattedMessage()).contains("this server does not serve it (it serves [demo.Greeter])",
          "UNIMPLEMENTED");
    } finally {
      refused.cancel(false);
    }
  }

  @Test
  void aServerWhoseSessionExpiresRegistersAgain() throws Exception {
    String base = newBase();
    CompletableFuture<ILoggingEvent> again = registrarLogs("in ZooKeeper again for " + SERVICE);
    try (ZooKeeperRegistry clientSide = registry(zk, base); ZooKeeperRegistry regA = registry(zk, base);
        Server a = new Server("a", regA.registrar(SERVICE).build(), Duration.ZERO);
        CuratorCache watch = CuratorCache.build(clientSide.curator(), clientSide.servicePath(SERVICE))) {
      String node = clientSide.servicePath(SERVICE) + "/127.0.0.1:" + a.server.port();
      Stat before = clientSide.curator().checkExists().forPath(node);
      assertThat(before).isNotNull();
      CountDownLatch deleted = new CountDownLatch(1);
      CountDownLatch recreated = new CountDownLatch(1);
      // Created again: a create event, or a change if the cache saw the new node before the deletion.
      watch.listenable().addListener(CuratorCacheListener.builder().forDeletes(d -> {
        if (d.getPath().equals(node)) {
          deleted.countDown();
        }
      }).forCreatesAndChanges((old, d) -> {
        if (d.getPath().equals(node) && d.getStat().getEphemeralOwner() != before.getEphemeralOwner()) {
          recreated.countDown();
        }
      }).build());
      watch.start();
      Recording resolver = new Recording(clientSide.resolver(SERVICE));
      try (RpcClient client = RpcClient.builder().nameResolver(clientSide.target(SERVICE), resolver).build()) {
        assertThat(call(client)).isEqualTo("a");

        ZooKeeperSessions.expire(regA.curator(), zk);
        assertThat(deleted.await(10, TimeUnit.SECONDS)).as("the expiry deleted the node").isTrue();
        assertThat(recreated.await(10, TimeUnit.SECONDS)).as("the node is created again in a new session")
            .isTrue();
        Stat after = clientSide.curator().checkExists().forPath(node);
        assertThat(after.getEphemeralOwner()).isNotEqualTo(before.getEphemeralOwner())
            .isEqualTo(regA.curator().getZookeeperClient().getZooKeeper().getSessionId());
        resolver.until(listing(a)).get(5, TimeUnit.SECONDS);
        assertThat(call(client)).isEqualTo("a");
        assertThat(again.get(10, TimeUnit.SECONDS).getFormattedMessage()).as("the registrar says so")
            .contains("the ZooKeeper session that held its node ended");
      }
    } finally {
      again.cancel(false);
    }
  }

  @Test
  void aClientWhoseSessionExpiresKeepsItsEndpoints() throws Exception {
    String base = newBase();
    try (ZooKeeperRegistry clientSide = registry(zk, base); ZooKeeperRegistry regA = registry(zk, base);
        Server a = new Server("a", regA.registrar(SERVICE).build(), Duration.ZERO)) {
      CountDownLatch reconnected = new CountDownLatch(1);
      clientSide.curator().getConnectionStateListenable().addListener((c, state) -> {
        if (state == ConnectionState.RECONNECTED) {
          reconnected.countDown();
        }
      });
      Recording resolver = new Recording(clientSide.resolver(SERVICE));
      try (RpcClient client = RpcClient.builder().nameResolver(clientSide.target(SERVICE), resolver).build()) {
        assertThat(call(client)).isEqualTo("a");
        ZooKeeperSessions.expire(clientSide.curator(), zk);
        assertThat(reconnected.await(10, TimeUnit.SECONDS)).isTrue();
        for (int i = 0; i < 50; i++) {
          assertThat(call(client)).isEqualTo("a");
        }
        assertThat(resolver.lists).allSatisfy(list -> assertThat(listing(a).test(list)).isTrue());
      }
    }
  }

  @Test
  void aServerShuttingDownWhileZooKeeperIsDownWaitsForItOnlyTheConnectionTimeout() throws Exception {
    try (TestingServer own = new TestingServer();
        ZooKeeperRegistry reg = ZooKeeperRegistry.builder().connectString(own.getConnectString())
            .connectionTimeout(Duration.ofSeconds(1)).build()) {
      Server a = new Server("a", reg.registrar(SERVICE).build(), Duration.ZERO);
      own.stop();
      long t = System.nanoTime();
      a.server.shutdown(); // onDraining cannot delete the node: it gives up after the connection timeout
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t);
      assertThat(a.server.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
      // At most the connection timeout (plus slack): it is less when the registry has already seen the
      // connection go (it then knows it cannot delete the node, which leaves with the session anyway).
      assertThat(ms).isLessThanOrEqualTo(3000L);
    }
  }

  /**
   * The registrar's checks at the start (whose node it is, whose parent refuses it) wait at most a second for
   * ZooKeeper. Their call on Curator's ZooKeeper handle ran outside that bound: a handle that blocks there (here,
   * one whose plain exists blocks under this test's path; Curator's own getZooKeeper() can, while it makes a new
   * handle or closes the old one) held the server's start() for as long. Now the start returns within the bound.
   */
  @Test
  void aBlockedZooKeeperHandleDoesNotHoldTheStartPastTheChecksBound() throws Exception {
    String base = newBase();
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger blocked = new AtomicInteger();
    org.apache.curator.utils.ZookeeperFactory blocking = (connect, timeout, watcher, readOnly) ->
        new org.apache.zookeeper.ZooKeeper(connect, timeout, watcher, readOnly) {
          @Override
          public void exists(String path, boolean watch, org.apache.zookeeper.AsyncCallback.StatCallback cb,
              Object ctx) {
            if (!watch && path.startsWith(base + "/")) { // Curator's own (watched, or with a watcher) go on
              blocked.incrementAndGet();
              try {
                release.await(30, TimeUnit.SECONDS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            }
            super.exists(path, watch, cb, ctx);
          }
        };
    try (CuratorFramework own = org.apache.curator.framework.CuratorFrameworkFactory.builder()
        .connectString(zk.getConnectString()).connectionTimeoutMs(2_000).zookeeperFactory(blocking)
        .retryPolicy(new org.apache.curator.retry.RetryOneTime(100)).build()) {
      own.start();
      ZooKeeperRegistry reg = ZooKeeperRegistry.builder().curator(own).basePath(base).build();
      long t = System.nanoTime();
      try (Server a = new Server("a", reg.registrar(SERVICE).build(), Duration.ZERO)) {
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t);
        assertThat(blocked.get()).as("the check reached the blocking handle").isPositive();
        assertThat(ms).as("start() with the check's call blocked").isLessThan(5_000L);
        assertThat(own.checkExists().forPath(reg.servicePath(SERVICE) + "/127.0.0.1:" + a.server.port()))
            .as("registered all the same").isNotNull();
      } finally {
        release.countDown();
      }
    }
  }

  @Test
  void aServerStartedWhileZooKeeperIsDownServesAndRegistersWhenItReturns() throws Exception {
    try (TestingServer own = new TestingServer()) {
      String base = newBase();
      own.stop();
      try (ZooKeeperRegistry reg = ZooKeeperRegistry.builder().connectString(own.getConnectString())
              .basePath(base).connectionTimeout(Duration.ofSeconds(1)).build();
          Server a = new Server("a", reg.registrar(SERVICE).build(), Duration.ZERO);
          RpcClient direct = RpcClient.builder().address("127.0.0.1", a.server.port()).build()) {
        assertThat(call(direct)).as("serving, though not registered").isEqualTo("a");
        own.restart();
        try (ZooKeeperRegistry clientSide = registry(own, base)) {
          Recording resolver = new Recording(clientSide.resolver(SERVICE));
          try (RpcClient client = RpcClient.builder().nameResolver(clientSide.target(SERVICE), resolver).build()) {
            resolver.until(listing(a)).get(10, TimeUnit.SECONDS);
            assertThat(call(client)).isEqualTo("a");
          }
        }
      }
    }
  }

  /**
   * The registry's own Curator client retries an operation 10 times, 100 ms doubling up to 2 s apart, and says
   * nothing about it: Curator's ExponentialBackoffRetry with a maximum logged "Sleep extension too large ...
   * Pinning to 2000" at WARN at every retry past the fifth, many a second through a ZooKeeper outage.
   */
  @Test
  void theRegistrysOwnRetriesAreBoundedAtTwoSecondsWithoutWarnings() throws Exception {
    ch.qos.logback.classic.Logger retryLog = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(
        "org.apache.curator.retry");
    ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> seen =
        new ch.qos.logback.core.read.ListAppender<>();
    seen.start();
    retryLog.addAppender(seen);
    try (ZooKeeperRegistry registry = registry(zk, newBase())) {
      RetryPolicy policy = registry.curator().getZookeeperClient().getRetryPolicy();
      List<Long> sleeps = new java.util.ArrayList<>();
      RetrySleeper sleeper = (time, unit) -> sleeps.add(unit.toMillis(time));
      for (int i = 0; i < 10; i++) {
        assertThat(policy.allowRetry(i, 0, sleeper)).as("retry %d", i).isTrue();
      }
      assertThat(policy.allowRetry(10, 0, sleeper)).as("an 11th retry").isFalse();
      assertThat(sleeps).hasSize(10).allSatisfy(ms -> assertThat(ms).isBetween(100L, 2_000L));
      assertThat(seen.list).as("what Curator's retry policy logged").isEmpty();
    } finally {
      retryLog.detachAppender(seen);
    }
  }

  @Test
  void aZkTargetFindsItsResolverThroughServiceLoader() throws Exception {
    String base = newBase();
    try (ZooKeeperRegistry regA = registry(zk, base);
        Server a = new Server("a", regA.registrar(SERVICE).build(), Duration.ZERO);
        RpcClient client = RpcClient.builder().target("zk://" + zk.getConnectString() + base + "/" + SERVICE)
            .build()) {
      assertThat(call(client)).isEqualTo("a");
    }
  }

  @Test
  void aServiceWithNoServerHasNoEndpointAndSaysSo() throws Exception {
    String base = newBase();
    try (ZooKeeperRegistry clientSide = registry(zk, base)) {
      Recording resolver = new Recording(clientSide.resolver(SERVICE));
      try (RpcClient client = RpcClient.builder().nameResolver(clientSide.target(SERVICE), resolver).build()) {
        assertThat(resolver.lists).containsExactly(List.of());
        assertThatThrownBy(() -> call(client)).hasMessageContaining("its resolver lists no endpoint");
      }
    }
  }

  @Test
  void badZkTargetsAreRefusedWithWhatIsExpected() {
    assertThatThrownBy(() -> RpcClient.builder().target("zk://127.0.0.1:2181"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("expected zk://host:port[,host:port...]/path/service");
    assertThatThrownBy(() -> RpcClient.builder().target("zk://127.0.0.1:2181/petrel//demo.Greeter"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must not contain '//'");
    assertThatThrownBy(() -> RpcClient.builder().target("zk://127.0.0.1:2181/petrel/demo.Greeter/"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must not end with '/'")
        .hasMessageContaining("write '/petrel/demo.Greeter'");
    // Options are not taken: before, they became part of the service's name, which no server registered.
    assertThatThrownBy(() -> RpcClient.builder().target("zk://127.0.0.1:2181/petrel/demo.Greeter?removalDelay=0"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("a zk:// target takes no options");
    assertThatThrownBy(() -> RpcClient.builder().target("zk://127.0.0.1:2181/petrel/demo Greeter"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("has no spaces");
  }

  /**
   * A registry closed while a client uses one of its resolvers: no new resolver is made from it, and a client
   * whose resolver it made hears at once that the endpoints no longer follow ZooKeeper (before, the client waited
   * the connection timeout and said it could not reach ZooKeeper, which was up).
   */
  @Test
  void aClosedRegistryMakesNoResolverAndItsClientsAreToldAtOnce() throws Exception {
    String base = newBase();
    ZooKeeperRegistry closed = registry(zk, base);
    io.petrel.rpc.NameResolver early = closed.resolver(SERVICE);
    closed.close();
    assertThatThrownBy(() -> closed.resolver(SERVICE)).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("is closed").hasMessageContaining("close a registry only after the clients that use it");
    long start = System.nanoTime();
    try (RpcClient client = RpcClient.builder().nameResolver(closed.target(SERVICE), early).build()) {
      assertThatThrownBy(() -> call(client)).hasMessageContaining("is closed (its ZooKeeperRegistry was closed while"
          + " a client still used it)");
    }
    long tookMs = java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    assertThat(tookMs).as("told within %d ms, not after the 5 s connection timeout", tookMs).isLessThan(3_000);
  }

  @Test
  void theNodeHoldsTheEndpointAsDocumentedJson() throws Exception {
    String base = newBase();
    try (ZooKeeperRegistry clientSide = registry(zk, base); ZooKeeperRegistry regA = registry(zk, base);
        Server a = new Server("a", regA.registrar(SERVICE).weight(3).zone("eu-1").version("2.0")
            .metadata("rack", "r7").build(), Duration.ZERO)) {
      CuratorFramework c = clientSide.curator();
      String node = base + "/" + SERVICE + "/127.0.0.1:" + a.server.port();
      assertThat(new String(c.getData().forPath(node), StandardCharsets.UTF_8)).isEqualTo("{\"host\":\"127.0.0.1\","
          + "\"port\":" + a.server.port() + ",\"weight\":3,\"zone\":\"eu-1\",\"version\":\"2.0\","
          + "\"metadata\":{\"rack\":\"r7\"}}");
      assertThat(c.checkExists().forPath(node).getEphemeralOwner())
          .isEqualTo(regA.curator().getZookeeperClient().getZooKeeper().getSessionId());
      // The base and service nodes were created as persistent nodes (no owner), and stay when servers leave.
      assertThat(c.checkExists().forPath(base + "/" + SERVICE).getEphemeralOwner()).isZero();
      assertThat(c.checkExists().forPath(base).getEphemeralOwner()).isZero();

      // A node another tool wrote with bad data is skipped; the good one is resolved with its attributes.
      c.create().forPath(base + "/" + SERVICE + "/junk", "not json".getBytes(StandardCharsets.UTF_8));
      Recording resolver = new Recording(clientSide.resolver(SERVICE));
      try (RpcClient client = RpcClient.builder().nameResolver(clientSide.target(SERVICE), resolver).build()) {
        assertThat(call(client)).isEqualTo("a");
        assertThat(resolver.lists.get(0)).containsExactly(new Endpoint("127.0.0.1", a.server.port(), 3, "eu-1",
            "2.0", Map.of("rack", "r7")));
      }
    }
  }
}
