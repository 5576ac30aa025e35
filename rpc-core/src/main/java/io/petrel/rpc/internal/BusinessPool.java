package io.petrel.rpc.internal;

import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The built-in business executor: a fixed number of named threads and a bounded queue. A call that fits
 * neither is rejected at once (the server answers RESOURCE_EXHAUSTED), never parked.
 */
public final class BusinessPool extends ThreadPoolExecutor {
  private final int threads;
  private final int queueSize;
  /** Told of an error that escaped a call (see ServerDispatcher.fatal); set by the server. */
  private volatile java.util.function.BiConsumer<String, Throwable> onError = (where, t) -> {};

  public BusinessPool(String name, int threads, int queueSize) {
    super(threads, threads, 60, TimeUnit.SECONDS, newQueue(queueSize),
        new DefaultThreadFactory(name + "-business", false), new AbortPolicy());
    this.threads = threads;
    this.queueSize = queueSize;
    allowCoreThreadTimeOut(true);
  }

  private static BlockingQueue<Runnable> newQueue(int size) {
    return size == 0 ? new SynchronousQueue<>() : new ArrayBlockingQueue<>(size);
  }

  /** Where an error that escapes a call goes: the server's fatal-error handling. */
  public void onError(java.util.function.BiConsumer<String, Throwable> handler) {
    this.onError = handler;
  }

  /**
   * A call that throws out of its run (it catches what its handler throws, so this is the server's own code
   * failing, for example out of memory while sending an answer): the thread ends and the pool starts another;
   * an {@link OutOfMemoryError} stops the server.
   */
  @Override
  protected void afterExecute(Runnable r, Throwable t) {
    if (t instanceof Error) {
      onError.accept("business thread " + Thread.currentThread().getName(), t);
    }
  }

  /** What to tell a caller whose call did not fit. */
  public String fullMessage() {
    return "server business pool is full: " + threads + " threads busy and " + getQueue().size() + " of "
        + queueSize + " queue places taken (raise RpcServer.builder().businessThreads / businessQueueSize,"
        + " make handlers faster, or add servers)";
  }
}
