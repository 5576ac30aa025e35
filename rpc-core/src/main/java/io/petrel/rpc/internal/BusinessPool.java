package io.petrel.rpc.internal;

import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.internal.PlatformDependent;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiConsumer;
import org.jspecify.annotations.Nullable;

/**
 * The built-in business executor: at most {@code threads} named threads (started when first needed, ended after
 * a minute without work) and room for {@code queueSize} calls waiting for one. A call that fits neither is
 * rejected at once (the server answers RESOURCE_EXHAUSTED), never parked.
 *
 * <p>Why not a {@code ThreadPoolExecutor}: on its {@code ArrayBlockingQueue} every call took the queue's one
 * lock twice (the event loop to offer, a worker to take), every offer woke a parked worker, and the workers handed
 * the lock to one another; a profile of the server at 16 callers had its business threads parked in a third of
 * the samples and waking one another in a fifth. Here the queue is lock-free (a bounded MPMC array), and wake-ups
 * are rationed:
 *
 * <ul>
 *   <li>a worker that ends a call takes the next one from the queue at once, and when the queue is empty it
 *       looks again for a few microseconds (it is then "searching") before it parks;
 *   <li>a new call wakes a parked worker (or starts a thread) only if no worker is searching: a burst of calls
 *       read in one batch wakes one worker, not one per call;
 *   <li>a woken worker that finds a call while more wait, and no other worker searches, wakes the next one: the
 *       wake-ups of a burst are made by the workers, one after the other, not by the event loop.
 * </ul>
 *
 * <p>The one invariant that keeps a call from waiting while a worker sleeps: a searching worker, before it parks,
 * stops counting itself as searching and then looks at the queue again; a caller of {@link #execute} queues its
 * call and then reads the count. Whichever comes second sees the other.
 */
public final class BusinessPool implements Executor {
  /** How long a thread without work lives. */
  static final long KEEP_ALIVE_NANOS = TimeUnit.SECONDS.toNanos(60);
  /**
   * Polls of an empty queue (each after a spin-wait hint, a few microseconds in all) before a worker parks: long
   * enough to take the next call of a burst without a park and a wake-up, short enough not to take a core from
   * the event loops when there is nothing to do.
   */
  static final int SPINS = 64;
  /** Above this many places the queue is a linked one (no array of that size allocated up front). */
  private static final int MAX_ARRAY_QUEUE = 1 << 16;

  /** {@link #ctl}: no new calls (shutdown). */
  private static final int SHUTDOWN = 1 << 30;
  /** {@link #ctl}: queued calls were taken away, running ones interrupted (shutdownNow). */
  private static final int STOP = 1 << 29;
  private static final int COUNT_MASK = STOP - 1;

  // Worker states.
  private static final int RUNNING = 0;
  private static final int IDLE = 1;
  private static final int SIGNALLED = 2;
  private static final int EXITED = 3;

  private final int threads;
  private final int queueSize;
  /** Calls admitted and not yet ended (queued or running), and the state bits. */
  private final AtomicInteger ctl = new AtomicInteger();
  /** threads + queueSize: calls admitted at most. */
  private final int limit;
  private final Queue<Runnable> queue;
  /** Workers that look for a call and will find one that is queued now, without a wake-up. */
  private final AtomicInteger searching = new AtomicInteger();
  private final AtomicReferenceArray<@Nullable Worker> slots;
  private final AtomicInteger live = new AtomicInteger();
  private final AtomicInteger active = new AtomicInteger();
  private final LongAdder completed = new LongAdder();
  private final ThreadFactory threadFactory;
  /** Told of an error that escaped a call (see ServerDispatcher.fatal); set by the server. */
  private volatile BiConsumer<String, Throwable> onError = (where, t) -> {};

  public BusinessPool(String name, int threads, int queueSize) {
    if (threads <= 0) {
      throw new IllegalArgumentException("threads must be > 0: " + threads);
    }
    if (queueSize < 0) {
      throw new IllegalArgumentException("queueSize must be >= 0: " + queueSize);
    }
    this.threads = threads;
    this.queueSize = queueSize;
    this.limit = (int) Math.min((long) threads + queueSize, COUNT_MASK);
    this.queue = limit <= MAX_ARRAY_QUEUE ? PlatformDependent.newFixedMpmcQueue(Math.max(2, limit))
        : new ConcurrentLinkedQueue<>();
    this.slots = new AtomicReferenceArray<>(threads);
    this.threadFactory = new DefaultThreadFactory(name + "-business", false);
  }

  /** Where an error that escapes a call goes: the server's fatal-error handling. */
  public void onError(BiConsumer<String, Throwable> handler) {
    this.onError = handler;
  }

  /**
   * Runs {@code task} on a business thread, or throws {@link RejectedExecutionException} at once when the pool's
   * threads and queue are all taken, or it is shut down.
   */
  @Override
  public void execute(Runnable task) {
    int c;
    do {
      c = ctl.get();
      if ((c & SHUTDOWN) != 0) {
        throw new RejectedExecutionException("the business pool is shut down");
      }
      if ((c & COUNT_MASK) >= limit) {
        throw new RejectedExecutionException("the business pool is full");
      }
    } while (!ctl.compareAndSet(c, c + 1));
    if (!queue.offer(task)) { // cannot happen: the array has room for every call admitted
      ended();
      throw new RejectedExecutionException("the business pool's queue is full");
    }
    signalWork();
  }

  /**
   * Makes sure a worker will look at the queue: none if one is searching already, else a parked one is woken, or
   * a thread started.
   */
  private void signalWork() {
    if (searching.get() > 0) {
      return;
    }
    for (int i = 0; i < threads; i++) { // the lowest first: the same few threads stay warm, the others time out
      Worker w = slots.get(i);
      if (w != null && w.state.get() == IDLE && w.state.compareAndSet(IDLE, SIGNALLED)) {
        searching.incrementAndGet();
        LockSupport.unpark(w.thread);
        return;
      }
    }
    if ((ctl.get() & STOP) != 0) {
      return;
    }
    for (int i = 0; i < threads; i++) {
      if (slots.get(i) == null) {
        Worker w = new Worker(i);
        if (slots.compareAndSet(i, null, w)) {
          searching.incrementAndGet();
          live.incrementAndGet();
          try {
            w.thread.start();
          } catch (Throwable t) {
            live.decrementAndGet();
            searching.decrementAndGet();
            slots.compareAndSet(i, w, null);
            throw t;
          }
          return;
        }
      }
    }
    // Every thread runs a call: each looks at the queue when its call ends.
  }

  /** A call admitted has ended (run, or taken back): frees its place, and lets the workers go after a shutdown. */
  private void ended() {
    int c = ctl.decrementAndGet();
    if ((c & SHUTDOWN) != 0 && (c & COUNT_MASK) == 0) {
      wakeAll();
    }
  }

  private void wakeAll() {
    for (int i = 0; i < threads; i++) {
      Worker w = slots.get(i);
      if (w != null) {
        LockSupport.unpark(w.thread);
      }
    }
  }

  /** Nothing more will be admitted, and nothing is left to run: the workers end. */
  private boolean finished() {
    int c = ctl.get();
    return (c & SHUTDOWN) != 0 && (c & COUNT_MASK) == 0;
  }

  /** No new calls; the calls admitted still run, then the threads end. */
  public void shutdown() {
    ctl.getAndUpdate(c -> c | SHUTDOWN);
    wakeAll();
  }

  /**
   * No new calls; the calls still queued are taken away and returned (they never run), the running ones are
   * interrupted, and the threads end.
   */
  public List<Runnable> shutdownNow() {
    ctl.getAndUpdate(c -> c | SHUTDOWN | STOP);
    List<Runnable> never = new ArrayList<>();
    Runnable r;
    while ((r = queue.poll()) != null) {
      never.add(r);
      ended();
    }
    for (int i = 0; i < threads; i++) {
      Worker w = slots.get(i);
      if (w != null) {
        if (w.inCall) {
          w.thread.interrupt();
        }
        LockSupport.unpark(w.thread);
      }
    }
    return never;
  }

  /** True once {@link #shutdown} or {@link #shutdownNow} was called. */
  public boolean isShutdown() {
    return (ctl.get() & SHUTDOWN) != 0;
  }

  /** True once shut down with no thread left. */
  public boolean isTerminated() {
    return finished() && live.get() == 0;
  }

  /** The most threads (the {@code businessThreads} option). */
  public int maxThreads() {
    return threads;
  }

  /** Threads alive now (they start when needed and end after a minute without work). */
  public int poolSize() {
    return live.get();
  }

  /** Threads running a call now. */
  public int activeCount() {
    return active.get();
  }

  /** Calls waiting for a thread now. */
  public int queuedCount() {
    return queue.size();
  }

  /** Queue places free now. */
  public int queueRemaining() {
    return Math.max(0, queueSize - queue.size());
  }

  /** Calls run to their end over the pool's life. */
  public long completedCount() {
    return completed.sum();
  }

  /** What to tell a caller whose call did not fit. */
  public String fullMessage() {
    return "server business pool is full: " + threads + " threads busy and " + Math.min(queueSize, queue.size())
        + " of " + queueSize + " queue places taken (raise RpcServer.builder().businessThreads / businessQueueSize,"
        + " make handlers faster, or add servers)";
  }

  @Override
  public String toString() {
    return "BusinessPool{threads=" + live.get() + "/" + threads + ", active=" + active.get() + ", queued="
        + queue.size() + "/" + queueSize + ", searching=" + searching.get() + ", shutdown=" + isShutdown() + "}";
  }

  private final class Worker implements Runnable {
    final int slot;
    final Thread thread;
    final AtomicInteger state = new AtomicInteger(RUNNING);
    /** Running a call (read by shutdownNow, to interrupt only calls). */
    volatile boolean inCall;

    Worker(int slot) {
      this.slot = slot;
      this.thread = threadFactory.newThread(this);
    }

    @Override
    public void run() {
      try {
        work();
      } finally {
        slots.compareAndSet(slot, this, null);
        live.decrementAndGet();
        // A call queued while this thread was ending may have found its slot still taken and started no thread.
        if (!queue.isEmpty() && (ctl.get() & STOP) == 0) {
          signalWork();
        }
      }
    }

    /** Started or woken, a worker counts as searching (whoever started or woke it counted it). */
    private void work() {
      boolean isSearching = true;
      for (;;) {
        Runnable task = queue.poll();
        if (task == null) {
          if (!isSearching) {
            isSearching = true;
            searching.incrementAndGet();
          }
          for (int i = 0; i < SPINS && (task = queue.poll()) == null; i++) {
            Thread.onSpinWait();
          }
        }
        if (task != null) {
          if (isSearching) {
            isSearching = false;
            // The last searcher found a call: if more wait, the next worker is woken by this one.
            if (searching.decrementAndGet() == 0 && !queue.isEmpty()) {
              signalWork();
            }
          }
          runCall(task);
          continue;
        }
        // Nothing to do: park. State first, then stop searching, then look again (see the class comment).
        state.set(IDLE);
        isSearching = false;
        searching.decrementAndGet();
        if (!queue.isEmpty() && state.compareAndSet(IDLE, RUNNING)) {
          isSearching = true;
          searching.incrementAndGet();
          continue;
        }
        if (!awaitSignal()) {
          return;
        }
        isSearching = true; // counted by whoever signalled
      }
    }

    /** Parks until signalled (true), or until the pool is finished or a minute passes idle (false: the thread ends). */
    private boolean awaitSignal() {
      long deadline = System.nanoTime() + KEEP_ALIVE_NANOS;
      for (;;) {
        if (state.get() != IDLE) {
          state.set(RUNNING);
          return true;
        }
        Thread.interrupted(); // an interrupt meant for a call that has ended; parking must not return at once
        long left = deadline - System.nanoTime();
        if ((finished() || left <= 0) && state.compareAndSet(IDLE, EXITED)) {
          return false;
        }
        LockSupport.parkNanos(this, left);
      }
    }

    private void runCall(Runnable task) {
      active.incrementAndGet();
      inCall = true;
      try {
        task.run();
      } catch (Throwable t) {
        // A call catches what its handler throws: this is the server's own code failing (out of memory while
        // sending an answer, say). The thread goes on; an OutOfMemoryError stops the server.
        if (t instanceof Error) {
          try {
            onError.accept("business thread " + Thread.currentThread().getName(), t);
          } catch (Throwable ignored) {
            // out of memory again, most likely: the server's stop is under way or cannot be helped from here
          }
        }
      } finally {
        inCall = false;
        if ((ctl.get() & STOP) == 0) {
          Thread.interrupted(); // an interrupt from the handler's own code does not reach the next call
        }
        active.decrementAndGet();
        completed.increment();
        ended();
      }
    }
  }
}
