package io.petrel.rpc.registry.zookeeper;

import static io.petrel.rpc.registry.zookeeper.Greeters.SERVICE;
import static org.assertj.core.api.Assertions.assertThat;

import io.petrel.rpc.registry.zookeeper.Greeters.Server;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;

/** How long {@link ZooKeeperRegistry#close()} takes where its waits cannot be answered. */
class RegistryCloseBoundsTest {
  /** ZooKeeper's closeSession operation (ZooDefs.OpCode.closeSession). */
  private static final int CLOSE_SESSION = -11;

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
   * the wait for ZooKeeper's answers has its own, so the registry closes its session within about 2 s. On the old
   * code each server's deregistration had a bound of its own: 4 s, then 1 s more. (Closing the session then waits
   * for ZooKeeper's answer until the client's read timeout, as Curator's own close always did.)
   */
  @Test
  void theServersStillRegisteredShareOneBound() throws Exception {
    try (TestingServer zk = new TestingServer(); SlowZooKeeper slow = new SlowZooKeeper(zk.getConnectString())) {
      ZooKeeperRegistry registry = ZooKeeperRegistry.builder().connectString(slow.connectString())
          .basePath("/close-several").connectionTimeout(Duration.ofSeconds(1)).build();
      List<Server> servers = new ArrayList<>();
      try {
        for (int i = 0; i < 4; i++) {
          servers.add(new Server("s" + i, registry.registrar(SERVICE).build(), Duration.ZERO));
        }
        slow.delay(600_000);
        long started = System.nanoTime();
        CompletableFuture<Void> closed = CompletableFuture.runAsync(registry::close);
        // The event: the registry closes ZooKeeper's session (its request reaches ZooKeeper) as its client closes.
        slow.awaitHeld(r -> r.op() == CLOSE_SESSION, 30_000);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started))
            .as("ms from registry.close() until it closes its ZooKeeper session").isLessThan(3_000);
        closed.get(60, TimeUnit.SECONDS);
      } finally {
        slow.delay(0);
        servers.forEach(Server::close);
      }
    }
  }
}
