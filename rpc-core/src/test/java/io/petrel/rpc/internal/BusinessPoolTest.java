package io.petrel.rpc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
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
    // One call at a time: every call finds the workers searching, or parked, or just parking; with a leading
    // searcher too, whose search then stays long.
    for (long maxSpin : new long[] {0, TimeUnit.MICROSECONDS.toNanos(50)}) {
      BusinessPool pool = new BusinessPool("idle", 3, 8, maxSpin);
      for (int i = 0; i < 20_000; i++) {
        CountDownLatch ran = new CountDownLatch(1);
        pool.execute(ran::countDown);
        assertThat(ran.await(10, TimeUnit.SECONDS)).as("call %d ran", i).isTrue();
      }
      assertThat(pool.poolSize()).isBetween(1, 3);
      pool.shutdown();
      assertThat(awaitTermination(pool)).isTrue();
    }
  }

  @Test
  void aFullPoolRefusesAtOnceAndNamesBothLimits() throws Exception {
    BusinessPool pool = new BusinessPool("full", 2, 3);
    CountDownLatch gate = new CountDownLatch(1);
    CountDownLatch started = new CountDownLatch(2);
    CountDownLatch ran = new CountDownLatch(2);
    for (int i = 0; i < 2; i++) {
      pool.execute(() -> {
        started.countDown();
        await(gate);
        ran.countDown();
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
    assertThat(ran.await(10, TimeUnit.SECONDS)).as("both gated calls ended").isTrue();
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
  void aCallAdmittedWhileShutdownNowRunsIsHandedBackNotLeftToRun() throws Exception {
    // The one thread is held in a call that ignores interrupts, so no worker takes a queued call while shutdownNow
    // runs: every call admitted before it returns must be in the list it returns, none run later or stranded.
    for (int round = 0; round < 200; round++) {
      BusinessPool pool = new BusinessPool("race", 1, 100_000);
      CountDownLatch gate = new CountDownLatch(1);
      CountDownLatch held = new CountDownLatch(1);
      pool.execute(() -> {
        held.countDown();
        awaitUninterruptibly(gate);
      });
      assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();
      Set<Runnable> admitted = ConcurrentHashMap.newKeySet();
      Set<Runnable> ranLate = ConcurrentHashMap.newKeySet();
      // More producers than cores: some are preempted between admitting their call and queueing it.
      Thread[] producers = new Thread[4];
      CountDownLatch producing = new CountDownLatch(producers.length);
      for (int p = 0; p < producers.length; p++) {
        producers[p] = new Thread(() -> {
          producing.countDown();
          for (;;) {
            Runnable[] self = new Runnable[1];
            self[0] = () -> ranLate.add(self[0]);
            try {
              pool.execute(self[0]);
            } catch (RejectedExecutionException refused) {
              if (pool.isShutdown()) {
                return;
              }
              continue; // full
            }
            admitted.add(self[0]);
          }
        });
        producers[p].start();
      }
      assertThat(producing.await(10, TimeUnit.SECONDS)).isTrue();
      List<Runnable> never = pool.shutdownNow();
      for (Thread t : producers) {
        t.join(10_000);
        assertThat(t.isAlive()).isFalse();
      }
      gate.countDown();
      assertThat(awaitTermination(pool)).as("round %d: no admitted call is left in the queue", round).isTrue();
      assertThat(ranLate).as("round %d: calls admitted before shutdownNow that ran after it", round).isEmpty();
      assertThat(never).as("round %d", round).hasSameSizeAs(admitted);
      assertThat(new HashSet<>(never)).as("round %d: the calls handed back", round).isEqualTo(admitted);
    }
  }

  @Test
  void withHundredsOfThreadsEveryCallRunsAndTheLowestParkedThreadsAreReused() throws Exception {
    int threads = 512; // eight words of the bitmaps of parked threads and free places
    BusinessPool pool = new BusinessPool("wide", threads, 1000);
    try {
      for (int wave = 0; wave < 2; wave++) { // the first starts every thread, the second wakes parked ones
        CountDownLatch gate = new CountDownLatch(1);
        CountDownLatch allRunning = new CountDownLatch(threads);
        CountDownLatch done = new CountDownLatch(threads + 300);
        Set<Thread> ran = ConcurrentHashMap.newKeySet();
        for (int i = 0; i < threads; i++) {
          pool.execute(() -> {
            ran.add(Thread.currentThread());
            allRunning.countDown();
            await(gate);
            done.countDown();
          });
        }
        assertThat(allRunning.await(30, TimeUnit.SECONDS)).as("wave %d: all %d threads run a call", wave, threads)
            .isTrue();
        assertThat(pool.activeCount()).isEqualTo(threads);
        for (int i = 0; i < 300; i++) {
          pool.execute(done::countDown); // queued: every thread is busy
        }
        gate.countDown();
        assertThat(done.await(30, TimeUnit.SECONDS)).as("wave %d: every queued call ran", wave).isTrue();
        assertThat(ran).hasSize(threads);
        assertThat(pool.poolSize()).isEqualTo(threads);
      }
      // One call at a time: the parked thread woken is the lowest one, so a few threads do all the work and the
      // others stay parked (and end after the keep-alive).
      Set<Thread> used = ConcurrentHashMap.newKeySet();
      for (int i = 0; i < 2000; i++) {
        CountDownLatch ran = new CountDownLatch(1);
        pool.execute(() -> {
          used.add(Thread.currentThread());
          ran.countDown();
        });
        assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
      }
      assertThat(used.size()).as("threads that ran 2000 calls made one after the other").isLessThanOrEqualTo(8);
      assertThat(pool.poolSize()).isEqualTo(threads);
    } finally {
      pool.shutdown();
      assertThat(awaitTermination(pool)).isTrue();
    }
  }

  @Test
  void aCallQueuedBehindAQuickWorkersCallThatTurnsOutSlowIsTakenByAnotherThread() throws Exception {
    // A worker whose calls are quick does not wake another for the call queued behind the one it takes; when
    // that call blocks, the watch finds the queued call held up and wakes a thread for it, though nothing else
    // arrives that would. (Here every call counts as quick, so only the watch can wake the second thread.)
    long watchWakeups = 0;
    int rounds = 0;
    // At least 5 rounds, and more (up to 50) while none needed the watch: on a busy machine the rare case below
    // can happen in 5 rounds in a row (a fresh-clone build saw it once).
    for (int round = 0; round < 5 || (watchWakeups == 0 && round < 50); round++) {
      rounds++;
      BusinessPool pool = new BusinessPool("watched", 2, 10, 0, Long.MAX_VALUE);
      CountDownLatch gate = new CountDownLatch(1);
      try {
        CountDownLatch slowRunning = new CountDownLatch(1);
        CountDownLatch behindRan = new CountDownLatch(1);
        pool.execute(() -> {
          slowRunning.countDown();
          awaitUninterruptibly(gate);
        });
        pool.execute(behindRan::countDown);
        assertThat(slowRunning.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(behindRan.await(10, TimeUnit.SECONDS)).as("round %d: the call queued behind the slow one ran",
            round).isTrue();
        assertThat(gate.getCount()).as("while the slow one still runs").isEqualTo(1);
        // (Rarely, the first call is taken before the second is queued, and the second wakes a thread itself.)
        watchWakeups += pool.watchWakeups();
      } finally {
        gate.countDown();
        pool.shutdown();
        assertThat(awaitTermination(pool)).isTrue();
      }
      Thread watch = pool.watchThread();
      assertThat(watch).isNotNull();
      watch.join(TimeUnit.SECONDS.toMillis(10));
      assertThat(watch.isAlive()).as("the watch ends with the pool").isFalse();
    }
    assertThat(watchWakeups).as("threads the watch woke for held-up calls, in %d rounds", rounds).isPositive();
  }

  @Test
  void anIdlePoolParksEveryThread() throws Exception {
    // What keeps an idle server at no CPU: after the last call, every worker ends its search and parks, the
    // leading searcher (when there is one) as well.
    for (long maxSpin : new long[] {BusinessPool.MAX_SPIN_NANOS, TimeUnit.MICROSECONDS.toNanos(50)}) {
      parksEveryThreadWhenIdle(new BusinessPool("quiet", 8, 1000, maxSpin));
    }
  }

  private static void parksEveryThreadWhenIdle(BusinessPool pool) throws Exception {
    Set<Thread> workers = ConcurrentHashMap.newKeySet();
    for (int round = 0; round < 50; round++) { // calls close together, so that a worker leads a long search
      CountDownLatch done = new CountDownLatch(200);
      for (int i = 0; i < 200; i++) {
        pool.execute(() -> {
          workers.add(Thread.currentThread());
          done.countDown();
        });
      }
      assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!workers.stream().allMatch(t -> t.getState() == Thread.State.TIMED_WAITING)
        && System.nanoTime() < deadline) {
      Thread.yield();
    }
    assertThat(workers).isNotEmpty().allSatisfy(t -> assertThat(t.getState()).as(t.getName())
        .isEqualTo(Thread.State.TIMED_WAITING));
    Thread watch = pool.watchThread();
    assertThat(watch).isNotNull();
    while (watch.getState() != Thread.State.WAITING && System.nanoTime() < deadline) {
      Thread.yield();
    }
    assertThat(watch.getState()).as("the watch of an idle pool parks without a timeout").isEqualTo(Thread.State.WAITING);
    pool.shutdown();
    assertThat(awaitTermination(pool)).isTrue();
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

  private static boolean awaitTermination(BusinessPool pool) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!pool.isTerminated() && System.nanoTime() < deadline) {
      Thread.yield();
    }
    return pool.isTerminated();
  }

  private static void awaitUninterruptibly(CountDownLatch gate) {
    boolean interrupted = false;
    try {
      for (;;) {
        try {
          if (!gate.await(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the test's gate was not opened");
          }
          return;
        } catch (InterruptedException e) {
          interrupted = true; // shutdownNow's: this call goes on until the test opens the gate
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
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
