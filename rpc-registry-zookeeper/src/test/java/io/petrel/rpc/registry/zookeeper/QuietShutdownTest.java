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
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
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
   * How late ZooKeeper's answers are: late enough that the node and its parents are not made within the
   * registrar's 500 ms wait at the start, so that their creation goes on after start() has returned (150 ms late,
   * the registrar makes them within the start: nothing is left to close on).
   */
  private static final long DELAY_MS = 300;

  /** Which of the creation's requests the close waits for, ZooKeeper's answer to it being held. */
  private enum Moment {
    /** Any request about one of the node's parents (the base path, the service's node): they are being made. */
    PARENTS,
    /** The create of the service's node, the last parent: the node's create comes right after it. */
    LAST_PARENT,
    /** The create of the server's node itself. */
    NODE
  }

  /**
   * A round: everything closes once the proxy holds the answer to a request of {@code moment} (the first held
   * once start() has returned), the registry before the server's shutdown or after.
   */
  private record Round(Moment moment, boolean registryFirst) {
    @Override
    public String toString() {
      return moment + ", " + (registryFirst ? "registry closed first" : "server first");
    }
  }

  /**
   * On the code before the fix, each of these rounds logged an ERROR (PARENTS, the server first, logged the
   * InterruptedException as LAST_PARENT does: left out, for the time).
   */
  private static final List<Round> ROUNDS = List.of(
      new Round(Moment.PARENTS, true),
      new Round(Moment.LAST_PARENT, false), new Round(Moment.LAST_PARENT, true),
      new Round(Moment.NODE, false), new Round(Moment.NODE, true));

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
   * connection timeout, the node's parents half made); once the proxy holds ZooKeeper's answer to a request of the
   * round's moment, either the server shuts down and then its registry closes (the documented order), or the
   * registry closes first. Then, once the client has closed its connections and ZooKeeper's client threads have
   * ended (nothing more can be logged about the node), no ERROR was logged. On the code before the fix each
   * round logged one: InterruptedException (parents), "Could not delete node after close" (node, server first),
   * CuratorClosedException (node, registry first); with the close's first fix only, "Could not delete node after
   * close" when the last parent was being made (the node's create answered after the registry's wait).
   */
  @Test
  void closingWhileTheNodeIsBeingCreatedLogsNoError() throws Exception {
    List<String> errorRounds = new ArrayList<>();
    List<String> moments = new ArrayList<>();
    try (TestingServer zk = new TestingServer(); SlowZooKeeper slow = new SlowZooKeeper(zk.getConnectString())) {
      for (int i = 0; i < ROUNDS.size(); i++) {
        Round round = ROUNDS.get(i);
        Set<Thread> threadsBefore = Thread.getAllStackTraces().keySet();
        slow.delay(0);
        String base = "/quiet-" + i;
        ZooKeeperRegistry registry = ZooKeeperRegistry.builder().connectString(slow.connectString())
            .basePath(base).connectionTimeout(Duration.ofMillis(500)).build();
        assertThat(registry.curator().blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
        slow.delay(DELAY_MS);
        int before = logged.size();
        Server a = new Server("a", registry.registrar(SERVICE).build(), Duration.ZERO);
        String service = registry.servicePath(SERVICE);
        String node = service + "/127.0.0.1:" + a.server.port();
        Predicate<SlowZooKeeper.Request> moment = switch (round.moment()) {
          case PARENTS -> r -> (r.path().equals(base) || r.path().equals(service))
              && (r.op() == SlowZooKeeper.EXISTS || r.op() == SlowZooKeeper.CREATE_CONTAINER);
          case LAST_PARENT -> r -> r.op() == SlowZooKeeper.CREATE_CONTAINER && r.path().equals(service);
          case NODE -> r -> r.op() == SlowZooKeeper.CREATE2 && r.path().equals(node);
        };
        SlowZooKeeper.Request held = slow.awaitHeld(moment, 10_000);
        moments.add(held.toString());
        List<String> errors = closeAndCollectErrors(round.registryFirst(), registry, a, slow, threadsBefore, before);
        if (!errors.isEmpty()) {
          errorRounds.add("round " + i + " (" + round + "; closed at " + held + "): " + errors);
        }
      }
    }
    System.out.println("QuietShutdownTest.closingWhileTheNodeIsBeingCreatedLogsNoError: " + errorRounds.size()
        + " of " + ROUNDS.size() + " rounds logged an ERROR (closed while ZooKeeper's answer was held to: "
        + String.join(", ", moments) + ")"
        + (errorRounds.isEmpty() ? "" : ":\n  " + String.join("\n  ", errorRounds)));
    assertThat(errorRounds).isEmpty();
  }

  /**
   * Waits until the registry's client can log nothing more: its connections through the proxy are closed (no
   * answer of ZooKeeper's can reach it), and the ZooKeeper client's threads made since {@code before} have ended
   * (the event thread, which runs Curator's callbacks for the answers it had, last).
   */
  /**
   * Closes the registry and the server in the round's order, waits until the round's ZooKeeper client has gone, and
   * returns the ERRORs logged since {@code before}.
   */
  private List<String> closeAndCollectErrors(boolean registryFirst, ZooKeeperRegistry registry, Server a,
      SlowZooKeeper slow, Set<Thread> threadsBefore, int before) throws Exception {
    if (registryFirst) {
      registry.close();
      a.server.shutdown();
    } else {
      a.server.shutdown();
      assertThat(a.server.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
      registry.close();
    }
    assertThat(a.server.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    awaitClientGone(slow, threadsBefore);
    return logged.subList(before, logged.size()).stream()
        .filter(e -> e.getLevel() == Level.ERROR).map(QuietShutdownTest::describe).toList();
  }

  private static void awaitClientGone(SlowZooKeeper slow, Set<Thread> before) throws Exception {
    slow.awaitAllClosed(10_000);
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      String name = t.getName();
      if (!before.contains(t) && (name.endsWith("-EventThread") || name.contains("-SendThread("))) {
        t.join(10_000);
        assertThat(t.isAlive()).as("ZooKeeper client thread %s ended", name).isFalse();
      }
    }
  }

  /**
   * The service's node is deleted (a cleanup tool) while ZooKeeper answers late: the server's node goes with it,
   * and Curator creates it again, its parents first, with synchronous calls on its background thread; once the
   * proxy holds the answer to one of those calls (the service's node looked up, or created), the server shuts down
   * and its registry closes (or the registry first). Closing the Curator client interrupts that thread: before,
   * Curator logged ERROR "Background exception was not retry-able or retry gave up" with an InterruptedException
   * (or, the parents made before the close, "Could not delete node after close"), in each round; now the registry
   * closes ZooKeeper's handle first, and the call ends as a lost connection, quietly.
   */
  @Test
  void closingWhileTheNodeIsCreatedAgainLogsNoError() throws Exception {
    List<String> errorRounds = new ArrayList<>();
    List<String> moments = new ArrayList<>();
    // The service's node looked up, the server first; created, the registry first (created, the server first,
    // is the LAST_PARENT round of closingWhileTheNodeIsBeingCreatedLogsNoError).
    int[] ops = {SlowZooKeeper.EXISTS, SlowZooKeeper.CREATE_CONTAINER};
    boolean[] registryFirst = {false, true};
    try (TestingServer zk = new TestingServer(); SlowZooKeeper slow = new SlowZooKeeper(zk.getConnectString());
        ZooKeeperRegistry direct = ZooKeeperRegistry.builder().connectString(zk.getConnectString()).build()) {
      for (int round = 0; round < ops.length; round++) {
        Set<Thread> threadsBefore = Thread.getAllStackTraces().keySet();
        slow.delay(0);
        String base = "/again-" + round;
        ZooKeeperRegistry registry = ZooKeeperRegistry.builder().connectString(slow.connectString())
            .basePath(base).connectionTimeout(Duration.ofSeconds(1)).build();
        Server a = new Server("a", registry.registrar(SERVICE).build(), Duration.ZERO);
        String service = registry.servicePath(SERVICE);
        String node = service + "/127.0.0.1:" + a.server.port();
        assertThat(direct.curator().checkExists().forPath(node)).as("registered").isNotNull();
        slow.delay(DELAY_MS);
        int before = logged.size();
        direct.curator().delete().deletingChildrenIfNeeded().forPath(service);
        int op = ops[round];
        SlowZooKeeper.Request held = slow.awaitHeld(r -> r.op() == op && r.path().equals(service), 10_000);
        moments.add(held.toString());
        List<String> errors = closeAndCollectErrors(registryFirst[round], registry, a, slow, threadsBefore, before);
        if (!errors.isEmpty()) {
          errorRounds.add("round " + round + " (" + (registryFirst[round] ? "registry closed first" : "server first")
              + ", closed at " + held + "): " + errors);
        }
      }
    }
    System.out.println("QuietShutdownTest.closingWhileTheNodeIsCreatedAgainLogsNoError: " + errorRounds.size()
        + " of " + ops.length + " rounds logged an ERROR (closed while ZooKeeper's answer was held to: "
        + String.join(", ", moments) + ")" + (errorRounds.isEmpty() ? "" : ":\n  "
        + String.join("\n  ", errorRounds)));
    assertThat(errorRounds).isEmpty();
  }

  /**
   * ZooKeeper slower than every wait of the registrar and the registry (its answers 3 s late, connectionTimeout 500
   * ms): the server's start gives up waiting for its node (WARN "not registered ... yet"), the node's create still
   * unanswered when the server shuts down and its registry closes. Curator's PersistentNode, closed before ZooKeeper
   * answered its create, deletes the node in the create's callback, and logs ERROR "Could not delete node after
   * close" when that callback runs after its Curator client closed. Before, the registry's close of ZooKeeper's
   * handle waited for the answer to the close of the session, which ZooKeeper sends after the create's: the callback
   * ran on the closed client, that ERROR in every run, and the close lasted until those late answers came (the
   * service's node is there already: under a new one the create fails for want of its parents, and nothing is
   * logged). Now, the registry's own request unanswered within its bound, the handle is closed without waiting: the
   * connection ends before ZooKeeper's answers arrive, the callbacks run with the session ended (SESSIONEXPIRED,
   * which Curator drops quietly) rather than with the create's answer, and the shutdown and the close keep their
   * bounds (500 ms each).
   */
  @Test
  void aNodeZooKeeperCreatesAfterEveryBoundLogsNoError() throws Exception {
    try (TestingServer zk = new TestingServer(); SlowZooKeeper slow = new SlowZooKeeper(zk.getConnectString())) {
      Set<Thread> threadsBefore = Thread.getAllStackTraces().keySet();
      ZooKeeperRegistry registry = ZooKeeperRegistry.builder().connectString(slow.connectString())
          .basePath("/late").connectionTimeout(Duration.ofMillis(500)).build();
      assertThat(registry.curator().blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
      // The service's node is there (other servers registered before): ZooKeeper creates the server's node.
      registry.curator().createContainers(registry.servicePath(SERVICE));
      slow.delay(3_000);
      int before = logged.size();
      Server a = new Server("a", registry.registrar(SERVICE).build(), Duration.ZERO);
      String node = registry.servicePath(SERVICE) + "/127.0.0.1:" + a.server.port();
      assertThat(logged.subList(before, logged.size())).as("the start gave up waiting for the node")
          .anyMatch(e -> e.getFormattedMessage().contains("is not registered in ZooKeeper"));
      slow.awaitHeld(r -> r.op() == SlowZooKeeper.CREATE2 && r.path().equals(node), 10_000);
      long started = System.nanoTime();
      a.server.shutdown();
      assertThat(a.server.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
      registry.close();
      long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
      awaitClientGone(slow, threadsBefore);
      List<String> errors = logged.subList(before, logged.size()).stream()
          .filter(e -> e.getLevel() == Level.ERROR).map(QuietShutdownTest::describe).toList();
      assertThat(errors).as("ERRORs logged").isEmpty();
      assertThat(took).as("ms the shutdown and the registry's close took (500 ms bound each)").isLessThan(2_000);
    }
  }
}
