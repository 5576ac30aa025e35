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

  /** What to tell a caller whose call did not fit. */
  public String fullMessage() {
    return "server business pool is full: " + threads + " threads busy and " + getQueue().size() + " of "
        + queueSize + " queue places taken (raise RpcServer.builder().businessThreads / businessQueueSize,"
        + " make handlers faster, or add servers)";
  }
}
