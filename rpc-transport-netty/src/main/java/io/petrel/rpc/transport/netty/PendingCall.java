package io.petrel.rpc.transport.netty;

import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.ScheduledFuture;
import io.petrel.rpc.Deadline;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.Status;
import io.petrel.rpc.spi.ClientCall;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * A client call on the Netty transport: the core's {@link ClientCall} (single completion, meters, executor,
 * decoding) plus where the call is on the wire: its encoded request until written, its connection and request
 * id, its place in a connection's queue, its deadline timer on the connection's event loop.
 */
final class PendingCall<Resp> extends ClientCall<Resp> implements Runnable {
  final NettyRpcClient client;
  /** The encoded request; owned by this call until written. Touched on the event loop once queued. */
  @Nullable ByteBuf frame;
  /**
   * Set on the event loop when the call is registered on a connection (a plain write, on the hot path) or held
   * in its queue ({@link #holdOn}, a volatile write). Read from other threads by {@link #onCancelledByCaller}.
   */
  @Nullable ClientConnection connection;
  int requestId;
  @Nullable ScheduledFuture<?> timer;
  /**
   * Event loop only: the call ended locally (deadline, cancel) while in flight on a connection whose server
   * limits its calls in flight; CANCEL was sent, and the call keeps its place in the connection's in-flight map
   * until the server's answer comes, because the server counts it until then. See ClientConnection#forget.
   */
  boolean abandoned;
  /** Event loop only: the connection queue the call waits in, if any, and its links there. */
  @Nullable CallQueue queuedIn;
  @Nullable PendingCall<?> queuePrev;
  @Nullable PendingCall<?> queueNext;

  private static final java.lang.invoke.VarHandle CONNECTION;

  static {
    try {
      CONNECTION = java.lang.invoke.MethodHandles.lookup().findVarHandle(PendingCall.class, "connection",
          ClientConnection.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  PendingCall(NettyRpcClient client, MethodDescriptor<?, Resp> method, @Nullable Deadline deadline,
      @Nullable Consumer<Metadata> responseMetadata, @Nullable Executor executor) {
    super(client.callRuntime(), method, deadline, responseMetadata, executor);
    this.client = client;
  }

  /** The call has ended: no timer. */
  @Override
  protected void onEnded() {
    ScheduledFuture<?> t = timer;
    if (t != null) {
      t.cancel(false);
    }
  }

  /**
   * The core sends the call again (its attempt ended NOT_SENT or REFUSED, or it is an idempotent retry): the
   * attempt's connection, request id, timer and request are forgotten. Called on the failed attempt's event
   * loop, where its timer runs, or on the thread that could not send it.
   */
  @Override
  protected void onNextAttempt() {
    ScheduledFuture<?> t = timer;
    timer = null;
    if (t != null) {
      t.cancel(false);
    }
    releaseFrame();
    CONNECTION.setVolatile(this, null);
    requestId = 0;
    abandoned = false;
    queuedIn = null;
    queuePrev = null;
    queueNext = null;
  }

  /** The caller ended the call: the connection forgets it (and tells the server) on its event loop. */
  @Override
  protected void onCancelledByCaller() {
    ClientConnection c = connectionSeen();
    if (c != null) {
      c.cancelled(this);
    }
  }

  /**
   * Event loop: the call waits in {@code c}'s queue. A volatile write, paired with the volatile read of
   * {@link #connectionSeen} after a canceller has ended the call: either the canceller sees the connection (and
   * has it drop the call) or the event loop sees the call ended (and drops it itself).
   */
  void holdOn(ClientConnection c) {
    CONNECTION.setVolatile(this, c);
  }

  /** Any thread: the connection the call is registered or held on, if the caller's thread can tell. */
  private @Nullable ClientConnection connectionSeen() {
    return (ClientConnection) CONNECTION.getVolatile(this);
  }

  /** Deadline timer (or the connection's sweep): runs on the connection's event loop. */
  @Override
  public void run() {
    if (isFinished()) {
      return; // ended meanwhile (response, cancel): the timer lost the race
    }
    ClientConnection c = connection;
    deadlineExceeded(c == null ? " (the request was not sent yet)" : c.forget(this));
  }

  /**
   * Arms the deadline timer on {@code loop} unless already armed. Call on that loop or before queuing. Returns
   * false, having failed the call with UNAVAILABLE, if the loop is shut down (the client is shutting down, or
   * the caller shut down the event loops it gave the client).
   */
  boolean armTimer(io.netty.channel.EventLoop loop) {
    Deadline deadline = deadline();
    if (deadline != null && timer == null && !isFinished()) {
      try {
        timer = loop.schedule(this, Math.max(0, deadline.remainingNanos()), TimeUnit.NANOSECONDS);
      } catch (RejectedExecutionException e) {
        releaseFrame();
        fail(Status.UNAVAILABLE.withDescription(client.whyStopped() + "; " + method().fullName() + " not sent"));
        return false;
      }
    }
    return true;
  }

  /** The request not yet written (a call is queued and sent with it). */
  ByteBuf frame() {
    return Objects.requireNonNull(frame, "the request of a call not yet written");
  }

  /** Releases the request buffer if it was never written. Event loop or failure path only. */
  void releaseFrame() {
    ByteBuf f = frame;
    frame = null;
    if (f != null) {
      f.release();
    }
  }
}
