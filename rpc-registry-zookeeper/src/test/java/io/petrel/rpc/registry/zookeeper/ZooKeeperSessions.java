package io.petrel.rpc.registry.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;

/** What the tests do to ZooKeeper sessions. */
final class ZooKeeperSessions {
  private ZooKeeperSessions() {}

  /**
   * Expires the session of {@code curator} on the ZooKeeper server, as when a client is cut off for longer than
   * its session timeout: a second handle joins the session and closes it, so the server deletes its ephemeral
   * nodes at once and the client hears that its session expired.
   */
  static void expire(CuratorFramework curator, TestingServer server) throws Exception {
    ZooKeeper victim = curator.getZookeeperClient().getZooKeeper();
    CountDownLatch joined = new CountDownLatch(1);
    ZooKeeper twin = new ZooKeeper(server.getConnectString(), 10_000, e -> {
      if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
        joined.countDown();
      }
    }, victim.getSessionId(), victim.getSessionPasswd());
    try {
      assertThat(joined.await(10, TimeUnit.SECONDS)).as("joined the session to expire").isTrue();
    } finally {
      twin.close();
    }
  }
}
