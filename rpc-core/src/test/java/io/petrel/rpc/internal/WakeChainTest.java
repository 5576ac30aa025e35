package io.petrel.rpc.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class WakeChainTest {

  /** A blocking caller: creates its executor, hands it over, waits for its future. */
  private static final class Caller extends Thread {
    final CompletableFuture<String> future = new CompletableFuture<>();
    final CompletableFuture<ThreadlessExecutor> executor = new CompletableFuture<>();
    final AtomicReference<Thread> ranOn = new AtomicReference<>();
    volatile String result;

    @Override
    public void run() {
      ThreadlessExecutor e = new ThreadlessExecutor();
      executor.complete(e);
      try {
        e.awaitCompletion(future);
        result = future.join();
      } catch (InterruptedException ex) {
        result = "interrupted";
      }
    }
  }

  @Test
  void oneKickWakesEveryPostedCaller() throws Exception {
    WakeChain chain = new WakeChain();
    List<Caller> callers = new ArrayList<>();
    for (int i = 0; i < 64; i++) {
      Caller c = new Caller();
      c.start();
      callers.add(c);
    }
    for (int i = 0; i < callers.size(); i++) {
      Caller c = callers.get(i);
      String answer = "answer-" + i;
      chain.post(c.executor.get(10, TimeUnit.SECONDS), () -> {
        c.ranOn.set(Thread.currentThread());
        c.future.complete(answer);
      });
    }
    chain.kick(); // one wake-up from the "event loop"; the callers wake the rest
    for (int i = 0; i < callers.size(); i++) {
      Caller c = callers.get(i);
      c.join(TimeUnit.SECONDS.toMillis(10));
      assertThat(c.isAlive()).as("caller %d still waiting", i).isFalse();
      assertThat(c.result).isEqualTo("answer-" + i);
      assertThat(c.ranOn.get()).isSameAs(c); // decoded on the caller's own thread
    }
    assertThat(chain.isEmpty()).isTrue();
  }

  @Test
  void batchesPostedWhileCallersWakeAreAllDelivered() throws Exception {
    WakeChain chain = new WakeChain();
    int rounds = 200;
    int perRound = WakeChain.KICK + 8; // more than the event loop wakes itself: the callers wake the rest
    AtomicInteger done = new AtomicInteger();
    for (int r = 0; r < rounds; r++) {
      List<Caller> batch = new ArrayList<>();
      for (int i = 0; i < perRound; i++) {
        Caller c = new Caller();
        c.start();
        batch.add(c);
      }
      for (Caller c : batch) {
        chain.post(c.executor.get(10, TimeUnit.SECONDS), () -> c.future.complete("ok"));
      }
      chain.kick();
      for (Caller c : batch) {
        c.join(TimeUnit.SECONDS.toMillis(10));
        if ("ok".equals(c.result)) {
          done.incrementAndGet();
        }
      }
    }
    assertThat(done.get()).isEqualTo(rounds * perRound);
  }

  @Test
  void aCallerThatLeftIsSkippedAndItsTaskRunsOnThePoster() throws Exception {
    WakeChain chain = new WakeChain();
    Caller gone = new Caller();
    gone.start();
    ThreadlessExecutor goneExecutor = gone.executor.get(10, TimeUnit.SECONDS);
    gone.interrupt();
    gone.join(TimeUnit.SECONDS.toMillis(10));
    assertThat(gone.result).isEqualTo("interrupted");

    CountDownLatch ran = new CountDownLatch(1);
    AtomicReference<Thread> ranOn = new AtomicReference<>();
    chain.post(goneExecutor, () -> {
      ranOn.set(Thread.currentThread());
      ran.countDown();
    });
    assertThat(ran.await(1, TimeUnit.SECONDS)).isTrue();
    assertThat(ranOn.get()).isSameAs(Thread.currentThread());

    Caller waiting = new Caller();
    waiting.start();
    chain.post(waiting.executor.get(10, TimeUnit.SECONDS), () -> waiting.future.complete("woken"));
    chain.kick();
    waiting.join(TimeUnit.SECONDS.toMillis(10));
    assertThat(waiting.result).isEqualTo("woken");
  }
}
