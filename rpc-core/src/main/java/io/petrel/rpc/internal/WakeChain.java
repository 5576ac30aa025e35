package io.petrel.rpc.internal;

import io.petrel.rpc.spi.WakeBatch;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Wakes blocking callers whose responses are ready, spreading the wake-ups over the callers themselves.
 *
 * <p>The core makes one per connection for its transport ({@code ClientTransportContext.newWakeBatch()}, seen
 * there as a {@link WakeBatch}): the transport's thread flushes it at the end of each read batch.
 *
 * <p>Waking a parked thread is a system call (futex wake, often an inter-processor interrupt), and on a busy
 * connection it was most of what the client's event loop did per call: that one thread serves every call of
 * the connection, so each wake-up it makes delays every other response. Here the event loop posts each
 * decoded-later response to its caller's {@link ThreadlessExecutor} without waking it, and wakes a few callers
 * per read batch ({@link #kick}); every caller that wakes wakes up to {@value #FAN_OUT} more
 * ({@link #propagate}) before it does its own work, so the wake-ups of a large batch run on the callers'
 * threads, in parallel, in a tree of depth log2(batch). ForkJoinPool propagates its signals among workers the same way.
 *
 * <p>No caller is left asleep: every executor taken from the queue is either woken, and will itself propagate
 * after the take, or found closed (its caller has left), in which case the taker goes on to the next one.
 */
public final class WakeChain implements WakeBatch {
  /** Callers a woken caller wakes. */
  static final int FAN_OUT = 2;
  /**
   * Callers the event loop wakes itself at the end of a read batch: with a few callers (small batches) every
   * one is woken at once, as without a chain, and a chain (whose every link waits to be scheduled) only
   * forms under load, where the event loop's time is what limits throughput. Sixteen: a batch of up to 16
   * responses (16 blocking callers on a connection, the benchmark's usual load) costs no hop through another
   * caller, which each link of a chain does (a caller scheduled only to wake others); with 4, 16 callers cost
   * the client 0.5 us more CPU per call, and 128 callers gained nothing from it (docs/benchmarks.md, eighth round).
   */
  static final int KICK = 16;

  private final ConcurrentLinkedQueue<ThreadlessExecutor> ready = new ConcurrentLinkedQueue<>();

  /**
   * Gives {@code task} to {@code executor} without waking its caller; a later {@link #kick} (or a caller that
   * wakes) does. If the caller has already stopped waiting, the task runs at once on this thread.
   */
  public void post(ThreadlessExecutor executor, Runnable task) {
    if (executor.enqueue(task, this)) {
      ready.add(executor);
    }
  }

  /**
   * Wakes up to {@value #KICK} callers with posted tasks, which go on waking the others. Call after a batch
   * of posts.
   */
  public void kick() {
    wake(KICK);
  }

  /** The transport's end of a read batch: {@link #kick}. */
  @Override
  public void flush() {
    kick();
  }

  /** True if no posted caller awaits its wake-up. */
  @Override
  public boolean isEmpty() {
    return ready.isEmpty();
  }

  /** A woken caller's share of the waking. */
  void propagate() {
    wake(FAN_OUT);
  }

  private void wake(int n) {
    int woken = 0;
    ThreadlessExecutor e;
    while (woken < n && (e = ready.poll()) != null) {
      if (e.wake()) {
        woken++;
      }
    }
  }

  /** Callers posted to and not yet woken, for tests. */
  int waiting() {
    return ready.size();
  }
}
