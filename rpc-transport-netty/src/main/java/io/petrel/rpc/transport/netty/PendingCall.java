package io.petrel.rpc.transport.netty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.ScheduledFuture;
import io.petrel.rpc.Deadline;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.internal.CallDeadline;
import io.petrel.rpc.internal.CallMetrics;
import io.petrel.rpc.internal.ThreadlessExecutor;
import io.petrel.rpc.internal.WakeChain;
import java.util.function.Consumer;
import io.petrel.rpc.Status;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import org.jspecify.annotations.Nullable;

/**
 * A client call from start to end, and the future the caller holds. It ends exactly once: with a response,
 * a status, or cancellation by the caller; {@link #tryFinish()} decides which, and the loser does nothing.
 * Derived stages ({@code thenApply} etc.) are plain CompletableFutures.
 */
final class PendingCall<Resp> extends CompletableFuture<Resp> implements Runnable, CallDeadline {
  private static final AtomicIntegerFieldUpdater<PendingCall> FINISHED =
      AtomicIntegerFieldUpdater.newUpdater(PendingCall.class, "finished");

  final NettyRpcClient client;
  final MethodDescriptor<?, Resp> method;
  final Deadline deadline;
  final long startNanos;
  final boolean oneway;
  private final Consumer<Metadata> responseMetadata;
  private final CallMetrics metrics;
  /** Where the response is decoded and the future completed; null for the event loop. */
  private final @Nullable Executor executor;
  int requestSize = -1;
  int responseSize = -1;
  /** The encoded request; owned by this call until written. Touched on the event loop once queued. */
  ByteBuf frame;
  /**
   * Set on the event loop when the call is registered on a connection (a plain write, on the hot path) or held
   * in its queue ({@link #holdOn}, a volatile write). Read from other threads by {@link #cancel} and friends.
   */
  ClientConnection connection;
  int requestId;
  /**
   * The endpoint's subchannel the call is counted on, when the client has several endpoints (null with one);
   * written before the call is routed, read when it ends.
   */
  volatile NettySubchannel subchannel;
  /** The call was moved once to another endpoint because its own could not be reached. */
  boolean repicked;
  ScheduledFuture<?> timer;
  private volatile int finished;
  /**
   * Event loop only: the call ended locally (deadline, cancel) while in flight on a connection whose server
   * limits its calls in flight; CANCEL was sent, and the call keeps its place in the connection's in-flight map
   * until the server's answer comes, because the server counts it until then. See ClientConnection#forget.
   */
  boolean abandoned;
  /** Event loop only: the connection queue the call waits in, if any, and its links there. */
  CallQueue queuedIn;
  PendingCall<?> queuePrev;
  PendingCall<?> queueNext;

  private static final java.lang.invoke.VarHandle CONNECTION;

  static {
    try {
      CONNECTION = java.lang.invoke.MethodHandles.lookup().findVarHandle(PendingCall.class, "connection",
          ClientConnection.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  PendingCall(NettyRpcClient client, MethodDescriptor<?, Resp> method, Deadline deadline, boolean oneway,
      Consumer<Metadata> responseMetadata, CallMetrics metrics, Executor executor) {
    this.responseMetadata = responseMetadata;
    this.executor = executor;
    this.metrics = metrics;
    this.client = client;
    this.method = method;
    this.deadline = deadline;
    this.oneway = oneway;
    this.startNanos = System.nanoTime();
  }

  @Override
  public Deadline callDeadline() {
    return deadline;
  }

  /** Runs {@code task} on the call's executor, or here if that executor refuses it (shut down). */
  private static void complete(Executor e, Runnable task) {
    try {
      e.execute(task);
    } catch (RejectedExecutionException rejected) {
      task.run(); // complete here rather than never
    }
  }

  /**
   * Ends the call for the transport (no timer, no longer pending); the winner of this race completes the
   * future. Returns false if the call had already ended.
   */
  private boolean claim() {
    if (!FINISHED.compareAndSet(this, 0, 1)) {
      return false;
    }
    ScheduledFuture<?> t = timer;
    if (t != null) {
      t.cancel(false);
    }
    client.callEnded(this);
    return true;
  }

  private boolean tryFinish(Status.Code code) {
    if (!claim()) {
      return false;
    }
    record(code);
    return true;
  }

  private void record(Status.Code code) {
    metrics.record(code, System.nanoTime() - startNanos, requestSize, responseSize);
  }

  /** Hands the server's response metadata to the listener, if any. Event loop, before completion. */
  void responseMetadata(Metadata md) {
    if (responseMetadata != null && !isFinished()) {
      try {
        responseMetadata.accept(md);
      } catch (RuntimeException e) {
        org.slf4j.LoggerFactory.getLogger(PendingCall.class).warn("response metadata listener of {} threw",
            method.fullName(), e);
      }
    }
  }

  boolean isFinished() {
    return finished != 0;
  }

  void succeed(Resp value) {
    if (tryFinish(Status.Code.OK)) {
      Executor e = executor;
      if (e == null) {
        super.complete(value);
      } else {
        complete(e, () -> super.complete(value));
      }
    }
  }

  /**
   * Event loop: the OK response's body has arrived. With no executor it is decoded here; otherwise the event
   * loop only copies the bytes and the executor decodes them (for a blocking call, the waiting caller), so
   * that the one event loop of a busy connection does as little per call as it can.
   */
  @SuppressWarnings("unchecked")
  void onResponseBody(ByteBuf body, WakeChain wakeChain) {
    Executor e = executor;
    if (e == null) {
      Resp value;
      try {
        value = (Resp) method.responseMarshaller().read(body);
      } catch (Throwable t) {
        fail(decodeFailure(t));
        return;
      }
      succeed(value);
      return;
    }
    if (!claim()) {
      return;
    }
    byte[] bytes = ByteBufUtil.getBytes(body);
    Runnable task = () -> decodeAndComplete(bytes);
    if (e instanceof ThreadlessExecutor waiter) {
      wakeChain.post(waiter, task); // a blocking caller: woken by the chain, see WakeChain
      return;
    }
    complete(e, task);
  }

  @SuppressWarnings("unchecked")
  private void decodeAndComplete(byte[] bytes) {
    ByteBuf in = Unpooled.wrappedBuffer(bytes);
    Resp value;
    try {
      value = (Resp) method.responseMarshaller().read(in);
    } catch (Throwable t) {
      Status s = decodeFailure(t);
      record(s.code());
      super.completeExceptionally(s.asException());
      return;
    } finally {
      in.release();
    }
    record(Status.Code.OK);
    super.complete(value);
  }

  private Status decodeFailure(Throwable t) {
    return Status.INTERNAL.withDescription("cannot decode the response of " + method.fullName() + ": "
        + Status.describe(t)).withCause(t);
  }

  void fail(Status status) {
    if (tryFinish(status.code())) {
      Executor e = executor;
      if (e == null) {
        super.completeExceptionally(status.asException());
      } else {
        complete(e, () -> super.completeExceptionally(status.asException()));
      }
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
  private ClientConnection connectionSeen() {
    return (ClientConnection) CONNECTION.getVolatile(this);
  }

  /** Deadline timer (or the connection's sweep): runs on the connection's event loop. */
  @Override
  public void run() {
    if (isFinished()) {
      return; // ended meanwhile (response, cancel): the timer lost the race
    }
    ClientConnection c = connection;
    String notSent = c == null ? " (the request was not sent yet)" : c.forget(this);
    long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    fail(Status.DEADLINE_EXCEEDED.withDescription("deadline exceeded after " + waitedMs + " ms waiting for "
        + method.fullName() + " from " + client.target() + notSent));
  }

  /**
   * Arms the deadline timer on {@code loop} unless already armed. Call on that loop or before queuing. Returns
   * false, having failed the call with UNAVAILABLE, if the loop is shut down (the client is shutting down).
   */
  boolean armTimer(io.netty.channel.EventLoop loop) {
    if (deadline != null && timer == null && !isFinished()) {
      try {
        timer = loop.schedule(this, Math.max(0, deadline.remainingNanos()), TimeUnit.NANOSECONDS);
      } catch (RejectedExecutionException e) {
        releaseFrame();
        fail(Status.UNAVAILABLE.withDescription("client '" + client.name() + "' is shut down; " + method.fullName()
            + " not sent"));
        return false;
      }
    }
    return true;
  }

  @Override
  public boolean cancel(boolean mayInterruptIfRunning) {
    if (!tryFinish(Status.Code.CANCELLED)) {
      return false;
    }
    ClientConnection c = connectionSeen();
    if (c != null) {
      c.cancelled(this);
    }
    return super.cancel(mayInterruptIfRunning);
  }

  @Override
  public boolean complete(Resp value) {
    // Completing by hand ends the call for the transport too.
    if (!tryFinish(Status.Code.OK)) {
      return false;
    }
    ClientConnection c = connectionSeen();
    if (c != null) {
      c.cancelled(this);
    }
    return super.complete(value);
  }

  @Override
  public boolean completeExceptionally(Throwable ex) {
    if (!tryFinish(Status.fromThrowable(ex).code())) {
      return false;
    }
    ClientConnection c = connectionSeen();
    if (c != null) {
      c.cancelled(this);
    }
    return super.completeExceptionally(ex);
  }

  @Override
  public <U> CompletableFuture<U> newIncompleteFuture() {
    return new CompletableFuture<>();
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
