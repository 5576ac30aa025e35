package io.petrel.rpc.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The ways a seed workload drives calls: blocking callers in a closed loop, a window of pipelined calls, and
 * an open-loop schedule at a fixed rate. Each runs a warm-up, then {@link Tally#begin() measures}, then stops
 * and waits for the calls still in flight. Every call's outcome goes to the {@link Tally}; none stops the run.
 */
final class Load {
  /** How long to wait for calls still in flight once a run stops. */
  static final Duration DRAIN = Duration.ofSeconds(30);

  private Load() {}

  /** A blocking call that returns the value to tally (null: tally no value) or throws. */
  @FunctionalInterface
  interface BlockingCall {
    @Nullable Object call() throws Exception;
  }

  /** {@code threads} callers each calling {@code call} in a loop: warm-up, then the measured window. */
  static void blocking(int threads, BlockingCall call, Tally tally, Duration warmup, Duration measure)
      throws InterruptedException {
    AtomicInteger stop = new AtomicInteger();
    List<Thread> callers = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      Thread t = new Thread(() -> {
        while (stop.get() == 0) {
          long t0 = System.nanoTime();
          try {
            Object v = call.call();
            tally.success(System.nanoTime() - t0, v);
          } catch (Exception | Error e) {
            tally.failure(e);
          }
        }
      }, "seed-caller-" + i);
      t.setDaemon(true);
      callers.add(t);
      t.start();
    }
    window(tally, warmup, measure);
    stop.set(1);
    for (Thread t : callers) {
      t.join(DRAIN.toMillis());
    }
  }

  /**
   * {@code inFlight} calls outstanding at all times: each completion starts the next one (the rpcx benchmark's
   * concurrent callers without a thread each).
   */
  static void window(int inFlight, Supplier<CompletableFuture<?>> call, Tally tally, Duration warmup,
      Duration measure) throws InterruptedException {
    AtomicInteger outstanding = new AtomicInteger();
    CountDownLatch drained = new CountDownLatch(1);
    boolean[] stop = {false};
    Runnable[] next = new Runnable[1];
    next[0] = () -> {
      long t0 = System.nanoTime();
      CompletableFuture<?> f;
      try {
        f = call.get();
      } catch (RuntimeException e) {
        f = CompletableFuture.failedFuture(e);
      }
      f.whenComplete((v, e) -> {
        if (e == null) {
          tally.success(System.nanoTime() - t0, null);
        } else {
          tally.failure(e);
        }
        if (!stopped(stop)) {
          if (e != null) {
            // A call can fail at once (no connection): start the next elsewhere, not deeper in this stack.
            java.util.concurrent.ForkJoinPool.commonPool().execute(next[0]);
          } else {
            next[0].run();
          }
        } else if (outstanding.decrementAndGet() == 0) {
          drained.countDown();
        }
      });
    };
    outstanding.set(inFlight);
    for (int i = 0; i < inFlight; i++) {
      next[0].run();
    }
    window(tally, warmup, measure);
    synchronized (stop) {
      stop[0] = true;
    }
    if (!drained.await(DRAIN.toSeconds(), TimeUnit.SECONDS)) {
      System.err.println("seed: " + outstanding.get() + " calls still in flight " + DRAIN.toSeconds()
          + " s after the run stopped");
    }
  }

  private static boolean stopped(boolean[] stop) {
    synchronized (stop) {
      return stop[0];
    }
  }

  /**
   * An open-loop schedule: call {@code i} is due at {@code start + i / rate}, whether or not earlier calls have
   * come back, and its latency is counted from the moment it was due, so a stall delays and counts against
   * every call scheduled during it (no coordinated omission). {@code threads} > 0: that many blocking callers
   * take the due calls in turn (synchronous mode; a call waits for a free caller, and that wait counts);
   * {@code threads} == 0: one thread sends each call asynchronously when it is due.
   */
  static void openLoop(double rate, int threads, BlockingCall blocking, Supplier<CompletableFuture<?>> async,
      Tally tally, Duration warmup, Duration measure) throws InterruptedException {
    long interval = Math.max(1, Math.round(1e9 / rate));
    long start = System.nanoTime() + 1_000_000;
    long end = start + warmup.toNanos() + measure.toNanos();
    long measureFrom = start + warmup.toNanos();
    AtomicLong ticket = new AtomicLong();
    AtomicInteger outstanding = new AtomicInteger();
    List<Thread> callers = new ArrayList<>();
    Runnable sync = () -> {
      while (true) {
        long due = start + ticket.getAndIncrement() * interval;
        if (due >= end) {
          return;
        }
        parkUntil(due);
        try {
          Object v = blocking.call();
          tally.success(System.nanoTime() - due, v);
        } catch (Exception | Error e) {
          tally.failure(e);
        }
      }
    };
    Runnable sender = () -> {
      for (long i = 0; ; i++) {
        long due = start + i * interval;
        if (due >= end) {
          return;
        }
        parkUntil(due);
        outstanding.incrementAndGet();
        CompletableFuture<?> f;
        try {
          f = async.get();
        } catch (RuntimeException e) {
          f = CompletableFuture.failedFuture(e);
        }
        f.whenComplete((v, e) -> {
          if (e == null) {
            tally.success(System.nanoTime() - due, null);
          } else {
            tally.failure(e);
          }
          outstanding.decrementAndGet();
        });
      }
    };
    int n = threads > 0 ? threads : 1;
    for (int i = 0; i < n; i++) {
      Thread t = new Thread(threads > 0 ? sync : sender, "seed-open-loop-" + i);
      t.setDaemon(true);
      callers.add(t);
      t.start();
    }
    parkUntil(measureFrom);
    tally.begin();
    parkUntil(end);
    for (Thread t : callers) {
      t.join(DRAIN.toMillis());
    }
    long drainUntil = System.nanoTime() + DRAIN.toNanos();
    while (outstanding.get() > 0 && System.nanoTime() < drainUntil) {
      LockSupport.parkNanos(1_000_000);
    }
    tally.endAt(end);
  }

  /** Waits out the warm-up, then measures for {@code measure}. */
  private static void window(Tally tally, Duration warmup, Duration measure) {
    parkUntil(System.nanoTime() + warmup.toNanos());
    tally.begin();
    parkUntil(System.nanoTime() + measure.toNanos());
    tally.end();
  }

  static void parkUntil(long nanoTime) {
    long left;
    while ((left = nanoTime - System.nanoTime()) > 0) {
      LockSupport.parkNanos(left);
    }
  }
}
