package io.petrel.rpc.transport.netty;

import org.jspecify.annotations.Nullable;

/**
 * The calls a {@link ClientConnection} holds back, in the order they were sent: a doubly linked list through
 * the calls themselves ({@link PendingCall#queuePrev}, {@link PendingCall#queueNext}), so that adding costs no
 * allocation and a call that ends while it waits (deadline, cancel) leaves the queue at once, wherever it is.
 * A call is in at most one queue ({@link PendingCall#queuedIn}). One event loop's only: all connections of a
 * client slot share one loop, so a call moved from one connection's queue to another's stays on it.
 */
final class CallQueue {
  private @Nullable PendingCall head;
  private @Nullable PendingCall tail;
  private int size;

  boolean isEmpty() {
    return head == null;
  }

  int size() {
    return size;
  }

  /** The oldest call, or null; walk on with {@link PendingCall#queueNext}. */
  @Nullable PendingCall first() {
    return head;
  }

  void add(PendingCall call) {
    if (call.queuedIn != null) {
      throw new IllegalStateException("already queued: " + call);
    }
    call.queuedIn = this;
    call.queuePrev = tail;
    call.queueNext = null;
    if (tail == null) {
      head = call;
    } else {
      tail.queueNext = call;
    }
    tail = call;
    size++;
  }

  /** Removes and returns the oldest call, or null. */
  @Nullable PendingCall poll() {
    PendingCall c = head;
    if (c != null) {
      remove(c);
    }
    return c;
  }

  /** Unlinks {@code call}; false if it is not in this queue. */
  boolean remove(PendingCall call) {
    if (call.queuedIn != this) {
      return false;
    }
    PendingCall prev = call.queuePrev;
    PendingCall next = call.queueNext;
    if (prev == null) {
      head = next;
    } else {
      prev.queueNext = next;
    }
    if (next == null) {
      tail = prev;
    } else {
      next.queuePrev = prev;
    }
    call.queuePrev = null;
    call.queueNext = null;
    call.queuedIn = null;
    size--;
    return true;
  }
}
