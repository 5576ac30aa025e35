package io.petrel.rpc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The built-in business pool on its own: admission, hand-off without lost wake-ups, errors and shutdown. */
class BusinessPoolTest {

  @Test
  void everyCallOfBurstsFromSeveralThreadsRunsExactlyOnce() throws Exception {
    for (int queueSize : new int[] {64, 100_000}) { // the array queue, and the linked one above 65536 places
      BusinessPool pool = new BusinessPool("burst", 4, queueSize);
      int producers = 3;
      int perProducer = 20_000;
      AtomicInteger ran = new AtomicInteger();
      AtomicInteger rejected = new AtomicInteger();
      CountDownLatch done = new CountDownLatch(producers * perProducer);
      Thread[] threads = new Thread[producers];
      for (int p = 0; p < producers; p++) {
        threads[p] = new Thread(() -> {
          for (int i = 0; i < perProducer; i++) {
            for (int attempt = 0; ; attempt++) {
              try {
                pool.execute(() -> {
                  ran.incrementAndGet();
                  done.countDown();
                });
                break;
              } catch (RejectedExecutionException full) {
                rejected.incrementAndGet();
                assertThat(attempt).as("a full pool frees places as its calls end").isLessThan(10_000_000);
                Thread.yield();
              }
            }
          }
        });
        threads[p].start();
      }
      for (Thread t : threads) {
        t.join(30_000);
      }
      assertThat(done.await(30, TimeUnit.SECONDS)).as("no call is left in the queue while workers sleep").isTrue();
      assertThat(ran.get()).isEqualTo(producers * perProducer);
      assertThat(pool.poolSize()).isBetween(1, 4);
      if (queueSize == 100_000) {
        assertThat(rejected.get()).as("60000 calls fit 100000 places").isZero();
      }
      pool.shutdown();
    }
  }

  @Test
  void aCallAfterTheWorkersWentIdleWakesOne() throws Exception {
    // One call at a time: every call finds the workers searching, or parked, or just parking.
    BusinessPool pool = new BusinessPool("idle", 3, 8);
    for (int i = 0; i < 20_000; i++) {
      CountDownLatch ran = new CountDownLatch(1);
      pool.execute(ran::countDown);
      assertThat(ran.await(10, TimeUnit.SECONDS)).as("call %d ran", i).isTrue();
    }
    assertThat(pool.poolSize()).isBetween(1, 3);
    pool.shutdown();
  }

  @Test
  void aFullPoolRefusesAtOnceAndNamesBothLimits() throws Exception {
    BusinessPool pool = new BusinessPool("full", 2, 3);
    CountDownLatch gate = new CountDownLatch(1);
    CountDownLatch started = new CountDownLatch(2);
    AtomicInteger ran = new AtomicInteger();
    for (int i = 0; i < 2; i++) {
      pool.execute(() -> {
        started.countDown();
        await(gate);
        ran.incrementAndGet();
      });
    }
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(pool.activeCount()).isEqualTo(2);
    CountDownLatch queuedRan = new CountDownLatch(3);
    for (int i = 0; i < 3; i++) {
      pool.execute(queuedRan::countDown);
    }
    assertThat(pool.queuedCount()).isEqualTo(3);
    assertThat(pool.queueRemaining()).isZero();
    assertThatThrownBy(() -> pool.execute(() -> {})).isInstanceOf(RejectedExecutionException.class);
    assertThat(pool.fullMessage()).isEqualTo("server business pool is full: 2 threads busy and 3 of 3 queue places"
        + " taken (raise RpcServer.builder().businessThreads / businessQueueSize, make handlers faster, or add"
        + " servers)");
    gate.countDown();
    assertThat(queuedRan.await(10, TimeUnit.SECONDS)).isTrue();
    CountDownLatch again = new CountDownLatch(1);
    pool.execute(again::countDown); // places free again once calls end
    assertThat(again.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(ran.get()).isEqualTo(2);
    pool.shutdown();
  }

  @Test
  void withNoQueueACallRunsOnlyWhenAThreadIsFree() throws Exception {
    BusinessPool pool = new BusinessPool("noqueue", 1, 0);
    CountDownLatch gate = new CountDownLatch(1);
    CountDownLatch started = new CountDownLatch(1);
    pool.execute(() -> {
      started.countDown();
      await(gate);
    });
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    assertThatThrownBy(() -> pool.execute(() -> {})).isInstanceOf(RejectedExecutionException.class)
        .hasMessageContaining("full");
    assertThat(pool.fullMessage()).contains("1 threads busy and 0 of 0 queue places taken");
    gate.countDown();
    pool.shutdown();
  }

  @Test
  void shutdownRunsWhatWasAdmittedRefusesTheRestAndEndsItsThreads() throws Exception {
    BusinessPool pool = new BusinessPool("drain", 2, 10);
    CountDownLatch gate = new CountDownLatch(1);
    Set<Thread> workers = ConcurrentHashMap.newKeySet();
    CountDownLatch bothStarted = new CountDownLatch(2);
    AtomicInteger ran = new AtomicInteger();
    for (int i = 0; i < 6; i++) {
      pool.execute(() -> {
        if (workers.add(Thread.currentThread())) {
          bothStarted.countDown();
        }
        await(gate);
        ran.incrementAndGet();
      });
    }
    assertThat(bothStarted.await(10, TimeUnit.SECONDS)).isTrue();
    pool.shutdown();
    assertThat(pool.isShutdown()).isTrue();
    assertThatThrownBy(() -> pool.execute(() -> {})).isInstanceOf(RejectedExecutionException.class)
        .hasMessageContaining("shut down");
    gate.countDown();
    for (Thread t : workers) {
      t.join(10_000);
      assertThat(t.isAlive()).as("%s ended", t.getName()).isFalse();
    }
    assertThat(ran.get()).isEqualTo(6);
    assertThat(pool.completedCount()).isEqualTo(6);
    assertThat(pool.isTerminated()).isTrue();
    assertThat(workers).allSatisfy(t -> assertThat(t.getName()).startsWith("drain-business-"));
  }

  @Test
  void shutdownNowHandsBackQueuedCallsAndInterruptsRunningOnes() throws Exception {
    BusinessPool pool = new BusinessPool("stop", 1, 10);
    CountDownLatch started = new CountDownLatch(1);
    AtomicReference<Thread> worker = new AtomicReference<>();
    CountDownLatch interrupted = new CountDownLatch(1);
    pool.execute(() -> {
      worker.set(Thread.currentThread());
      started.countDown();
      try {
        new CountDownLatch(1).await(); // until interrupted
      } catch (InterruptedException e) {
        interrupted.countDown();
      }
    });
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    Runnable q1 = () -> {};
    Runnable q2 = () -> {};
    pool.execute(q1);
    pool.execute(q2);
    List<Runnable> never = pool.shutdownNow();
    assertThat(never).containsExactly(q1, q2);
    assertThat(interrupted.await(10, TimeUnit.SECONDS)).isTrue();
    worker.get().join(10_000);
    assertThat(worker.get().isAlive()).isFalse();
    assertThat(pool.isTerminated()).isTrue();
  }

  @Test
  void anErrorThatEscapesACallIsReportedAndTheThreadGoesOn() throws Exception {
    BusinessPool pool = new BusinessPool("err", 1, 4);
    AtomicReference<String> where = new AtomicReference<>();
    CountDownLatch reported = new CountDownLatch(1);
    pool.onError((w, t) -> {
      where.set(w + ": " + t.getMessage());
      reported.countDown();
    });
    pool.execute(() -> {
      throw new OutOfMemoryError("simulated");
    });
    pool.execute(() -> {
      throw new IllegalStateException("not an Error: not reported");
    });
    CountDownLatch after = new CountDownLatch(1);
    AtomicReference<Thread> worker = new AtomicReference<>();
    pool.execute(() -> {
      worker.set(Thread.currentThread());
      after.countDown();
    });
    assertThat(reported.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(after.await(10, TimeUnit.SECONDS)).as("the pool goes on").isTrue();
    assertThat(where.get()).startsWith("business thread err-business-").endsWith(": simulated");
    pool.shutdown();
    worker.get().join(10_000);
    assertThat(worker.get().isAlive()).isFalse();
    assertThat(pool.completedCount()).isEqualTo(3);
  }

  @Test
  void theSizesAreChecked() {
    assertThatThrownBy(() -> new BusinessPool("x", 0, 1)).hasMessage("threads must be > 0: 0");
    assertThatThrownBy(() -> new BusinessPool("x", 1, -1)).hasMessage("queueSize must be >= 0: -1");
  }

  private static void await(CountDownLatch gate) {
    try {
      if (!gate.await(10, TimeUnit.SECONDS)) {
        throw new IllegalStateException("the test's gate was not opened");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
