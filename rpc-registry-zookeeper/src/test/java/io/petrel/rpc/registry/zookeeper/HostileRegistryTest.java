package io.petrel.rpc.registry.zookeeper;

import static io.petrel.rpc.registry.zookeeper.Greeters.SERVICE;
import static io.petrel.rpc.registry.zookeeper.Greeters.WHO;
import static io.petrel.rpc.registry.zookeeper.Greeters.listing;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.Deadline;
import io.petrel.rpc.Endpoint;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.registry.zookeeper.Greeters.Recording;
import io.petrel.rpc.registry.zookeeper.Greeters.Server;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a client does when the registry holds broken data (written by another tool, by hand, or by an attacker with
 * write access to the service's node): it keeps calling the good servers, names each bad node in a WARN (a bounded
 * number of lines however many there are), and keeps up with a flood of changes.
 */
class HostileRegistryTest {
  private static final byte[] EMPTY = new byte[0];
  /** As documented (docs/cluster.md): bad nodes named one by one per window, then one line counts the others. */
  private static final int BAD_NODE_LINES = 20;
  private static final int BAD_NODE_WINDOW_SECONDS = 10;
  private static final AtomicInteger PATHS = new AtomicInteger();
  private static TestingServer zk;

  private final List<ILoggingEvent> logged = new CopyOnWriteArrayList<>();
  /** The line counting the bad nodes not named one by one. */
  private final CompletableFuture<String> summary = new CompletableFuture<>();
  private final AppenderBase<ILoggingEvent> appender = new AppenderBase<>() {
    @Override
    protected void append(ILoggingEvent event) {
      if (event.getLevel().isGreaterOrEqual(Level.WARN)) {
        logged.add(event);
        if (event.getFormattedMessage().contains("not logged one by one")) {
          summary.complete(event.getFormattedMessage());
        }
      }
    }
  };

  @BeforeAll
  static void startZooKeeper() throws Exception {
    zk = new TestingServer();
  }

  @AfterAll
  static void stopZooKeeper() throws Exception {
    zk.close();
  }

  @BeforeEach
  void watchLogs() {
    appender.start();
    resolverLogger().addAppender(appender);
  }

  @AfterEach
  void stopWatchingLogs() {
    resolverLogger().detachAppender(appender);
  }

  private static ch.qos.logback.classic.Logger resolverLogger() {
    return (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(ZooKeeperResolver.class);
  }

  private static ZooKeeperRegistry registry(String base) {
    return ZooKeeperRegistry.builder().connectString(zk.getConnectString()).basePath(base).build();
  }

  private static String newBase() {
    return "/hostile-" + PATHS.incrementAndGet();
  }

  /** A call that must end (answered or failed) within its deadline of 2 s. */
  private static String call(RpcClient client) {
    CallOptions options = CallOptions.DEFAULT.withDeadline(Deadline.after(2, TimeUnit.SECONDS));
    return new String(client.unaryCall(WHO, EMPTY, options), StandardCharsets.UTF_8);
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private List<String> warningsNaming(String text) {
    List<String> out = new ArrayList<>();
    for (ILoggingEvent e : logged) {
      if (e.getFormattedMessage().contains(text)) {
        out.add(e.getFormattedMessage());
      }
    }
    return out;
  }

  /**
   * Two services, one of them refused (its service node is ephemeral): that one is closed and named in an ERROR,
   * the other is registered as usual and said so (before, the refusal ended the registration's handling: no
   * "registered" line, and its lines named the refused service too).
   */
  @Test
  void oneRefusedServiceDoesNotStopTheOthersRegistration() throws Exception {
    String base = newBase();
    io.petrel.rpc.MethodDescriptor<byte[], byte[]> otherWho =
        io.petrel.rpc.MethodDescriptor.<byte[], byte[]>newBuilder().serviceName("demo.Other").methodName("who")
            .requestMarshaller(io.petrel.rpc.marshal.Marshallers.bytes())
            .responseMarshaller(io.petrel.rpc.marshal.Marshallers.bytes()).build();
    List<String> registrarLines = new CopyOnWriteArrayList<>();
    try (AutoCloseable watch = onRegistrarLines(e -> registrarLines.add(e.getLevel() + " " + e.getFormattedMessage()));
        ZooKeeperRegistry clientSide = registry(base);
        ZooKeeperRegistry regA = ZooKeeperRegistry.builder().connectString(zk.getConnectString()).basePath(base)
            .connectionTimeout(Duration.ofSeconds(1)).build()) {
      clientSide.curator().create().creatingParentsIfNeeded().withMode(org.apache.zookeeper.CreateMode.EPHEMERAL)
          .forPath(clientSide.servicePath("demo.Other"));
      ZooKeeperRegistrar registrar = regA.registrar(SERVICE, "demo.Other").build();
      io.petrel.rpc.RpcServer server = io.petrel.rpc.RpcServer.builder().bindAddress("127.0.0.1", 0)
          .addService(io.petrel.rpc.ServiceDefinition.builder(SERVICE).unary(WHO, b -> utf8("a")).build())
          .addService(io.petrel.rpc.ServiceDefinition.builder("demo.Other").unary(otherWho, b -> b).build())
          .addLifecycleListener(registrar).build().start(); // onServing has run when start() returns
      try {
        String authority = "127.0.0.1:" + server.port();
        assertThat(registrarLines).filteredOn(l -> l.startsWith("ERROR"))
            .singleElement().asString().contains("refuses its node " + clientSide.servicePath("demo.Other"));
        assertThat(registrarLines).contains("INFO registered " + authority + " in ZooKeeper for [" + SERVICE + "]");
        assertThat(registrar.registered()).isNotNull();
        Recording resolver = new Recording(clientSide.resolver(SERVICE));
        try (RpcClient client = RpcClient.builder().nameResolver(clientSide.target(SERVICE), resolver).build()) {
          assertThat(call(client)).isEqualTo("a");
        }
      } finally {
        server.shutdownNow();
      }
    }
  }

  /**
   * A node this client may not read (an ACL giving READ to its creator only): a bad node, in the rate-limited
   * WARN, and the client goes on with the good ones (it was one WARN per node per resync, and said the nodes are
   * read again, which an ACL never allows).
   */
  @Test
  void aNodeThisClientMayNotReadIsABadNode() throws Exception {
    String base = newBase();
    try (ZooKeeperRegistry clientSide = registry(base); ZooKeeperRegistry regA = registry(base);
        Server a = new Server("a", regA.registrar(SERVICE).build(), Duration.ZERO);
        org.apache.curator.framework.CuratorFramework owner = org.apache.curator.framework.CuratorFrameworkFactory
            .builder().connectString(zk.getConnectString())
            .retryPolicy(new org.apache.curator.retry.RetryOneTime(100))
            .authorization("digest", utf8("owner:secret")).build()) {
      owner.start();
      String service = clientSide.servicePath(SERVICE);
      owner.create().withACL(org.apache.zookeeper.ZooDefs.Ids.CREATOR_ALL_ACL)
          .forPath(service + "/private", utf8("{\"host\":\"127.0.0.1\",\"port\":3}"));
      Recording resolver = new Recording(clientSide.resolver(SERVICE));
      try (RpcClient client = RpcClient.builder().nameResolver(clientSide.target(SERVICE), resolver).build()) {
        resolver.until(listing(a)).get(10, TimeUnit.SECONDS);
        assertThat(call(client)).isEqualTo("a");
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (warningsNaming("ZooKeeper refuses to read it: NOAUTH").isEmpty() && System.nanoTime() < until) {
          Thread.onSpinWait(); // the cache's read of the node fails on a Curator thread, after the listing
        }
        assertThat(warningsNaming("ZooKeeper refuses to read it: NOAUTH")).singleElement().asString()
            .contains("ignoring ZooKeeper node").contains(service);
        assertThat(warningsNaming("could not read the nodes of")).isEmpty();
        assertThat(resolver.lists.get(resolver.lists.size() - 1)).extracting(e -> e.port())
            .containsExactly(a.server.port());
      }
    }
  }

  /**
   * Failed reads (other than a node's) are one WARN per 10 s; those left out are counted in the next WARN, which
   * says since when: it said "in the last 10 s" though it counted all since the last WARN, however long before.
   */
  @Test
  void theFailedReadWarningCountsTheFailuresSinceTheLastOneAndSaysSo() throws Exception {
    String base = newBase();
    try (ZooKeeperRegistry clientSide = registry(base)) {
      ZooKeeperResolver zkResolver = (ZooKeeperResolver) clientSide.resolver(SERVICE);
      try (RpcClient client = RpcClient.builder().nameResolver(clientSide.target(SERVICE), zkResolver).build()) {
        for (int i = 0; i < 4; i++) { // as Curator's cache hands them over: the first is a WARN, three left out
          zkResolver.cacheFailed(org.apache.zookeeper.KeeperException.create(
              org.apache.zookeeper.KeeperException.Code.MARSHALLINGERROR, clientSide.servicePath(SERVICE)));
        }
        // After those four: the first WARN was logged 12 s ago, longer ago than a window.
        long longer = TimeUnit.SECONDS.toNanos(BAD_NODE_WINDOW_SECONDS + 2);
        zkResolver.runOnResolverThread(() -> zkResolver.backdateReadWarning(longer));
        zkResolver.cacheFailed(new IllegalStateException("a later failure"));
        zkResolver.runOnResolverThread(() -> { }); // its WARN is logged on the resolver's thread, before this
        List<String> lines = warningsNaming("could not read the nodes of");
        assertThat(lines).hasSize(2);
        assertThat(lines.get(0)).contains("MarshallingError").doesNotContain("more like it");
        assertThat(lines.get(1)).contains("a later failure")
            .containsPattern("\\(and 3 more like it since the last such WARN, 1[2-9] s ago, logged at DEBUG\\)$");
      }
    }
  }

  /** Hands each line the registrar logs to {@code each} until closed. */
  private static AutoCloseable onRegistrarLines(java.util.function.Consumer<ILoggingEvent> each) {
    AppenderBase<ILoggingEvent> appender = new AppenderBase<>() {
      @Override
      protected void append(ILoggingEvent event) {
        each.accept(event);
      }
    };
    appender.start();
    ch.qos.logback.classic.Logger log =
        (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(ZooKeeperRegistrar.class);
    log.addAppender(appender);
    return () -> log.detachAppender(appender);
  }

  /** A JSON node of about {@code size} bytes: valid, but with one huge metadata value. */
  private static byte[] hugeNode(int size) {
    StringBuilder sb = new StringBuilder("{\"host\":\"127.0.0.1\",\"port\":2,\"metadata\":{\"x\":\"");
    while (sb.length() < size - 3) {
      sb.append('a');
    }
    return utf8(sb.append("\"}}").toString());
  }

  @Test
  void eachBadNodeIsSkippedAndNamedOnceWhileTheGoodServerServes() throws Exception {
    String base = newBase();
    Map<String, byte[]> bad = new LinkedHashMap<>();
    bad.put("garbage", new byte[] {(byte) 0xff, 0, (byte) 0xfe, 1, 2, 3});
    bad.put("truncated", utf8("{\"host\":\"127.0.0.1\",\"po"));
    bad.put("empty", EMPTY);
    bad.put("array", utf8("[1,2,3]"));
    bad.put("nested", utf8("[".repeat(8_000))); // under the size limit: deeper than Gson reads
    bad.put("port-0", utf8("{\"host\":\"127.0.0.1\",\"port\":0}"));
    bad.put("port-70000", utf8("{\"host\":\"127.0.0.1\",\"port\":70000}"));
    bad.put("port-text", utf8("{\"host\":\"127.0.0.1\",\"port\":\"http\"}"));
    bad.put("weight-negative", utf8("{\"host\":\"127.0.0.1\",\"port\":7001,\"weight\":-5}"));
    bad.put("host-number", utf8("{\"host\":17,\"port\":7002}"));
    bad.put("host-spaces", utf8("{\"host\":\"not an address\",\"port\":7003}"));
    bad.put("host-url", utf8("{\"host\":\"http://10.0.0.1/x\",\"port\":7004}"));
    bad.put("host-ipv4-999", utf8("{\"host\":\"999.1.2.3\",\"port\":7005}"));
    bad.put("host-bad-ipv6", utf8("{\"host\":\"fe80::zz\",\"port\":7006}"));
    bad.put("huge", hugeNode(1_000_000));
    try (ZooKeeperRegistry clientSide = registry(base); ZooKeeperRegistry regA = registry(base);
        Server a = new Server("a", regA.registrar(SERVICE).build(), Duration.ZERO)) {
      CuratorFramework c = clientSide.curator();
      String service = clientSide.servicePath(SERVICE);
      // Good data, but a's address again, twice, under names that are not that address: a is listed once, as its
      // own node says (weight 1).
      bad.put("a-again", utf8("{\"host\":\"127.0.0.1\",\"port\":" + a.server.port() + ",\"weight\":7}"));
      bad.put("0-a-again", utf8("{\"host\":\"127.0.0.1\",\"port\":" + a.server.port() + "}"));
      int half = 0;
      for (Map.Entry<String, byte[]> e : bad.entrySet()) {
        if (half++ % 2 == 0) { // half before the client starts, half after
          c.create().forPath(service + "/" + e.getKey(), e.getValue());
        }
      }
      Recording resolver = new Recording(clientSide.resolver(SERVICE));
      try (RpcClient client = RpcClient.builder().nameResolver(clientSide.target(SERVICE), resolver).build()) {
        assertThat(call(client)).isEqualTo("a");
        half = 0;
        for (Map.Entry<String, byte[]> e : bad.entrySet()) {
          if (half++ % 2 == 1) {
            c.create().forPath(service + "/" + e.getKey(), e.getValue());
          }
        }
        // A good node written after all the bad ones: once the client lists it, it has seen them all.
        c.create().forPath(service + "/127.0.0.1:1", utf8("{\"host\":\"127.0.0.1\",\"port\":1}"));
        resolver.until(list -> list.stream().anyMatch(e -> e.port() == 1)).get(10, TimeUnit.SECONDS);
        for (int i = 0; i < 20; i++) {
          assertThat(call(client)).isEqualTo("a");
        }
        // Authorities only: an endpoint with the huge node's metadata would print a megabyte.
        List<String> listed = resolver.lists.stream().flatMap(List::stream).map(Endpoint::authority).distinct()
            .toList();
        assertThat(listed).containsExactlyInAnyOrder("127.0.0.1:" + a.server.port(), "127.0.0.1:1");
        assertThat(resolver.lists).allSatisfy(list -> assertThat(list).extracting(Endpoint::authority)
            .doesNotHaveDuplicates());
        assertThat(resolver.lists.get(resolver.lists.size() - 1)).filteredOn(e -> e.port() == a.server.port())
            .extracting(Endpoint::weight).containsExactly(1);
        for (String name : bad.keySet()) {
          assertThat(warningsNaming(service + "/" + name + " ")).as("WARNs naming %s", name).hasSize(1);
        }
        assertThat(warningsNaming(service + "/huge ").get(0)).contains("1000000 bytes");
        assertThat(warningsNaming(service + "/host-spaces ").get(0)).contains("'not an address'");
      }
    }
  }

  /**
   * A node's name is the host:port of its data, the address clients call. A node named for one address whose data
   * says another (a copy, a stale or forged node) is a bad node, in the same bounded WARN: before, the client
   * called what the data said while tools listing the names showed another server. Other spellings of the same
   * address in the name are taken.
   */
  @Test
  void aNodeNamedForAnotherAddressThanItsDataIsABadNode() throws Exception {
    String base = newBase();
    try (ZooKeeperRegistry clientSide = registry(base); ZooKeeperRegistry regA = registry(base);
        Server a = new Server("a", regA.registrar(SERVICE).build(), Duration.ZERO)) {
      CuratorFramework c = clientSide.curator();
      String service = clientSide.servicePath(SERVICE);
      c.create().forPath(service + "/127.0.0.1:6", utf8("{\"host\":\"127.0.0.1\",\"port\":7}"));
      c.create().forPath(service + "/10.0.0.8:" + a.server.port(),
          utf8("{\"host\":\"127.0.0.1\",\"port\":" + a.server.port() + "}"));
      c.create().forPath(service + "/forged", utf8("{\"host\":\"127.0.0.1\",\"port\":8}"));
      c.create().forPath(service + "/[::1]:9", utf8("{\"host\":\"::1\",\"port\":9}")); // ::1 written short
      c.create().forPath(service + "/LocalHost:5", utf8("{\"host\":\"localhost\",\"port\":5}"));
      Recording resolver = new Recording(clientSide.resolver(SERVICE));
      try (RpcClient client = RpcClient.builder().nameResolver(clientSide.target(SERVICE), resolver).build()) {
        assertThat(call(client)).isEqualTo("a");
        List<Endpoint> last = resolver.lists.get(resolver.lists.size() - 1);
        assertThat(last).extracting(Endpoint::authority).containsExactlyInAnyOrder("127.0.0.1:" + a.server.port(),
            "[0:0:0:0:0:0:0:1]:9", "localhost:5");
        assertThat(resolver.lists).allSatisfy(list -> assertThat(list).extracting(Endpoint::port)
            .doesNotContain(7, 8));
        assertThat(warningsNaming(service + "/127.0.0.1:6 ")).singleElement().asString()
            .contains("its name '127.0.0.1:6' is not the address its data lists, 127.0.0.1:7");
        assertThat(warningsNaming(service + "/10.0.0.8:" + a.server.port() + " ")).singleElement().asString()
            .contains("is not the address its data lists, 127.0.0.1:" + a.server.port());
        assertThat(warningsNaming(service + "/forged ")).hasSize(1);
        assertThat(warningsNaming(service + "/[::1]:9 ")).isEmpty();
        assertThat(warningsNaming(service + "/LocalHost:5 ")).isEmpty();
      }
    }
  }

  /**
   * 10,000 bad nodes under one service, then 2,000 changes (1,000 nodes created and deleted): the client keeps
   * calling the good server within each call's deadline, logs a bounded number of lines, and lists a new server
   * within seconds of the flood's end.
   */
  @Test
  void aFloodOfBadNodesCostsBoundedLinesAndTheClientKeepsUp() throws Exception {
    String base = newBase();
    try (ZooKeeperRegistry clientSide = registry(base); ZooKeeperRegistry regA = registry(base);
        ZooKeeperRegistry regB = registry(base);
        Server a = new Server("a", regA.registrar(SERVICE).build(), Duration.ZERO)) {
      CuratorFramework c = clientSide.curator();
      String service = clientSide.servicePath(SERVICE);
      Recording resolver = new Recording(clientSide.resolver(SERVICE));
      try (RpcClient client = RpcClient.builder().nameResolver(clientSide.target(SERVICE), resolver).build()) {
        assertThat(call(client)).isEqualTo("a");
        byte[] junk = utf8("not json");
        for (int batch = 0; batch < 20; batch++) { // 10,000 nodes, 500 per transaction
          List<CuratorOp> ops = new ArrayList<>();
          for (int i = 0; i < 500; i++) {
            ops.add(c.transactionOp().create().forPath(service + "/junk-" + (batch * 500 + i), junk));
          }
          c.transaction().forOperations(ops);
          assertThat(call(client)).isEqualTo("a");
        }
        for (int batch = 0; batch < 10; batch++) { // 2,000 changes: 100 nodes created, then deleted, 10 times
          List<CuratorOp> create = new ArrayList<>();
          List<CuratorOp> delete = new ArrayList<>();
          for (int i = 0; i < 100; i++) {
            create.add(c.transactionOp().create().forPath(service + "/churn-" + i, junk));
            delete.add(c.transactionOp().delete().forPath(service + "/churn-" + i));
          }
          c.transaction().forOperations(create);
          c.transaction().forOperations(delete);
          assertThat(call(client)).isEqualTo("a");
        }
        try (Server b = new Server("b", regB.registrar(SERVICE).build(), Duration.ZERO)) {
          resolver.until(listing(a, b)).get(10, TimeUnit.SECONDS); // the client keeps up with the registry
        }
        // A bound against work per event that grows with the nodes (a full re-read per event is far beyond it);
        // generous for a loaded 2-core machine.
        long cpuMs = TimeUnit.NANOSECONDS.toMillis(resolverCpuNanos(service));
        assertThat(cpuMs).as("CPU time of the resolver's thread through the flood").isLessThan(10_000);
        // The line counting the others comes at the end of the window of the first lines.
        String counted = summary.get(BAD_NODE_WINDOW_SECONDS + 5, TimeUnit.SECONDS);
        assertThat(counted).contains("under " + service, "skipped now");
        int lines = warningsNaming(service).size();
        assertThat(lines).as("WARN lines about %s for 12,000 bad node changes", service)
            .isBetween(BAD_NODE_LINES, 3 * (BAD_NODE_LINES + 1));
      }
    }
  }

  /** The CPU time the thread of the resolver of {@code servicePath} has used. */
  private static long resolverCpuNanos(String servicePath) {
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().equals("petrel-zk-resolver " + servicePath)) {
        return mx.getThreadCpuTime(t.getId());
      }
    }
    throw new AssertionError("no resolver thread for " + servicePath);
  }

  /**
   * The service's node is an ephemeral node (another tool made it: "a file, not a directory"), so ZooKeeper refuses
   * the server's node under it. Before, the server said "not registered in ZooKeeper yet ...; it will be once
   * ZooKeeper answers", though ZooKeeper had answered; now an ERROR names the node to delete. The client skips the
   * service node's data with a WARN, lists no endpoint, and lists the server once the node is gone.
   */
  @Test
  void aServiceNodeThatCannotHaveChildrenIsNamed() throws Exception {
    String base = newBase();
    CompletableFuture<String> refused = new CompletableFuture<>();
    try (AutoCloseable watch = onRegistrarLines(event -> {
          if (event.getLevel() == Level.ERROR && event.getFormattedMessage().contains("is an ephemeral node")) {
            refused.complete(event.getFormattedMessage());
          }
        });
        ZooKeeperRegistry clientSide = registry(base);
        ZooKeeperRegistry regA = ZooKeeperRegistry.builder().connectString(zk.getConnectString()).basePath(base)
            .connectionTimeout(Duration.ofSeconds(1)).build()) {
      String service = clientSide.servicePath(SERVICE);
      clientSide.curator().create().creatingParentsIfNeeded().withMode(org.apache.zookeeper.CreateMode.EPHEMERAL)
          .forPath(service, utf8("{\"host\":\"127.0.0.1\",\"port\":5}"));
      try (Server a = new Server("a", regA.registrar(SERVICE).build(), Duration.ZERO)) {
        assertThat(refused.get(5, TimeUnit.SECONDS)).contains("ZooKeeper refuses its node " + service + "/127.0.0.1:"
            + a.server.port() + ", because " + service + " (of session 0x").contains("then restart this server");
        Recording resolver = new Recording(clientSide.resolver(SERVICE));
        try (RpcClient client = RpcClient.builder().nameResolver(clientSide.target(SERVICE), resolver).build()) {
          assertThat(resolver.lists).containsExactly(List.of());
          assertThat(warningsNaming(service + " of ")).singleElement().asString()
              .contains("the service's node holds 29 bytes of data, which is ignored");
          clientSide.curator().delete().forPath(service);
          // The registrar gave up on that node (Curator would retry it at once, without end): a restart registers.
          a.close();
          try (Server again = new Server("a", regA.registrar(SERVICE).build(), Duration.ZERO)) {
            resolver.until(listing(again)).get(10, TimeUnit.SECONDS);
            assertThat(call(client)).isEqualTo("a");
          }
        }
      }
    }
  }

  /**
   * The whole service path is deleted (by hand, or a tool cleaning up): the servers' nodes go with it, and each
   * server creates its node again (with the service's node) at once. The client's removal delay covers the gap:
   * it keeps calling the server, and lists it again.
   */
  @Test
  void aDeletedServicePathComesBackWithItsServers() throws Exception {
    String base = newBase();
    try (ZooKeeperRegistry clientSide = registry(base); ZooKeeperRegistry regA = registry(base);
        Server a = new Server("a", regA.registrar(SERVICE).build(), Duration.ZERO)) {
      Recording resolver = new Recording(clientSide.resolver(SERVICE));
      try (RpcClient client = RpcClient.builder().nameResolver(clientSide.target(SERVICE), resolver).build()) {
        assertThat(call(client)).isEqualTo("a");
        String node = clientSide.servicePath(SERVICE) + "/127.0.0.1:" + a.server.port();
        long before = clientSide.curator().checkExists().forPath(node).getCzxid();
        clientSide.curator().delete().deletingChildrenIfNeeded().forPath(clientSide.servicePath(SERVICE));
        for (int i = 0; i < 50; i++) {
          assertThat(call(client)).isEqualTo("a");
        }
        org.apache.zookeeper.data.Stat again = null;
        for (int i = 0; i < 100 && (again == null || again.getCzxid() == before); i++) {
          // Bounded: the node is created again within milliseconds; 100 reads of ZooKeeper take far longer.
          again = clientSide.curator().checkExists().forPath(node);
        }
        assertThat(again).as("the server's node, created again").isNotNull();
        resolver.until(listing(a)).get(5, TimeUnit.SECONDS);
        assertThat(call(client)).isEqualTo("a");
      }
    }
  }
}
