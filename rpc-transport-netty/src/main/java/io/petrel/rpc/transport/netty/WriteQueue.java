package io.petrel.rpc.transport.netty;

import io.netty.channel.Channel;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
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
   * A lock-free linked queue, in which no sender ever waits for another. Netty's MPSC array queues make every
   * sender spin while one of them links the queue's next chunk: with thousands of blocking callers on a
   * connection and 2 cores, the one linking waited for a core behind the spinning others, and a client with
   * 5000 callers whose calls were refused at once stopped sending for minutes. This one costs a node per message
   * and holds one empty node while idle (Netty's default queue began with 4 KiB of references per connection).
   */
  private final Queue<Object> queue = new ConcurrentLinkedQueue<>();
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

  /** Drops every queued item; one thread at a time, so that items are dropped in order. */
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
