package io.petrel.rpc.internal;

import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.internal.PlatformDependent;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
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
 *       looks again for a little while ({@link #SPINS} polls; it is then "searching") before it parks. Optionally
 *       (off by default, see {@link #MAX_SPIN_NANOS}) one worker at a time looks longer, sized from how soon calls
 *       have lately come;
 *   <li>a new call wakes a parked worker (or starts a thread) only if no worker is searching: a burst of calls
 *       read in one batch wakes one worker, not one per call;
 *   <li>a woken worker that finds a call while more wait, and no other worker searches, wakes the next one: the
 *       wake-ups of a burst are made by the workers, one after the other, not by the event loop.
 * </ul>
 *
 * <p>The one invariant that keeps a call from waiting while a worker sleeps: a searching worker, before it parks,
 * stops counting itself as searching and then looks at the queue again; a caller of {@link #execute} queues its
 * call and then reads the count. Whichever comes second sees the other.
 *
 * <p>Parked workers are found in a bitmap (one bit per thread, the lowest first: the same few threads stay warm,
 * the others time out), as are the places of threads not started: waking one costs a few reads however many
 * threads the pool has, not a walk over them.
 */
public final class BusinessPool implements Executor {
  /**
   * A worker that takes a call with more queued behind it wakes the next worker unless it would itself come to
   * the last of them within this long, going by how long its recent calls ran (a moving average of eight): queued
   * calls x that average below this, and it leaves them to itself. Slower calls, or more of them, wake the next
   * worker at once, as a burst of blocking calls (or a long burst of quick ones on a machine with cores to spare)
   * needs.
   */
  static final long FAST_CALL_NANOS = TimeUnit.MICROSECONDS.toNanos(50);
  /**
   * How often the watch looks at the queue while calls are admitted: a call that stays at the head of the queue
   * for a whole period while no worker searches (the worker expected to take it is held up by a call that turned
   * out slow) makes the pool wake workers for queued calls at once again, until the queue is empty.
   */
  static final long WATCH_NANOS = TimeUnit.MILLISECONDS.toNanos(2);
  /** Looks in a row that found no call admitted, after which the watch parks until one is. */
  private static final int WATCH_IDLE_TICKS = 8;
  /** How long a thread without work lives. */
  static final long KEEP_ALIVE_NANOS = TimeUnit.SECONDS.toNanos(60);
  /**
   * Polls of an empty queue (each after a spin-wait hint, a few microseconds in all) that every searching worker
   * makes before it parks: enough to take the next call of a burst without a park and a wake-up.
   */
  static final int SPINS = 64;
  /** The system property that sets {@link #MAX_SPIN_NANOS}, in microseconds (0: no long search). */
  static final String MAX_SPIN_PROPERTY = "io.petrel.businessPool.maxSpinMicros";
  /**
   * The longest the one leading searcher looks for its next call before it parks (system property
   * {@value #MAX_SPIN_PROPERTY}, in microseconds; default 0: off, no worker looks past its {@link #SPINS} polls).
   * When set, the leader looks about twice as long as the next call has lately taken to come after it began to
   * look (a moving average of eight), yielding its core between polls, and not at all when that average is this
   * long or longer. Off by default because on a 2-core machine shared by client and server 50 us made the round
   * trip longer, not shorter, and cost more server CPU per call: the core the leader holds is the one the other
   * threads of the call wait for (figures in docs/threading.md).
   */
  static final long MAX_SPIN_NANOS =
      TimeUnit.MICROSECONDS.toNanos(Math.max(0, Long.getLong(MAX_SPIN_PROPERTY, 0)));
  /** This pool's {@link #FAST_CALL_NANOS}. */
  private final long fastCallNanos;
  /** This pool's {@link #MAX_SPIN_NANOS}. */
  private final long maxSpinNanos;
  /** A search longer than this counts as this long in the average (so that it comes down within a few calls). */
  private static final long MAX_SEARCH_SAMPLE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
  /** Above this many places the queue is a linked one (no array of that size allocated up front). */
  private static final int MAX_ARRAY_QUEUE = 1 << 16;

  // ctl: calls admitted and not yet ended (queued or running) in the low 31 bits; the calls of execute() between
  // admission and their place in the queue in bits 32-51 (shutdownNow waits for them, so that every call
  // admitted before it is in the queue it takes back); the state bits on top.
  private static final long COUNT_MASK = (1L << 31) - 1;
  private static final long OFFERING_ONE = 1L << 32;
  private static final long OFFERING_MASK = ((1L << 20) - 1) << 32;
  /** {@link #ctl}: queued calls were taken away, running ones interrupted (shutdownNow). */
  private static final long STOP = 1L << 61;
  /** {@link #ctl}: no new calls (shutdown). */
  private static final long SHUTDOWN = 1L << 62;

  private static final VarHandle BITS = MethodHandles.arrayElementVarHandle(long[].class);

  private final int threads;
  private final int queueSize;
  /** Calls admitted and not yet ended, execute() calls under way, and the state bits (see above). */
  private final AtomicLong ctl = new AtomicLong();
  /** threads + queueSize: calls admitted at most. */
  private final int limit;
  private final Queue<Runnable> queue;
  /** Workers that look for a call and will find one that is queued now, without a wake-up. */
  private final AtomicInteger searching = new AtomicInteger();
  /** Workers in the long search (at most one). */
  private final AtomicInteger leading = new AtomicInteger();
  /**
   * How long the leading searcher's recent searches took until a call came, in nanoseconds (a moving average of
   * eight; updated without a lock by whichever worker leads: a lost update only delays the average).
   */
  private volatile long searchNanos = MAX_SEARCH_SAMPLE_NANOS;
  private final AtomicReferenceArray<@Nullable Worker> slots;
  /** Bit i: the worker in slot i is parked (or parking) and may be woken by whoever clears the bit. */
  private final long[] idle;
  /** Bit i: slot i has no thread; whoever clears the bit starts one there. */
  private final long[] free;
  private final AtomicInteger live = new AtomicInteger();
  /** See {@link #terminationFuture}. */
  private final CompletableFuture<Void> terminated = new CompletableFuture<>();
  private final AtomicInteger active = new AtomicInteger();
  private final LongAdder completed = new LongAdder();
  private final ThreadFactory threadFactory;
  private final ThreadFactory watchFactory;
  /**
   * Set by the watch when a queued call waited a whole period with no worker searching; cleared when the queue is
   * seen empty. While set, every worker that takes a call with more queued wakes the next one, whatever its calls
   * cost.
   */
  private volatile boolean stalled;
  /** The watch thread could not be started: no thread leaves queued calls to itself. */
  private volatile boolean watchFailed;
  /** The watch thread (started with the first worker), parked without a timeout while no call is admitted. */
  private volatile @Nullable Thread watch;
  /** The watch is parked until a call is admitted; whoever clears it unparks the watch. */
  private final AtomicInteger watchIdle = new AtomicInteger();
  /** Times the watch found a queued call held up and woke a worker for it (written by the watch only). */
  private final AtomicLong watchWakeups = new AtomicLong();
  /**
   * Frees a call's place: run once per call, by the call just before it hands its answer to the transport (see
   * {@link CoreServerCall#beforeAnswer}), or by the worker when the call's run ends, whichever comes first. So a
   * client that calls again as soon as it has an answer never finds the place of the call before still taken.
   */
  private final Runnable release = this::ended;
  /** Told of an error that escaped a call (see ServerDispatcher.fatal); set by the server. */
  private volatile BiConsumer<String, Throwable> onError = (where, t) -> {};

  public BusinessPool(String name, int threads, int queueSize) {
    this(name, threads, queueSize, MAX_SPIN_NANOS);
  }

  BusinessPool(String name, int threads, int queueSize, long maxSpinNanos) {
    this(name, threads, queueSize, maxSpinNanos, FAST_CALL_NANOS);
  }

  /** With the leader's longest search given (for tests; the server's pools take {@link #MAX_SPIN_NANOS}). */
  BusinessPool(String name, int threads, int queueSize, long maxSpinNanos, long fastCallNanos) {
    if (threads <= 0) {
      throw new IllegalArgumentException("threads must be > 0: " + threads);
    }
    if (queueSize < 0) {
      throw new IllegalArgumentException("queueSize must be >= 0: " + queueSize);
    }
    this.threads = threads;
    this.queueSize = queueSize;
    this.maxSpinNanos = Math.max(0, maxSpinNanos);
    this.fastCallNanos = fastCallNanos;
    this.limit = (int) Math.min((long) threads + queueSize, COUNT_MASK);
    this.queue = limit <= MAX_ARRAY_QUEUE ? PlatformDependent.newFixedMpmcQueue(Math.max(2, limit))
        : new ConcurrentLinkedQueue<>();
    this.slots = new AtomicReferenceArray<>(threads);
    int words = (threads + 63) >>> 6;
    this.idle = new long[words];
    this.free = new long[words];
    for (int i = 0; i < threads; i++) {
      free[i >>> 6] |= 1L << i;
    }
    VarHandle.releaseFence(); // the bitmaps are read by other threads with volatile reads only
    this.threadFactory = new DefaultThreadFactory(name + "-business", false);
    this.watchFactory = new DefaultThreadFactory(name + "-pool-watch", true);
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
    long c;
    do {
      c = ctl.get();
      if ((c & SHUTDOWN) != 0) {
        throw new RejectedExecutionException("the business pool is shut down");
      }
      if ((c & COUNT_MASK) >= limit) {
        throw new RejectedExecutionException("the business pool is full");
      }
    } while (!ctl.compareAndSet(c, c + 1 + OFFERING_ONE));
    if (task instanceof CoreServerCall call) {
      call.beforeAnswer(release);
    }
    boolean queued = queue.offer(task); // false cannot happen: the array has room for every call admitted
    ctl.getAndAdd(-OFFERING_ONE); // from here on a shutdownNow takes this call back if no worker has
    if (!queued) {
      freePlace(task);
      throw new RejectedExecutionException("the business pool's queue is full");
    }
    signalWork();
    if (watchIdle.get() != 0 && watchIdle.compareAndSet(1, 0)) {
      Thread w = watch;
      if (w != null) {
        LockSupport.unpark(w);
      }
    }
  }

  /**
   * Makes sure a worker will look at the queue: none if one is searching already, else a parked one is woken, or
   * a thread started.
   */
  private void signalWork() {
    if (searching.get() > 0) {
      return;
    }
    int slot = claimLowest(idle);
    if (slot >= 0) {
      Worker w = slots.get(slot); // set before the thread started; it cannot end while its bit is set
      searching.incrementAndGet();
      if (w != null) {
        w.signal();
      }
      return;
    }
    if ((ctl.get() & STOP) != 0) {
      return;
    }
    slot = claimLowest(free);
    if (slot < 0) {
      return; // every thread runs a call: each looks at the queue when its call ends
    }
    if (watch == null && !watchFailed) {
      try {
        startWatch();
      } catch (Throwable t) {
        // No thread for the watch (out of threads or memory): the pool works without it, every thread that
        // takes a call with more queued wakes the next, as before the watch existed; no call is lost.
        watchFailed = true;
      }
    }
    Worker w = new Worker(slot);
    slots.set(slot, w);
    searching.incrementAndGet();
    live.incrementAndGet();
    try {
      w.thread.start();
    } catch (Throwable t) {
      live.decrementAndGet();
      searching.decrementAndGet();
      slots.set(slot, null);
      setBit(free, slot);
      checkTerminated();
      throw t;
    }
  }

  private synchronized void startWatch() {
    if (watch != null) {
      return;
    }
    Thread t = watchFactory.newThread(this::watchQueue);
    t.start();
    watch = t;
  }

  /**
   * The watch: while calls are admitted, every {@link #WATCH_NANOS} it looks at the head of the queue; the same
   * call there twice, with no worker searching, means the workers that skipped waking others for it are held up
   * (see {@link #FAST_CALL_NANOS}): it marks the pool {@link #stalled} and wakes a worker, which wakes the next
   * for the rest of the queue. With no call admitted it parks until one is (an idle pool uses no CPU); it ends
   * when the pool is finished.
   */
  private void watchQueue() {
    Object lastHead = null;
    int quietTicks = 0;
    while (!finished()) {
      if ((ctl.get() & COUNT_MASK) != 0) {
        quietTicks = 0;
      } else if (++quietTicks >= WATCH_IDLE_TICKS) {
        // No call admitted at the last few looks: park until one is (not at every gap between calls, which
        // under load would cost a wake-up of this thread per gap).
        watchIdle.set(1);
        if ((ctl.get() & COUNT_MASK) == 0 && !finished()) { // a call admitted meanwhile cleared watchIdle or
          LockSupport.park(this);                             // finds it set and unparks this thread
        }
        watchIdle.set(0);
        quietTicks = 0;
        lastHead = null;
        continue;
      }
      LockSupport.parkNanos(this, WATCH_NANOS);
      Object head = queue.peek();
      if (head == null) {
        if (stalled) {
          stalled = false;
        }
      } else if (head == lastHead && searching.get() == 0 && (ctl.get() & STOP) == 0) {
        stalled = true;
        watchWakeups.incrementAndGet();
        signalWork();
      }
      lastHead = head;
    }
  }

  /** Clears the lowest set bit of {@code bits} and returns its index, or -1 if none is set. */
  private static int claimLowest(long[] bits) {
    for (int i = 0; i < bits.length; i++) {
      long word = (long) BITS.getVolatile(bits, i);
      while (word != 0) {
        long bit = Long.lowestOneBit(word);
        long before = (long) BITS.getAndBitwiseAnd(bits, i, ~bit);
        if ((before & bit) != 0) {
          return (i << 6) + Long.numberOfTrailingZeros(bit);
        }
        word = before & ~bit; // another thread took that one
      }
    }
    return -1;
  }

  /** Sets bit {@code index}; true if it was clear. */
  private static boolean setBit(long[] bits, int index) {
    long bit = 1L << index;
    return ((long) BITS.getAndBitwiseOr(bits, index >>> 6, bit) & bit) == 0;
  }

  /** Clears bit {@code index}; true if it was set (the caller took it). */
  private static boolean clearBit(long[] bits, int index) {
    long bit = 1L << index;
    return ((long) BITS.getAndBitwiseAnd(bits, index >>> 6, ~bit) & bit) != 0;
  }

  /** Frees the place of a call admitted, unless the call freed it before its answer (its release then never runs). */
  private void freePlace(Runnable task) {
    if (CoreServerCall.stillHoldsPlace(task)) {
      ended();
    }
  }

  /** A call admitted has ended (run, or taken back): frees its place, and lets the workers go after a shutdown. */
  private void ended() {
    long c = ctl.decrementAndGet();
    if ((c & SHUTDOWN) != 0 && (c & COUNT_MASK) == 0) {
      wakeAll();
    }
  }

  private void wakeAll() {
    Thread t = watch;
    if (t != null) {
      LockSupport.unpark(t);
    }
    for (int i = 0; i < threads; i++) {
      Worker w = slots.get(i);
      if (w != null) {
        LockSupport.unpark(w.thread);
      }
    }
  }

  /** Nothing more will be admitted, and nothing is left to run: the workers end. */
  private boolean finished() {
    long c = ctl.get();
    return (c & SHUTDOWN) != 0 && (c & COUNT_MASK) == 0;
  }

  /** No new calls; the calls admitted still run, then the threads end. */
  public void shutdown() {
    ctl.getAndUpdate(c -> c | SHUTDOWN);
    wakeAll();
    checkTerminated();
  }

  /**
   * Completes once the pool is shut down with no thread left ({@link #isTerminated}): every handler it ran has
   * returned. Completed by the last thread to end, or by {@link #shutdown} / {@link #shutdownNow} if none is left.
   */
  public CompletableFuture<Void> terminationFuture() {
    return terminated;
  }

  private void checkTerminated() {
    if (isTerminated()) {
      terminated.complete(null);
    }
  }

  /**
   * No new calls; the calls still queued are taken away and returned (they never run), the running ones are
   * interrupted, and the threads end. A call admitted by an {@link #execute} that runs at the same time is
   * either returned or, if a worker took it first, run with its thread interrupted.
   */
  public List<Runnable> shutdownNow() {
    ctl.getAndUpdate(c -> c | SHUTDOWN | STOP);
    // A call admitted just before is on its way into the queue: wait for it (a few instructions away), so that
    // the queue is taken whole below and nothing lands in it afterwards.
    for (int i = 0; (ctl.get() & OFFERING_MASK) != 0; i++) {
      if (i < 64) {
        Thread.onSpinWait();
      } else {
        Thread.yield();
      }
    }
    List<Runnable> never = new ArrayList<>();
    Runnable r;
    while ((r = queue.poll()) != null) {
      never.add(r);
      freePlace(r);
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
    checkTerminated();
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

  /** Calls running or queued now, but the one {@code t} runs if it is one of this pool's threads in a call. */
  public int callsExcept(Thread t) {
    int n = active.get() + queue.size();
    for (int i = 0; i < threads; i++) {
      Worker w = slots.get(i);
      if (w != null && w.thread == t && w.inCall) {
        return Math.max(0, n - 1);
      }
    }
    return n;
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

  /**
   * Times a queued call was held up behind a call that turned out slow, with no worker looking, until the watch
   * woke one for it (see {@link #FAST_CALL_NANOS}).
   */
  public long watchWakeups() {
    return watchWakeups.get();
  }

  /** The watch thread, or null before the first worker started (for tests). */
  @Nullable Thread watchThread() {
    return watch;
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
    /** Set by whoever cleared this worker's idle bit, before it unparks the thread. */
    volatile boolean signalled;
    /** When it was signalled: about when the call it is woken for came (System.nanoTime). */
    volatile long signalledAt;
    /** Running a call (read by shutdownNow, to interrupt only calls). */
    volatile boolean inCall;
    /**
     * How long this worker's recent calls ran (a moving average of eight, nanoseconds); starts slow, so that a new
     * worker wakes others as before until it has seen quick calls. Only this worker's thread touches it.
     */
    private long recentCallNanos = 2 * Math.min(fastCallNanos, Long.MAX_VALUE / 2);

    Worker(int slot) {
      this.slot = slot;
      this.thread = threadFactory.newThread(this);
    }

    void signal() {
      signalledAt = System.nanoTime();
      signalled = true;
      LockSupport.unpark(thread);
    }

    @Override
    public void run() {
      try {
        work();
      } finally {
        slots.set(slot, null);
        setBit(free, slot);
        live.decrementAndGet();
        try {
          // A call queued while this thread was ending may have found no idle thread and no free slot.
          if (!queue.isEmpty() && (ctl.get() & STOP) == 0) {
            signalWork();
          }
        } finally {
          checkTerminated();
        }
      }
    }

    /** Started or woken, a worker counts as searching (whoever started or woke it counted it). */
    private void work() {
      boolean isSearching = true;
      long searchStarted = System.nanoTime();
      for (;;) {
        Runnable task = queue.poll();
        if (task == null) {
          if (!isSearching) {
            isSearching = true;
            searching.incrementAndGet();
          }
          task = search(searchStarted);
        }
        if (task != null) {
          if (isSearching) {
            isSearching = false;
            // The last searcher found a call: if more wait, the next worker is woken by this one, unless this
            // worker's calls are quick enough to do the queued ones itself soon (the watch steps in if this call
            // turns out slow).
            int queued;
            if (searching.decrementAndGet() == 0 && (queued = queue.size()) > 0
                && (recentCallNanos >= fastCallNanos / queued || stalled || watchFailed)) {
              signalWork();
            }
          }
          parkedLeaderSince = 0;
          runCall(task);
          searchStarted = System.nanoTime();
          continue;
        }
        // Nothing to do: park. Parked first, then stop searching, then look again (see the class comment).
        if (stalled) {
          stalled = false; // the queue was empty: whatever held it up is over
        }
        signalled = false;
        setBit(idle, slot);
        isSearching = false;
        searching.decrementAndGet();
        if (!queue.isEmpty() && clearBit(idle, slot)) {
          isSearching = true;
          searching.incrementAndGet();
          continue;
        }
        if (!awaitSignal()) {
          return;
        }
        isSearching = true; // counted by whoever signalled
        searchStarted = System.nanoTime();
      }
    }

    /**
     * Looks for a call in an empty queue: {@link #SPINS} polls; then, if no other worker leads the search and
     * calls have lately come soon after the leader began to look, polls on for about twice that long (at most
     * {@link #maxSpinNanos} from {@code searchStarted}), giving its core to any other runnable thread between
     * polls. The leader's searches make the average, including the time it then spends parked until woken.
     */
    private @Nullable Runnable search(long searchStarted) {
      Runnable task;
      for (int i = 0; i < SPINS; i++) {
        if ((task = queue.poll()) != null) {
          return task;
        }
        Thread.onSpinWait();
      }
      if (maxSpinNanos == 0 || leading.get() != 0 || !leading.compareAndSet(0, 1)) {
        return null;
      }
      try {
        long average = searchNanos;
        if (average >= maxSpinNanos) {
          parkedLeaderSince = searchStarted; // calls come rarely: park now, and count the wait when woken
          return null;
        }
        long deadline = searchStarted + Math.min(2 * average, maxSpinNanos);
        for (int i = 1; ; i++) {
          if ((task = queue.poll()) != null) {
            searchNanos = average + (System.nanoTime() - searchStarted - average) / 8;
            return task;
          }
          if ((i & 15) != 0) {
            Thread.onSpinWait();
          } else if (System.nanoTime() - deadline >= 0) {
            parkedLeaderSince = searchStarted;
            return null;
          } else {
            Thread.yield();
          }
        }
      } finally {
        leading.set(0);
      }
    }

    /** When this worker, parking as the leading searcher, began to look; 0 if it did not lead. */
    private long parkedLeaderSince;

    /** Parks until signalled (true), or until the pool is finished or a minute passes idle (false: the thread ends). */
    private boolean awaitSignal() {
      long deadline = System.nanoTime() + KEEP_ALIVE_NANOS;
      for (;;) {
        if (signalled) {
          long since = parkedLeaderSince;
          if (since != 0) {
            parkedLeaderSince = 0;
            long average = searchNanos;
            // Until the call came, not until this thread ran again: the wake-up is not part of the gap.
            long waited = Math.min(signalledAt - since, MAX_SEARCH_SAMPLE_NANOS);
            searchNanos = average + (waited - average) / 8;
          }
          return true;
        }
        Thread.interrupted(); // an interrupt meant for a call that has ended; parking must not return at once
        long left = deadline - System.nanoTime();
        if ((finished() || left <= 0) && clearBit(idle, slot)) {
          return false; // nobody took this worker's bit, and nobody will: it ends
        }
        // Not ending, or a signaller took the bit and is about to unpark this thread.
        LockSupport.parkNanos(this, left > 0 ? left : TimeUnit.MILLISECONDS.toNanos(1));
      }
    }

    private void runCall(Runnable task) {
      active.incrementAndGet();
      inCall = true;
      if ((ctl.get() & STOP) != 0) {
        // Taken from the queue as shutdownNow took the rest, which may have looked at inCall before it was set.
        thread.interrupt();
      }
      long started = System.nanoTime();
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
        recentCallNanos += (Math.min(System.nanoTime() - started, WATCH_NANOS) - recentCallNanos) / 8;
        inCall = false;
        if ((ctl.get() & STOP) == 0) {
          Thread.interrupted(); // an interrupt from the handler's own code does not reach the next call
        }
        active.decrementAndGet();
        completed.increment();
        freePlace(task); // unless the call freed it already, before its answer
      }
    }
  }
}
