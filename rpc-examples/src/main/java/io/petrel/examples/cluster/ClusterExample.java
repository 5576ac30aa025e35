package io.petrel.examples.cluster;

import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.registry.zookeeper.ZooKeeperRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.curator.test.TestingServer;
import org.jspecify.annotations.Nullable;

/**
 * Three Hello servers on 127.0.0.1 register in ZooKeeper (an embedded one, Curator's TestingServer, on a free
 * port); a client finds them through {@code zk://.../petrel/cluster.Hello} and keeps calling while one server is
 * shut down gracefully: it deregisters, serves its drain delay, then goes away. No call fails. Run:
 * {@code java -cp rpc-examples/target/rpc-examples.jar io.petrel.examples.cluster.ClusterExample}.
 */
public final class ClusterExample {
  /** How long a server keeps serving after it deregistered, before it tells its clients to go away. */
  static final Duration DRAIN_DELAY = Duration.ofMillis(500);

  private ClusterExample() {}

  public static void main(String[] args) throws Exception {
    Result r = run(300, System.out::println);
    System.exit(r.failed() == 0 ? 0 : 1);
  }

  /**
   * What the run saw: calls per server before and after server-2 left, how many failed, and how long after its
   * shutdown began server-2 answered its last call.
   */
  public record Result(Map<String, Integer> before, Map<String, Integer> after, int failed, long lastCallToLeaverMs) {}

  /** Calls {@code calls} times with three servers, shuts server-2 down, calls {@code 2 * calls} times more. */
  public static Result run(int calls, Consumer<String> out) throws Exception {
    List<AutoCloseable> closing = new ArrayList<>();
    TestingServer zk = new TestingServer(); // a real ZooKeeper server in this JVM, on a free port
    try {
      out.accept("ZooKeeper listening on " + zk.getConnectString());
      List<RpcServer> servers = new ArrayList<>();
      for (int i = 1; i <= 3; i++) {
        String name = "server-" + i;
        // Each server has its own ZooKeeper session, as separate processes would.
        ZooKeeperRegistry registry = ZooKeeperRegistry.builder().connectString(zk.getConnectString()).build();
        RpcServer server = RpcServer.builder()
            .name(name)
            .bindAddress("127.0.0.1", 0)
            .addService(HelloRpc.bind(caller -> name + " says hello to " + caller))
            .addLifecycleListener(registry.registrar("cluster.Hello").zone("zone-" + i).build())
            .drainDelay(DRAIN_DELAY)
            .build()
            .start(); // returns once the server is registered
        servers.add(server);
        closing.add(0, registry);
        closing.add(0, server);
        out.accept(name + " serving on 127.0.0.1:" + server.port() + ", registered");
      }

      String target = "zk://" + zk.getConnectString() + "/petrel/cluster.Hello";
      try (RpcClient client = RpcClient.builder().target(target).loadBalancer("round_robin").build()) {
        Hello hello = HelloRpc.stub(client).withDeadline(Duration.ofSeconds(2));
        out.accept("client calling " + target);
        int[] failed = new int[1];
        Map<String, Integer> before = callMany(hello, calls, failed, null);
        out.accept("first " + calls + " calls: " + before);

        RpcServer leaving = servers.get(1);
        long shutdownAt = System.nanoTime();
        leaving.shutdown(); // deregisters at once, serves DRAIN_DELAY more, then GOAWAY
        out.accept("server-2 shut down: deregistered, draining");
        long[] lastToLeaver = {shutdownAt};
        Map<String, Integer> after = callMany(hello, 2 * calls, failed, lastToLeaver);
        long lastMs = TimeUnit.NANOSECONDS.toMillis(lastToLeaver[0] - shutdownAt);
        out.accept("next " + 2 * calls + " calls: " + after);
        out.accept("server-2's last call came " + lastMs + " ms after its shutdown began (its drain delay is "
            + DRAIN_DELAY.toMillis() + " ms)");
        out.accept("failed calls: " + failed[0]);
        leaving.awaitTermination(10, TimeUnit.SECONDS);
        return new Result(before, after, failed[0], lastMs);
      }
    } finally {
      for (AutoCloseable c : closing) {
        c.close(); // servers first (they deregister), then their registries
      }
      zk.close();
    }
  }

  private static Map<String, Integer> callMany(Hello hello, int n, int[] failed,
      long @Nullable [] lastToServer2) {
    Map<String, Integer> byServer = new TreeMap<>();
    for (int i = 0; i < n; i++) {
      try {
        String answer = hello.hello("call-" + i);
        String server = answer.substring(0, answer.indexOf(' '));
        byServer.merge(server, 1, Integer::sum);
        if (lastToServer2 != null && server.equals("server-2")) {
          lastToServer2[0] = System.nanoTime();
        }
      } catch (StatusException e) {
        failed[0]++;
      }
    }
    return byServer;
  }
}
