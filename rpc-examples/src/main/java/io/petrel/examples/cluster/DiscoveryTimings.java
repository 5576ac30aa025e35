package io.petrel.examples.cluster;

import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServerLifecycleListener;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.registry.zookeeper.ZooKeeperRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.apache.curator.test.TestingServer;

/**
 * Measures how fast a client follows servers that register and deregister in ZooKeeper (an embedded one, on a
 * free port). One server stays registered; a client on {@code zk://.../petrel/cluster.Hello} (default options:
 * least-pending balancing, {@code removalDelay} 200 ms) keeps calling from {@value #CALLERS} threads. Each try
 * starts a second server and measures from the moment it asks ZooKeeper to register (its lifecycle listener's
 * {@code onServing}, just before the registrar's) to the first call its handler runs; then shuts it down (drain
 * delay 1 s, so it still serves) and measures from the moment it asks ZooKeeper to deregister ({@code onDraining})
 * to the last call its handler runs. Prints each try, then the median and the max. Run:
 * {@code java -cp rpc-examples/target/rpc-examples.jar io.petrel.examples.cluster.DiscoveryTimings [tries]}
 * (default 10 tries, at most 100).
 */
public final class DiscoveryTimings {
  static final int CALLERS = 4;
  /** Long enough that calls stop reaching a leaving server because clients dropped it, not because of GOAWAY. */
  static final Duration DRAIN_DELAY = Duration.ofSeconds(1);
  /** How long a try waits for the first call to a new server before it gives up. */
  static final Duration WAIT = Duration.ofSeconds(10);

  private DiscoveryTimings() {}

  public static void main(String[] args) throws Exception {
    int tries = args.length > 0 ? Integer.parseInt(args[0]) : 10;
    Result r = run(tries, System.out::println);
    System.exit(r.failedCalls() == 0 && r.missedTries() == 0 ? 0 : 1);
  }

  /**
   * What the tries measured, in milliseconds, one entry per try that saw a call: register-to-first-call and
   * deregister-to-last-call; tries in which the new server got no call within {@link #WAIT}; failed calls.
   */
  public record Result(long[] firstCallMs, long[] lastCallMs, int missedTries, long failedCalls) {}

  public static Result run(int tries, Consumer<String> out) throws Exception {
    if (tries < 1 || tries > 100) {
      throw new IllegalArgumentException("tries must be 1..100: " + tries);
    }
    List<Long> first = new ArrayList<>();
    List<Long> last = new ArrayList<>();
    int missed = 0;
    try (TestingServer zk = new TestingServer();
        ZooKeeperRegistry stayingRegistry = ZooKeeperRegistry.builder().connectString(zk.getConnectString())
            .build();
        RpcServer staying = RpcServer.builder().name("staying").bindAddress("127.0.0.1", 0)
            .addService(HelloRpc.bind(caller -> "staying"))
            .addLifecycleListener(stayingRegistry.registrar("cluster.Hello").build()).build().start();
        RpcClient client = RpcClient.builder().target("zk://" + zk.getConnectString() + "/petrel/cluster.Hello")
            .build()) {
      Hello hello = HelloRpc.stub(client).withDeadline(Duration.ofSeconds(2));
      Calls calls = new Calls(hello);
      calls.start();
      try {
        for (int i = 1; i <= tries; i++) {
          Try t = new Try(zk.getConnectString(), i);
          try {
            if (!t.firstCall.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
              missed++;
              out.accept("try " + i + ": no call reached the new server within " + WAIT.toMillis() + " ms");
              continue;
            }
            t.leave();
          } finally {
            t.close();
          }
          long firstMs = TimeUnit.NANOSECONDS.toMillis(t.firstCallAt.get() - t.registeringAt);
          long lastMs = TimeUnit.NANOSECONDS.toMillis(t.lastCallAt.get() - t.deregisteringAt);
          first.add(firstMs);
          last.add(lastMs);
          out.accept("try " + i + ": first call " + firstMs + " ms after it began to register; last call " + lastMs
              + " ms after it began to deregister (drain delay " + DRAIN_DELAY.toMillis() + " ms)");
        }
      } finally {
        calls.stop();
      }
      Result r = new Result(first.stream().mapToLong(Long::longValue).toArray(),
          last.stream().mapToLong(Long::longValue).toArray(), missed, calls.failed.get());
      out.accept("register-to-first-call: " + summary(r.firstCallMs()));
      out.accept("deregister-to-last-call: " + summary(r.lastCallMs()));
      out.accept("calls made " + calls.made.get() + ", failed " + calls.failed.get() + ", tries without a call "
          + missed);
      return r;
    }
  }

  static String summary(long[] ms) {
    if (ms.length == 0) {
      return "no try";
    }
    long[] sorted = ms.clone();
    Arrays.sort(sorted);
    long median = sorted.length % 2 == 1 ? sorted[sorted.length / 2]
        : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
    return "median " + median + " ms, max " + sorted[sorted.length - 1] + " ms (" + ms.length + " tries)";
  }

  /** A server that registers, is called, and leaves; it notes when each of these happened. */
  private static final class Try implements AutoCloseable {
    final ZooKeeperRegistry registry;
    final RpcServer server;
    final CountDownLatch firstCall = new CountDownLatch(1);
    final AtomicLong firstCallAt = new AtomicLong();
    final AtomicLong lastCallAt = new AtomicLong();
    volatile long registeringAt;
    volatile long deregisteringAt;

    Try(String connectString, int i) throws Exception {
      registry = ZooKeeperRegistry.builder().connectString(connectString).build();
      // Added before the registrar, so it hears onServing and onDraining just before the registrar acts.
      ServerLifecycleListener clock = new ServerLifecycleListener() {
        @Override
        public void onServing(RpcServer s) {
          registeringAt = System.nanoTime();
        }

        @Override
        public void onDraining(RpcServer s) {
          deregisteringAt = System.nanoTime();
        }
      };
      server = RpcServer.builder().name("joining-" + i).bindAddress("127.0.0.1", 0)
          .addService(HelloRpc.bind(caller -> {
            long now = System.nanoTime();
            if (firstCallAt.compareAndSet(0, now)) {
              firstCall.countDown();
            }
            lastCallAt.accumulateAndGet(now, Math::max);
            return "joining";
          }))
          .addLifecycleListener(clock)
          .addLifecycleListener(registry.registrar("cluster.Hello").build())
          .drainDelay(DRAIN_DELAY)
          .build()
          .start();
    }

    /** Shuts the server down (deregistered first, then its drain delay) and waits until it has stopped. */
    void leave() throws InterruptedException {
      server.shutdown();
      if (!server.awaitTermination(DRAIN_DELAY.toSeconds() + 30, TimeUnit.SECONDS)) {
        throw new IllegalStateException(server + " did not stop");
      }
    }

    @Override
    public void close() {
      server.close();
      registry.close();
    }
  }

  /** Blocking calls from {@link #CALLERS} threads until stopped. */
  private static final class Calls {
    final Hello hello;
    final AtomicLong made = new AtomicLong();
    final AtomicLong failed = new AtomicLong();
    final List<Thread> threads = new ArrayList<>();
    volatile boolean stopped;

    Calls(Hello hello) {
      this.hello = hello;
    }

    void start() {
      for (int i = 0; i < CALLERS; i++) {
        Thread t = new Thread(() -> {
          while (!stopped) {
            made.incrementAndGet();
            try {
              hello.hello("timings");
            } catch (StatusException e) {
              failed.incrementAndGet();
            }
          }
        }, "timings-caller-" + i);
        t.setDaemon(true);
        threads.add(t);
        t.start();
      }
    }

    void stop() throws InterruptedException {
      stopped = true;
      for (Thread t : threads) {
        t.join(10_000);
      }
    }
  }
}
