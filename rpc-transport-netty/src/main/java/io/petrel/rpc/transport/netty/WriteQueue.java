package io.petrel.rpc.transport.netty;

import io.netty.channel.Channel;
import io.netty.util.internal.PlatformDependent;
import java.util.Queue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Messages from any thread to one channel, written by one task on the channel's event loop and flushed once
 * per drain: under load many messages share a syscall; when idle a message is flushed at once, with no timer
 * and no added latency. Items are handed to the {@link Sink} on the event loop.
 */
final class WriteQueue implements Runnable {
  /** Writes queued items; called only on the channel's event loop. */
  interface Sink {
    /** Writes (without flushing) or otherwise consumes the item. */
    void write(Object item);

    /** The queue cannot be drained (event loop gone): release the item and fail what it stands for. */
    void drop(Object item);
  }

  /** Flush at least this often within one drain, so that a long drain does not hold everything back. */
  private static final int MAX_WRITES_PER_FLUSH = 128;

  private final Channel channel;
  private final Sink sink;
  /**
   * Items are linked in chunks of this many: Netty's default MPSC queue starts with a chunk of 1024 (4 KiB of
   * references per connection, most of an idle connection's heap); bursts beyond it link further chunks, which
   * go away once drained.
   */
  static final int CHUNK = 32;

  private final Queue<Object> queue = PlatformDependent.newMpscQueue(CHUNK, 1 << 30);
  private final AtomicBoolean scheduled = new AtomicBoolean();
  /** The event loop refused the drain task: it is shut down, and every item from now on is dropped. */
  private volatile boolean dead;

  WriteQueue(Channel channel, Sink sink) {
    this.channel = channel;
    this.sink = sink;
  }

  void enqueue(Object item) {
    if (dead) {
      sink.drop(item);
      return;
    }
    queue.add(item);
    if (scheduled.compareAndSet(false, true)) {
      try {
        channel.eventLoop().execute(this);
      } catch (RejectedExecutionException e) {
        // The event loop is shut down: nothing will ever drain this queue. (scheduled stays true, so from here
        // on only the dead flag routes items, never a drain task.)
        dead = true;
        dropAll();
      }
    } else if (dead) {
      dropAll(); // raced with the refusal: the item may have landed after its drop
    }
  }

  /** Drops every queued item; one thread at a time, since the queue has a single consumer. */
  private synchronized void dropAll() {
    Object o;
    while ((o = queue.poll()) != null) {
      sink.drop(o);
    }
  }

  @Override
  public void run() {
    int writes = 0;
    for (;;) {
      Object item;
      while ((item = queue.poll()) != null) {
        sink.write(item);
        if (++writes == MAX_WRITES_PER_FLUSH) {
          channel.flush();
          writes = 0;
        }
      }
      scheduled.set(false);
      // A producer may have added an item after the last poll and seen scheduled == true: take it over.
      if (queue.isEmpty() || !scheduled.compareAndSet(false, true)) {
        break;
      }
    }
    if (writes > 0) {
      channel.flush();
    }
  }

  @Override
  public String toString() {
    return "WriteQueue{scheduled=" + scheduled.get() + ", queued=" + queue.size() + ", dead=" + dead + "}";
  }
}
