package io.petrel.examples.inventory;

import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import java.time.Duration;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Starts a Redis ({@link LocalRedis}), an Inventory server on 127.0.0.1 (a free port) and a client, calls every
 * method and prints what comes back. Run:
 * {@code java -cp rpc-examples/target/rpc-examples.jar io.petrel.examples.inventory.InventoryExample}.
 */
public final class InventoryExample {
  private InventoryExample() {}

  public static void main(String[] args) throws Exception {
    try {
      run(System.out::println);
    } catch (LocalRedis.Unavailable e) {
      System.err.println(e.getMessage());
      System.exit(2);
    }
  }

  /** Runs the example, reporting each step to {@code out}. */
  public static void run(Consumer<String> out) throws Exception {
    try (LocalRedis redis = LocalRedis.start();
        InventoryService service = new InventoryService(redis.uri(), 4);
        RpcServer server = RpcServer.builder()
            .bindAddress("127.0.0.1", 0)
            .addService(InventoryRpc.bind(service))
            .build()
            .start();
        RpcClient client = RpcClient.builder().address("127.0.0.1", server.port()).build()) {
      out.accept("Redis: " + redis.description());
      out.accept("server listening on 127.0.0.1:" + server.port());
      service.put("ada", Map.of("sword", 1, "potion", 5));
      service.put("bob", Map.of("potion", 1));

      InventoryRpc.InventoryStub inventory = InventoryRpc.stub(client).withDeadline(Duration.ofSeconds(5));
      out.accept("helloWorld: " + inventory.helloWorld("ada"));
      out.accept("get(ada): " + inventory.get("ada"));
      out.accept("getThenUpdate(ada, sword): " + inventory.getThenUpdate("ada", "sword") + " retries");
      out.accept("get2Update2(ada, bob, potion): " + inventory.get2Update2("ada", "bob", "potion") + " retries");
      out.accept("get(ada): " + inventory.get("ada") + ", get(bob): " + inventory.get("bob"));
    }
  }
}
