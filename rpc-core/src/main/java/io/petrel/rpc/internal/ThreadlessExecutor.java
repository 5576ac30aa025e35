package io.petrel.rpc.internal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The executor of one blocking call: its tasks run on the thread that waits for the call. The transport
 * hands it the decoding of the response and the completion of the future, so the connection's event loop
 * (which serves every call on the connection) only copies the bytes, and the decoding is done by the caller,
 * which would otherwise sit parked. Once the caller has stopped waiting, tasks run at once on the thread
 * that submits them.
 */
public final class ThreadlessExecutor implements Executor {
  private static final Logger log = LoggerFactory.getLogger(ThreadlessExecutor.class);

  private final Thread waiter = Thread.currentThread();
  private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  private volatile boolean closed;
  /** Set when a task is posted through a {@link WakeChain}: this caller then takes part in the waking. */
  private volatile @Nullable WakeChain chain;

  @Override
  public void execute(Runnable task) {
    if (closed) {
      runSafely(task);
      return;
    }
    tasks.add(task);
    if (closed) {
      drain(); // the waiter left between the check and the add: nobody else will run it
    } else {
      LockSupport.unpark(waiter);
    }
  }

  /**
   * Adds a task without waking the waiter ({@link WakeChain#post}). Returns false if the waiter has already
   * stopped waiting, in which case the task has run on this thread.
   */
  boolean enqueue(Runnable task, WakeChain chain) {
    if (closed) {
      runSafely(task);
      return false;
    }
    this.chain = chain;
    tasks.add(task);
    if (closed) {
      drain();
      return false;
    }
    return true;
  }

  /** Wakes the waiter; false if it has stopped waiting (and needs no waking). */
  boolean wake() {
    if (closed) {
      return false;
    }
    LockSupport.unpark(waiter);
    return true;
  }

  /**
   * Runs this executor's tasks on the calling thread (which must be the one that created it) until
   * {@code future} is done, then stops waiting: tasks submitted later run on the thread that submits them.
   *
   * @throws InterruptedException if the thread is interrupted before the future is done
   */
  public void awaitCompletion(CompletableFuture<?> future) throws InterruptedException {
    awaitCompletion(future, Long.MAX_VALUE);
  }

  /**
   * As {@link #awaitCompletion(CompletableFuture)}, but stops waiting at {@code untilNanoTime} (a
   * {@link System#nanoTime()} reading; {@code Long.MAX_VALUE} for no limit). Returns whether the future is done.
   */
  public boolean awaitCompletion(CompletableFuture<?> future, long untilNanoTime) throws InterruptedException {
    if (Thread.currentThread() != waiter) {
      throw new IllegalStateException("awaitCompletion on " + Thread.currentThread() + ", created on " + waiter);
    }
    // Wakes the waiter if the future is completed by something other than a task of this executor (an
    // interceptor answering from its own thread, a transport that ignores the executor).
    future.whenComplete((r, t) -> {
      if (Thread.currentThread() != waiter) {
        LockSupport.unpark(waiter);
      }
    });
    try {
      while (!future.isDone()) {
        Runnable task = tasks.poll();
        if (task != null) {
          runSafely(task);
          continue;
        }
        if (untilNanoTime == Long.MAX_VALUE) {
          LockSupport.park(this);
        } else {
          long left = untilNanoTime - System.nanoTime();
          if (left <= 0) {
            return false;
          }
          LockSupport.parkNanos(this, left);
        }
        WakeChain c = chain;
        if (c != null) {
          c.propagate(); // first wake the next callers, then do this one's work
        }
        if (Thread.interrupted()) {
          throw new InterruptedException();
        }
      }
      return true;
    } finally {
      closed = true;
      WakeChain c = chain;
      if (c != null) {
        // Taken from the chain after this thread last looked? Then the waking it owes is done here.
        c.propagate();
      }
      drain();
    }
  }

  private void drain() {
    Runnable task;
    while ((task = tasks.poll()) != null) {
      runSafely(task);
    }
  }

  private static void runSafely(Runnable task) {
    try {
      task.run();
    } catch (RuntimeException | Error e) {
      log.warn("a callback of a blocking call threw", e);
    }
  }
}
