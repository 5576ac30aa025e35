package io.petrel.rpc.registry.zookeeper;

import static io.petrel.rpc.registry.zookeeper.Greeters.SERVICE;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.core.AppenderBase;
import io.petrel.rpc.registry.zookeeper.Greeters.Server;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * An ordinary shutdown while ZooKeeper is slow, so that the server's node is still being created when the server
 * and its registry close: nothing is logged at ERROR. Before, Curator logged ERROR "Background exception was not
 * retry-able or retry gave up" with an InterruptedException (closing the Curator client interrupts its background
 * thread, which was waiting in the synchronous creation of the node's parents), "Could not delete node after close"
 * (a node closed while being created, created after the client closed), and, with the registry closed first,
 * ERRORs of the still-active node being created again and again on the closed client (a StackOverflowError).
 */
class QuietShutdownTest {
  /**
   * The rounds: how late ZooKeeper's answers are, whether the registry closes before the server shuts down, and
   * when, after start() returned, they close. Creating the node's two parents and the node takes six answers:
   * 150 ms late, they end within the registrar's two waits (500 ms at the start, 500 ms at the shutdown); 300 ms
   * late, they do not, and the parents or the node are still being created when the registry closes.
   */
  private static final long[][] ROUNDS = {
      {150, 0, 0}, {150, 1, 0}, {150, 0, 150}, {150, 1, 150}, {150, 0, 300}, {150, 1, 300},
      {300, 0, 0}, {300, 1, 0}, {300, 0, 0}, {300, 1, 0},
      {300, 0, 300}, {300, 1, 300}, {300, 0, 600}, {300, 1, 600}};

  private final List<ILoggingEvent> logged = new CopyOnWriteArrayList<>();
  private final AppenderBase<ILoggingEvent> appender = new AppenderBase<>() {
    @Override
    protected void append(ILoggingEvent event) {
      if (event.getLevel().isGreaterOrEqual(Level.INFO)) {
        logged.add(event);
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

  private static String describe(ILoggingEvent e) {
    IThrowableProxy t = e.getThrowableProxy();
    return e.getLoggerName() + ": " + e.getFormattedMessage() + (t == null ? "" : " (" + t.getClassName() + ": "
        + t.getMessage() + (t.getCause() == null ? "" : ", caused by " + t.getCause().getClassName()) + ")");
  }

  /**
   * Rounds of: a server starts while ZooKeeper answers late (its start() gives up waiting after the 500 ms
   * connection timeout, the node's parents half made), then either the server shuts down and then its registry
   * closes (the documented order), or the registry closes first. On the old code 13 of these 14 rounds logged an
   * ERROR.
   */
  @Test
  void closingWhileTheNodeIsBeingCreatedLogsNoError() throws Exception {
    List<String> errorRounds = new ArrayList<>();
    try (TestingServer zk = new TestingServer(); SlowZooKeeper slow = new SlowZooKeeper(zk.getConnectString())) {
      for (int round = 0; round < ROUNDS.length; round++) {
        long delayMs = ROUNDS[round][0];
        boolean registryFirst = ROUNDS[round][1] == 1;
        long offsetMs = ROUNDS[round][2];
        slow.delay(0);
        ZooKeeperRegistry registry = ZooKeeperRegistry.builder().connectString(slow.connectString())
            .basePath("/quiet-" + round).connectionTimeout(Duration.ofMillis(500)).build();
        assertThat(registry.curator().blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
        slow.delay(delayMs);
        int before = logged.size();
        Server a = new Server("a", registry.registrar(SERVICE).build(), Duration.ZERO);
        if (offsetMs > 0) {
          Thread.sleep(offsetMs); // the moment of the creation at which everything closes
        }
        if (registryFirst) {
          registry.close();
          a.server.shutdown();
        } else {
          a.server.shutdown();
          assertThat(a.server.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
          registry.close();
        }
        assertThat(a.server.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        // Curator's background thread has ended when close() returns; its callbacks may still log, on
        // ZooKeeper's event thread, until the session's close is answered (one delay).
        Thread.sleep(3 * delayMs);
        List<String> errors = logged.subList(before, logged.size()).stream()
            .filter(e -> e.getLevel() == Level.ERROR).map(QuietShutdownTest::describe).toList();
        if (!errors.isEmpty()) {
          errorRounds.add("round " + round + " (" + delayMs + " ms late, " + (registryFirst ? "registry closed first"
              : "server first") + ", +" + offsetMs + " ms): " + errors);
        }
      }
    }
    System.out.println("QuietShutdownTest.closingWhileTheNodeIsBeingCreatedLogsNoError: " + errorRounds.size()
        + " of " + ROUNDS.length + " rounds logged an ERROR"
        + (errorRounds.isEmpty() ? "" : ":\n  " + String.join("\n  ", errorRounds)));
    assertThat(errorRounds).isEmpty();
  }

  /**
   * The service's node is deleted (a cleanup tool) while ZooKeeper answers 400 ms late: the server's node goes with
   * it, and Curator creates it again, its parents first, with synchronous calls on its background thread; the
   * server shuts down and its registry closes while they run. Closing the Curator client interrupts that thread:
   * before, Curator logged ERROR "Background exception was not retry-able or retry gave up" with an
   * InterruptedException in each round; now the registry closes ZooKeeper's handle first, and the call ends as a
   * lost connection, quietly.
   */
  @Test
  void closingWhileTheNodeIsCreatedAgainLogsNoError() throws Exception {
    long delayMs = 400;
    List<String> errorRounds = new ArrayList<>();
    int rounds = 3;
    try (TestingServer zk = new TestingServer(); SlowZooKeeper slow = new SlowZooKeeper(zk.getConnectString());
        ZooKeeperRegistry direct = ZooKeeperRegistry.builder().connectString(zk.getConnectString()).build()) {
      for (int round = 0; round < rounds; round++) {
        slow.delay(0);
        String base = "/again-" + round;
        ZooKeeperRegistry registry = ZooKeeperRegistry.builder().connectString(slow.connectString())
            .basePath(base).connectionTimeout(Duration.ofSeconds(2)).build();
        Server a = new Server("a", registry.registrar(SERVICE).build(), Duration.ZERO);
        String node = registry.servicePath(SERVICE) + "/127.0.0.1:" + a.server.port();
        assertThat(direct.curator().checkExists().forPath(node)).as("registered").isNotNull();
        slow.delay(delayMs);
        int before = logged.size();
        direct.curator().delete().deletingChildrenIfNeeded().forPath(registry.servicePath(SERVICE));
        // The deletion reaches the registrar's session (one delay), its create is refused (NONODE, two): Curator
        // is making the parents, with three more answers to wait for, when the shutdown begins.
        Thread.sleep(2 * delayMs + 100);
        a.server.shutdown();
        assertThat(a.server.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        registry.close();
        Thread.sleep(3 * delayMs);
        List<String> errors = logged.subList(before, logged.size()).stream()
            .filter(e -> e.getLevel() == Level.ERROR).map(QuietShutdownTest::describe).toList();
        if (!errors.isEmpty()) {
          errorRounds.add("round " + round + ": " + errors);
        }
      }
    }
    System.out.println("QuietShutdownTest.closingWhileTheNodeIsCreatedAgainLogsNoError: " + errorRounds.size()
        + " of " + rounds + " rounds logged an ERROR" + (errorRounds.isEmpty() ? "" : ":\n  "
        + String.join("\n  ", errorRounds)));
    assertThat(errorRounds).isEmpty();
  }
}
