package io.petrel.examples.inventory;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.TransactionResult;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.petrel.rpc.Status;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * {@link Inventory} on Redis through Lettuce. Reads share one connection (Lettuce pipelines the commands of
 * many threads on it); each transaction takes a connection of its own from a pool of {@code transactionConnections}
 * (WATCH and MULTI belong to a connection), and waits up to {@link #BORROW_TIMEOUT} for one. A transaction
 * that conflicts more than {@link #MAX_RETRIES} times in a row fails with ABORTED (the caller may run it again);
 * a Redis that does not answer fails the call with UNAVAILABLE. Closing the service closes its connections and its Redis client.
 */
public final class InventoryService implements Inventory, AutoCloseable {
  /** What {@link #helloWorld} answers. */
  public static final String HELLO_REPLY = "world received";
  /** How often a transaction starts again before the call fails with ABORTED. */
  public static final int MAX_RETRIES = 100;
  /** How long a transaction waits for a free connection before the call fails with RESOURCE_EXHAUSTED. */
  public static final Duration BORROW_TIMEOUT = Duration.ofSeconds(5);

  private final RedisClient redis;
  private final StatefulRedisConnection<String, String> shared;
  private final BlockingQueue<StatefulRedisConnection<String, String>> pool;

  /** Connects to the Redis at {@code uri} ("redis://127.0.0.1:6379") with {@code transactionConnections}. */
  public InventoryService(String uri, int transactionConnections) {
    if (transactionConnections < 1) {
      throw new IllegalArgumentException("transactionConnections must be >= 1: " + transactionConnections);
    }
    this.redis = RedisClient.create(RedisURI.create(uri));
    this.pool = new ArrayBlockingQueue<>(transactionConnections);
    try {
      this.shared = redis.connect();
      for (int i = 0; i < transactionConnections; i++) {
        pool.add(redis.connect());
      }
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  /** Gives {@code player} the items of {@code items} (replacing what was there). */
  public void put(String player, Map<String, Integer> items) {
    Map<String, String> m = new LinkedHashMap<>();
    items.forEach((k, v) -> m.put(k, Integer.toString(v)));
    shared.sync().del(key(player));
    if (!m.isEmpty()) {
      shared.sync().hset(key(player), m);
    }
  }

  @Override
  public String helloWorld(String name) {
    return HELLO_REPLY;
  }

  @Override
  public Map<String, Integer> get(String player) {
    Map<String, Integer> items = new LinkedHashMap<>();
    shared.sync().hgetall(key(player)).forEach((k, v) -> items.put(k, Integer.parseInt(v)));
    return items;
  }

  @Override
  public int getThenUpdate(String player, String item) {
    String key = key(player);
    return transaction(c -> {
      c.watch(key);
      int n = count(c.hget(key, item));
      c.multi();
      c.hset(key, item, Integer.toString(n + 1));
      return c.exec();
    });
  }

  @Override
  public int get2Update2(String player, String otherPlayer, String item) {
    if (player.equals(otherPlayer)) {
      throw Status.INVALID_ARGUMENT.withDescription("get2Update2 needs two different players: " + player)
          .asException();
    }
    String a = key(player);
    String b = key(otherPlayer);
    return transaction(c -> {
      c.watch(a, b);
      int na = count(c.hget(a, item));
      int nb = count(c.hget(b, item));
      c.multi();
      if (na >= nb) {
        c.hset(a, item, Integer.toString(na - 1));
        c.hset(b, item, Integer.toString(nb + 1));
      } else {
        c.hset(a, item, Integer.toString(na + 1));
        c.hset(b, item, Integer.toString(nb - 1));
      }
      return c.exec();
    });
  }

  private interface Attempt {
    TransactionResult run(RedisCommands<String, String> commands);
  }

  /** Runs {@code attempt} on a pooled connection until EXEC goes through; returns the retries. */
  private int transaction(Attempt attempt) {
    StatefulRedisConnection<String, String> c;
    try {
      c = pool.poll(BORROW_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw Status.CANCELLED.withDescription("interrupted while waiting for a Redis connection").asException();
    }
    if (c == null) {
      throw Status.RESOURCE_EXHAUSTED.withDescription("no Redis connection free within " + BORROW_TIMEOUT.toMillis()
          + " ms (all " + pool.remainingCapacity() + " busy; raise transactionConnections)").asException();
    }
    try {
      RedisCommands<String, String> commands = c.sync();
      for (int retries = 0; retries <= MAX_RETRIES; retries++) {
        TransactionResult r = attempt.run(commands);
        if (!r.wasDiscarded()) {
          return retries;
        }
      }
      throw Status.ABORTED.withDescription("the transaction conflicted " + (MAX_RETRIES + 1)
          + " times in a row").asException();
    } catch (io.lettuce.core.RedisException e) {
      // Leave no WATCH or MULTI behind on a connection that goes back to the pool.
      try {
        c.sync().discard();
      } catch (RuntimeException ignored) {
        c.sync().unwatch();
      }
      throw Status.UNAVAILABLE.withDescription("Redis: " + e.getMessage()).withCause(e).asException();
    } finally {
      pool.add(c);
    }
  }

  private static int count(String value) {
    return value == null ? 0 : Integer.parseInt(value);
  }

  private static String key(String player) {
    return "inv:" + player;
  }

  @Override
  public void close() {
    StatefulRedisConnection<String, String> c;
    while ((c = pool.poll()) != null) {
      c.close();
    }
    if (shared != null) {
      shared.close();
    }
    redis.shutdown();
  }
}
