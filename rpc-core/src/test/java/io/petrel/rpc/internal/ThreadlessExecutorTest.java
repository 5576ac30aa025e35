package io.petrel.rpc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class ThreadlessExecutorTest {

  @Test
  void tasksSubmittedFromAnotherThreadRunOnTheWaiter() throws Exception {
    ThreadlessExecutor executor = new ThreadlessExecutor();
    CompletableFuture<String> future = new CompletableFuture<>();
    AtomicReference<Thread> ranOn = new AtomicReference<>();
    Thread other = new Thread(() -> executor.execute(() -> {
      ranOn.set(Thread.currentThread());
      future.complete("done");
    }));
    other.start();
    executor.awaitCompletion(future);
    assertThat(future.get()).isEqualTo("done");
    assertThat(ranOn.get()).isSameAs(Thread.currentThread());
    other.join();
  }

  @Test
  void aFutureCompletedElsewhereWithoutATaskStillWakesTheWaiter() throws Exception {
    ThreadlessExecutor executor = new ThreadlessExecutor();
    CompletableFuture<String> future = new CompletableFuture<>();
    Thread other = new Thread(() -> future.complete("direct"));
    other.start();
    executor.awaitCompletion(future);
    assertThat(future.get()).isEqualTo("direct");
    other.join();
  }

  @Test
  void interruptStopsWaitingAndLaterTasksRunOnTheirSubmitter() throws Exception {
    ThreadlessExecutor executor = new ThreadlessExecutor();
    CompletableFuture<String> never = new CompletableFuture<>();
    Thread.currentThread().interrupt();
    assertThatThrownBy(() -> executor.awaitCompletion(never)).isInstanceOf(InterruptedException.class);
    assertThat(Thread.interrupted()).isFalse(); // the flag was consumed with the exception

    AtomicReference<Thread> ranOn = new AtomicReference<>();
    CountDownLatch ran = new CountDownLatch(1);
    Thread other = new Thread(() -> executor.execute(() -> {
      ranOn.set(Thread.currentThread());
      ran.countDown();
    }), "submitter");
    other.start();
    assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(ranOn.get().getName()).isEqualTo("submitter");
    other.join();
  }

  @Test
  void aThrowingTaskDoesNotStopTheWait() throws Exception {
    ThreadlessExecutor executor = new ThreadlessExecutor();
    CompletableFuture<String> future = new CompletableFuture<>();
    executor.execute(() -> {
      throw new IllegalStateException("callback bug");
    });
    executor.execute(() -> future.complete("after"));
    executor.awaitCompletion(future);
    assertThat(future.get()).isEqualTo("after");
  }

  @Test
  void onlyTheCreatingThreadMayWait() throws Exception {
    ThreadlessExecutor executor = new ThreadlessExecutor();
    AtomicReference<Throwable> error = new AtomicReference<>();
    Thread other = new Thread(() -> {
      try {
        executor.awaitCompletion(new CompletableFuture<>());
      } catch (Throwable t) {
        error.set(t);
      }
    });
    other.start();
    other.join();
    assertThat(error.get()).isInstanceOf(IllegalStateException.class).hasMessageContaining("created on");
  }
}
