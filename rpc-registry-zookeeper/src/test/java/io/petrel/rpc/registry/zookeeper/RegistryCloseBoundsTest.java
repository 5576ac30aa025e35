package io.petrel.rpc.registry.zookeeper;

import static io.petrel.rpc.registry.zookeeper.Greeters.SERVICE;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.registry.zookeeper.Greeters.Server;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** How long {@link ZooKeeperRegistry#close()} takes where its waits cannot be answered. */
class RegistryCloseBoundsTest {
  private final List<ILoggingEvent> errors = new CopyOnWriteArrayList<>();
  private final List<ILoggingEvent> warnings = new CopyOnWriteArrayList<>();
  private final AppenderBase<ILoggingEvent> appender = new AppenderBase<>() {
    @Override
    protected void append(ILoggingEvent event) {
      if (event.getLevel().isGreaterOrEqual(Level.ERROR)) {
        errors.add(event);
      }
      if (event.getLevel().isGreaterOrEqual(Level.WARN)) {
        warnings.add(event);
      }
    }
  };

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

  private List<String> errorLines() {
    return errors.stream().map(e -> e.getLoggerName() + ": " + e.getFormattedMessage()
        + (e.getThrowableProxy() == null ? "" : " (" + e.getThrowableProxy().getClassName() + ")")).toList();
  }

  private static long millisSince(long started) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
  }

  /**
   * The threads a registry's client runs that were started since {@code before} (ZooKeeper's send and event
   * threads, Petrel's own): each must end within a second or so of the close, none is left waiting on ZooKeeper.
   */
  private static void assertClientThreadsEnd(Set<Thread> before) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
    List<String> alive = new ArrayList<>();
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      String name = t.getName();
      if (!before.contains(t) && (name.endsWith("-EventThread") || name.contains("-SendThread(")
          || name.startsWith("petrel-zk-"))) {
        TimeUnit.NANOSECONDS.timedJoin(t, Math.max(1, deadline - System.nanoTime()));
        if (t.isAlive()) {
          alive.add(name + " " + java.util.Arrays.toString(t.getStackTrace()));
        }
      }
    }
    assertThat(alive).as("threads of the closed registry still running 2 s after its close").isEmpty();
  }

  /**
   * A ZooKeeper that accepts connections and answers nothing, not even the session's handshake (the proxy holds
   * every answer): a registry's close, with a server it registered still serving, and a client's close, whose
   * zk:// target has a registry of its own, each return at once (there is no session to close, nothing to wait
   * for), their threads end, nothing is logged at ERROR. Before, ZooKeeper's close of its handle waited for the
   * answer to the close of the session until its connect timeout (the session timeout, 10 s, for one server):
   * 10 s each, beyond the bounds the docs give (twice connectionTimeout for a registry, 2 s here).
   */
  @Test
  void closingAgainstAZooKeeperThatAnswersNothingKeepsTheBound() throws Exception {
    try (TestingServer zk = new TestingServer(); SlowZooKeeper silent = new SlowZooKeeper(zk.getConnectString())) {
      silent.delay(600_000);
      Set<Thread> before = Thread.getAllStackTraces().keySet();
      try (ZooKeeperRegistry registry = ZooKeeperRegistry.builder().connectString(silent.connectString())
              .basePath("/silent").connectionTimeout(Duration.ofSeconds(1)).build();
          Server a = new Server("a", registry.registrar(SERVICE).build(), Duration.ZERO);
          // Built once its resolver gave up waiting for the first list (the default connectionTimeout, 5 s).
          RpcClient byTarget = RpcClient.builder().target("zk://" + silent.connectString() + "/silent/" + SERVICE)
              .build()) {
        long started = System.nanoTime();
        byTarget.close();
        assertThat(millisSince(started)).as("ms a zk:// client's close() took").isLessThan(2_000);
        started = System.nanoTime();
        registry.close();
        assertThat(millisSince(started)).as("ms registry.close() took, its server still registered")
            .isLessThan(2_500);
      }
      assertClientThreadsEnd(before);
      assertThat(errorLines()).isEmpty();
    }
  }

  /**
   * A registry's close interrupted while it waits for ZooKeeper's answer to the close of the session (a task
   * cancelled with cancel(true) as it closes what it made; a shutdown that interrupts the thread closing things):
   * ZooKeeper answered everything before, so the close waits for that answer, and ZooKeeper then goes silent (a
   * proxy holds the answer). The interrupt means "stop waiting", as in the rest of the close: close() returns at
   * once, within its bound of twice connectionTimeout, with the caller's interrupt flag still set, ZooKeeper's
   * client threads end, nothing at ERROR. Before, the close stopped waiting for the thread closing ZooKeeper's
   * handle without telling it: that thread went on waiting for the answer (holding the handle's lock) until
   * ZooKeeper's client gave up on the connection, two thirds of the 10 s session timeout, and Curator's own close
   * of the handle, right after, waited for that lock: 6.7 s instead of at most 2 s.
   */
  @Test
  void aCloseInterruptedWhileItWaitsForTheSessionsCloseKeepsTheBound() throws Exception {
    try (TestingServer zk = new TestingServer(); SlowZooKeeper slow = new SlowZooKeeper(zk.getConnectString())) {
      Set<Thread> before = Thread.getAllStackTraces().keySet();
      ZooKeeperRegistry registry = ZooKeeperRegistry.builder().connectString(slow.connectString())
          .basePath("/close-interrupted").connectionTimeout(Duration.ofSeconds(1)).build();
      new Server("a", registry.registrar(SERVICE).build(), Duration.ZERO).close(); // registered, deregistered
      CompletableFuture<Long> took = new CompletableFuture<>();
      CompletableFuture<Boolean> stillInterrupted = new CompletableFuture<>();
      slow.delayFrom(SlowZooKeeper.CLOSE_SESSION, 600_000); // silent from the close of the session on
      Thread closing = new Thread(() -> {
        long started = System.nanoTime();
        try {
          registry.close();
          took.complete(millisSince(started));
        } catch (Throwable e) {
          took.completeExceptionally(e);
        } finally {
          stillInterrupted.complete(Thread.interrupted());
        }
      }, "closing-registry");
      closing.start();
      slow.awaitHeld(r -> r.op() == SlowZooKeeper.CLOSE_SESSION, 5_000);
      long interrupted = System.nanoTime();
      closing.interrupt();
      assertThat(took.get(30, TimeUnit.SECONDS)).as("ms registry.close() took (its bound 2 s)").isLessThan(2_500);
      assertThat(millisSince(interrupted)).as("ms close() went on once interrupted").isLessThan(1_500);
      assertThat(stillInterrupted.get(1, TimeUnit.SECONDS)).as("the caller's interrupt flag, after close()")
          .isTrue();
      assertClientThreadsEnd(before);
      assertThat(errorLines()).isEmpty();
      slow.delay(0);
    }
  }

  /**
   * The ordinary case the bound must not cost: a registry closed against a ZooKeeper that answers, at once or
   * 150 ms late (within connectionTimeout, 1 s), waits for ZooKeeper's answer to the close of the session, so the
   * session's ephemeral nodes are gone as close() returns (another client reads that at once), its threads end
   * (the thread closing ZooKeeper's handle too), and nothing is logged at WARN or above. 3 closes each way.
   */
  @Test
  void aCloseAgainstAZooKeeperThatAnswersEndsTheSessionAtOnceQuietly() throws Exception {
    try (TestingServer zk = new TestingServer(); SlowZooKeeper slow = new SlowZooKeeper(zk.getConnectString());
        org.apache.curator.framework.CuratorFramework other = org.apache.curator.framework.CuratorFrameworkFactory
            .newClient(zk.getConnectString(), new org.apache.curator.retry.RetryOneTime(100))) {
      other.start();
      assertThat(other.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
      for (int round = 0; round < 6; round++) {
        long latency = round % 2 == 0 ? 0 : 150;
        slow.delay(latency);
        Set<Thread> before = Thread.getAllStackTraces().keySet();
        ZooKeeperRegistry registry = ZooKeeperRegistry.builder().connectString(slow.connectString())
            .basePath("/close-answered").connectionTimeout(Duration.ofSeconds(1)).build();
        new Server("a", registry.registrar(SERVICE).build(), Duration.ZERO).close(); // registered, deregistered
        String node = "/close-answered/session-" + round;
        registry.curator().create().withMode(org.apache.zookeeper.CreateMode.EPHEMERAL).forPath(node);
        warnings.clear();
        long started = System.nanoTime();
        registry.close();
        long took = millisSince(started);
        assertThat(other.checkExists().forPath(node)).as("the session's node, read as close() returned (ZooKeeper "
            + latency + " ms late; close() took " + took + " ms)").isNull();
        assertClientThreadsEnd(before);
        assertThat(warnings.stream().map(e -> e.getLoggerName() + ": " + e.getFormattedMessage()).toList())
            .as("WARN and above logged by the close").isEmpty();
      }
      slow.delay(0);
    }
  }

  /**
   * A registry closed from a Curator callback (ZooKeeper's event thread, which also runs watchers and cache
   * listeners: an application that shuts down when a node tells it to), with its server still registered, closes
   * at once: its wait for ZooKeeper's answers, whose callbacks run on that very thread, cannot end before it
   * returns. On the old code it lasted the whole connection timeout (4 s here) every time.
   */
  @Test
  void closingFromACuratorCallbackDoesNotWaitForCallbacksItHolds() throws Exception {
    try (TestingServer zk = new TestingServer()) {
      ZooKeeperRegistry registry = ZooKeeperRegistry.builder().connectString(zk.getConnectString())
          .basePath("/close-on-callback").connectionTimeout(Duration.ofSeconds(4)).build();
      try (Server a = new Server("a", registry.registrar(SERVICE).build(), Duration.ZERO)) {
        CompletableFuture<Long> took = new CompletableFuture<>();
        registry.curator().checkExists().inBackground((c, event) -> {
          long started = System.nanoTime();
          try {
            registry.close();
            took.complete(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
          } catch (Throwable e) {
            took.completeExceptionally(e);
          }
        }).forPath("/");
        assertThat(took.get(30, TimeUnit.SECONDS)).as("ms registry.close() took on ZooKeeper's event thread")
            .isLessThan(2_000);
        assertThat(registry.curator().getState()).isEqualTo(CuratorFrameworkState.STOPPED);
      }
    }
  }

  /**
   * A registry closed while four servers it registered still serve, ZooKeeper connected but silent (a proxy holds
   * its answers): the deregistrations share the one bound the docs give them (connectionTimeout, 1 s here), then
   * the wait for ZooKeeper's answers has its own, and closing the session does not wait for ZooKeeper's answer
   * (the registry's requests are unanswered): close() returns within its bound of twice connectionTimeout,
   * ZooKeeper's client threads end, no ERROR. On the old code each server's deregistration had a
   * bound of its own (4 s, then 1 s more, before the close of the session), and ZooKeeper's close of its handle
   * then waited for the answer until the client's read timeout (two thirds of the 10 s session timeout).
   */
  @Test
  void theServersStillRegisteredShareOneBound() throws Exception {
    try (TestingServer zk = new TestingServer(); SlowZooKeeper slow = new SlowZooKeeper(zk.getConnectString())) {
      Set<Thread> before = Thread.getAllStackTraces().keySet();
      ZooKeeperRegistry registry = ZooKeeperRegistry.builder().connectString(slow.connectString())
          .basePath("/close-several").connectionTimeout(Duration.ofSeconds(1)).build();
      List<Server> servers = new ArrayList<>();
      try {
        for (int i = 0; i < 4; i++) {
          servers.add(new Server("s" + i, registry.registrar(SERVICE).build(), Duration.ZERO));
        }
        slow.delay(600_000);
        long started = System.nanoTime();
        registry.close();
        assertThat(millisSince(started)).as("ms registry.close() took (its bound 2 s, and slack)").isLessThan(3_500);
        assertClientThreadsEnd(before);
        assertThat(errorLines()).isEmpty();
      } finally {
        slow.delay(0);
        servers.forEach(Server::close);
      }
    }
  }
}
