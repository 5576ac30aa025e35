package io.petrel.examples.inventory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The inventory service against a real redis-server (started by {@link LocalRedis} on a free loopback port)
 * through a real Petrel server and client on 127.0.0.1. Where no Redis can run, every test is skipped with the
 * message saying how to get one.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class InventoryServiceTest {
  private static LocalRedis redis;
  private static String noRedis;
  private static InventoryService service;
  private static RpcServer server;
  private static RpcClient client;
  private static Inventory inventory;

  @BeforeAll
  static void start() throws Exception {
    try {
      redis = LocalRedis.start();
    } catch (LocalRedis.Unavailable e) {
      noRedis = e.getMessage();
      return;
    }
    service = new InventoryService(redis.uri(), 4);
    server = RpcServer.builder().bindAddress("127.0.0.1", 0).addService(InventoryRpc.bind(service)).build().start();
    client = RpcClient.builder().address("127.0.0.1", server.port()).build().start();
    inventory = InventoryRpc.stub(client).withDeadline(Duration.ofSeconds(30));
  }

  @AfterAll
  static void stop() throws InterruptedException {
    if (client != null) {
      client.close();
    }
    if (server != null) {
      server.shutdownNow();
      server.awaitTermination(10, TimeUnit.SECONDS);
    }
    if (service != null) {
      service.close();
    }
    if (redis != null) {
      redis.close();
    }
  }

  private static void needRedis() {
    assumeTrue(redis != null, () -> "skipped: " + noRedis);
  }

  @Test
  void helloWorldAnswersWithoutRedis() {
    needRedis();
    assertThat(inventory.helloWorld("ada")).isEqualTo(InventoryService.HELLO_REPLY);
  }

  @Test
  void getReadsWhatRedisHolds() {
    needRedis();
    service.put("getter", Map.of("sword", 1, "potion", 5));
    assertThat(inventory.get("getter")).containsExactlyInAnyOrderEntriesOf(Map.of("sword", 1, "potion", 5));
    assertThat(inventory.get("nobody")).isEmpty();
  }

  @Test
  void concurrentUpdatesOfOneItemLoseNoIncrement() throws Exception {
    needRedis();
    service.put("racer", Map.of());
    int threads = 8;
    int each = 25;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<CompletableFuture<Integer>> retries = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        retries.add(CompletableFuture.supplyAsync(() -> {
          int sum = 0;
          for (int i = 0; i < each; i++) {
            int r = inventory.getThenUpdate("racer", "coin");
            assertThat(r).isBetween(0, InventoryService.MAX_RETRIES);
            sum += r;
          }
          return sum;
        }, pool));
      }
      CompletableFuture.allOf(retries.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
    } finally {
      pool.shutdownNow();
    }
    // Every increment landed exactly once, whatever the retries were: WATCH/MULTI made them atomic.
    assertThat(inventory.get("racer")).containsEntry("coin", threads * each);
  }

  @Test
  void transfersBetweenTwoPlayersKeepTheTotal() throws Exception {
    needRedis();
    service.put("p1", Map.of("gem", 10));
    service.put("p2", Map.of("gem", 0));
    service.put("p3", Map.of("gem", 3));
    String[][] pairs = {{"p1", "p2"}, {"p2", "p3"}, {"p3", "p1"}};
    ExecutorService pool = Executors.newFixedThreadPool(6);
    try {
      List<CompletableFuture<?>> all = new ArrayList<>();
      for (int t = 0; t < 6; t++) {
        String[] pair = pairs[t % pairs.length];
        all.add(CompletableFuture.runAsync(() -> {
          for (int i = 0; i < 20; i++) {
            assertThat(inventory.get2Update2(pair[0], pair[1], "gem")).isBetween(0, InventoryService.MAX_RETRIES);
          }
        }, pool));
      }
      CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
    } finally {
      pool.shutdownNow();
    }
    int total = 0;
    for (String p : List.of("p1", "p2", "p3")) {
      total += inventory.get(p).getOrDefault("gem", 0);
    }
    assertThat(total).isEqualTo(13);
  }

  @Test
  void transferToTheSamePlayerIsInvalid() {
    needRedis();
    assertThatThrownBy(() -> inventory.get2Update2("p1", "p1", "gem"))
        .isInstanceOfSatisfying(StatusException.class, e -> {
          assertThat(e.code()).isEqualTo(Status.Code.INVALID_ARGUMENT);
          assertThat(e.getMessage()).contains("two different players");
        });
  }

  @Test
  void theExampleRuns() throws Exception {
    needRedis();
    List<String> lines = new ArrayList<>();
    InventoryExample.run(lines::add);
    assertThat(lines).anySatisfy(l -> assertThat(l).isEqualTo("helloWorld: " + InventoryService.HELLO_REPLY));
    assertThat(lines).anySatisfy(l -> assertThat(l).startsWith("getThenUpdate(ada, sword): 0 retries"));
    assertThat(lines.get(lines.size() - 1)).contains("sword=2").contains("potion=4").contains("get(bob): {potion=2}");
  }
}
