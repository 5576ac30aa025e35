package io.petrel.rpc.internal;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * The business executor of {@code RpcServer.builder().virtualThreads(maxConcurrentCalls)}: each call runs on a new
 * virtual thread (Java 21+), and at most {@code maxConcurrentCalls} run at once; a call over that is refused at once
 * (the server answers RESOURCE_EXHAUSTED), as with the built-in pool, instead of an unbounded number of threads.
 * The virtual thread factory is looked up once, here; a call costs a permit and a thread start.
 */
public final class VirtualThreadExecutor implements Executor {
  private static final @Nullable MethodHandle OF_VIRTUAL;
  private static final @Nullable MethodHandle NAME;
  private static final @Nullable MethodHandle FACTORY;
  private static final String UNAVAILABLE;

  static {
    MethodHandle ofVirtual = null;
    MethodHandle name = null;
    MethodHandle factory = null;
    String why = "";
    try {
      MethodHandles.Lookup lookup = MethodHandles.publicLookup();
      Class<?> builder = Class.forName("java.lang.Thread$Builder$OfVirtual");
      ofVirtual = lookup.findStatic(Thread.class, "ofVirtual", MethodType.methodType(builder));
      name = lookup.findVirtual(builder, "name", MethodType.methodType(builder, String.class, long.class));
      factory = lookup.findVirtual(builder, "factory", MethodType.methodType(ThreadFactory.class));
    } catch (ReflectiveOperationException e) {
      ofVirtual = null;
      why = "virtual threads need Java 21 or later; this JVM is Java " + Runtime.version();
    }
    OF_VIRTUAL = ofVirtual;
    NAME = name;
    FACTORY = factory;
    UNAVAILABLE = why;
  }

  private final String name;
  private final int maxConcurrentCalls;
  private final Semaphore permits;
  private final ThreadFactory threads;
  private final Set<Thread> running = ConcurrentHashMap.newKeySet();
  /** Threads started for calls and not ended yet (counted before they start, so none is missed). */
  private final AtomicInteger alive = new AtomicInteger();
  /** Set by {@link #interruptRunning}: a call's thread that starts after it interrupts itself. */
  private volatile boolean interruptAll;
  /** Set by {@link #whenIdle}: completed when the last thread ends (one server's executor: set once). */
  private volatile @Nullable CompletableFuture<Void> idle;
  private final AtomicLong completed = new AtomicLong();
  /**
   * Frees a call's place: run once per call, by the call just before it hands its answer to the transport (see
   * {@link CoreServerCall#beforeAnswer}), or when its run ends, whichever comes first.
   */
  private final Runnable release = this::callEnded;

  /**
   * @throws UnsupportedOperationException before Java 21, saying so
   */
  public VirtualThreadExecutor(String serverName, int maxConcurrentCalls) {
    checkAvailable();
    this.name = serverName;
    this.maxConcurrentCalls = maxConcurrentCalls;
    this.permits = new Semaphore(maxConcurrentCalls);
    MethodHandle ofVirtual = OF_VIRTUAL;
    MethodHandle named = NAME;
    MethodHandle factory = FACTORY;
    if (ofVirtual == null || named == null || factory == null) {
      throw new IllegalStateException(UNAVAILABLE); // checkAvailable() threw already
    }
    try {
      Object builder = named.invoke(ofVirtual.invoke(), serverName + "-virtual-", 0L);
      this.threads = (ThreadFactory) factory.invoke(builder);
    } catch (Throwable e) {
      throw new IllegalStateException("cannot make the virtual thread factory: " + e, e);
    }
  }

  /** Whether this JVM has virtual threads (Java 21+). */
  public static boolean isAvailable() {
    return OF_VIRTUAL != null;
  }

  /** Throws {@link UnsupportedOperationException} saying why virtual threads are not available, if they are not. */
  public static void checkAvailable() {
    if (OF_VIRTUAL == null) {
      throw new UnsupportedOperationException(UNAVAILABLE + ": RpcServer.builder().virtualThreads(...) cannot be"
          + " used here; run on Java 21+, or keep the built-in pool (businessThreads / businessQueueSize)");
    }
  }

  @Override
  public void execute(Runnable call) {
    if (!permits.tryAcquire()) {
      throw new RejectedExecutionException(fullMessage());
    }
    if (call instanceof CoreServerCall c) {
      c.beforeAnswer(release); // the place is freed before the answer goes out, or when the run ends
    }
    Thread t;
    alive.incrementAndGet();
    try {
      t = threads.newThread(() -> {
        running.add(Thread.currentThread());
        if (interruptAll) {
          Thread.currentThread().interrupt(); // started as interruptRunning ran: stopped as the others are
        }
        try {
          call.run();
        } finally {
          running.remove(Thread.currentThread());
          if (CoreServerCall.stillHoldsPlace(call)) {
            release.run();
          }
          threadEnded();
        }
      });
      t.start();
    } catch (RuntimeException | Error e) {
      if (CoreServerCall.stillHoldsPlace(call)) {
        permits.release(); // never ran: not counted as completed
      }
      threadEnded();
      throw new RejectedExecutionException("cannot start a virtual thread for the call: " + e, e);
    }
  }

  private void threadEnded() {
    if (alive.decrementAndGet() == 0) {
      CompletableFuture<Void> f = idle; // read after the count: whenIdle sets it, then reads the count
      if (f != null) {
        f.complete(null);
      }
    }
  }

  /**
   * Completes once no call's thread is left: every handler has returned. For a server that takes no new calls (a
   * graceful stop), which waits for it.
   */
  public CompletableFuture<Void> whenIdle() {
    CompletableFuture<Void> f = idle;
    if (f == null) {
      f = new CompletableFuture<>();
      idle = f;
    }
    if (alive.get() == 0) {
      f.complete(null);
    }
    return f;
  }

  /** Call threads still alive (a call's thread ends after its handler returns). */
  public int threadsAlive() {
    return alive.get();
  }

  private void callEnded() {
    completed.incrementAndGet();
    permits.release();
  }

  /** What to tell a caller whose call did not fit. */
  public String fullMessage() {
    return "server '" + name + "' already runs " + maxConcurrentCalls + " calls on virtual threads, its limit"
        + " (raise RpcServer.builder().virtualThreads(maxConcurrentCalls), make handlers faster, or add servers)";
  }

  /** For the start log line. */
  public String describe() {
    return "virtual threads, at most " + maxConcurrentCalls + " calls at once";
  }

  /** Calls running now (a call counts until it hands its answer to the transport, or its run ends). */
  public int active() {
    return maxConcurrentCalls - permits.availablePermits();
  }

  /** Calls run to their end (their answer handed to the transport, or their run ended) so far. */
  public long completed() {
    return completed.get();
  }

  /** Interrupts the handlers still running (forced shutdown), and any whose thread is starting. */
  public void interruptRunning() {
    interruptAll = true;
    running.forEach(Thread::interrupt);
  }

  /** Call threads alive now, but {@code t} if it is one of them. */
  public int runningExcept(Thread t) {
    int n = alive.get();
    return running.contains(t) ? Math.max(0, n - 1) : n;
  }
}
