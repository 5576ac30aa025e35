package io.petrel.rpc.internal.inprocess;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.petrel.rpc.Deadline;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.Status;
import io.petrel.rpc.internal.CallDeadline;
import io.petrel.rpc.internal.CallMetrics;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.LoggerFactory;

/**
 * One in-process client call and the future its caller holds. It ends exactly once: with the server's answer,
 * at its deadline, by cancellation, or when its connection closes; {@link #claim()} decides which, and the loser
 * does nothing (a response that lost is released). Ending it locally (deadline, cancel, by hand) cancels the
 * server's {@link ServerContext} of the call.
 *
 * <p>Mirrors what the Netty transport's {@code PendingCall} does per call, until the client runtime moves into
 * the core.
 */
final class InProcessCall<Resp> extends CompletableFuture<Resp> implements CallDeadline, Runnable {
  @SuppressWarnings("rawtypes")
  private static final AtomicIntegerFieldUpdater<InProcessCall> FINISHED =
      AtomicIntegerFieldUpdater.newUpdater(InProcessCall.class, "finished");

  private final InProcessClient client;
  final MethodDescriptor<?, Resp> method;
  private final @Nullable Deadline deadline;
  private final long startNanos;
  private final @Nullable Consumer<Metadata> responseMetadata;
  private final CallMetrics metrics;
  /** Where the response is decoded and the future completed; null for the thread that ends the call. */
  private final @Nullable Executor executor;
  int requestSize = -1;
  private volatile int responseSize = -1;
  private volatile @Nullable ScheduledFuture<?> timer;
  /** The server's context of this call, once dispatched: cancelled when the call ends locally. */
  private volatile @Nullable ServerContext serverContext;
  private volatile int finished;

  InProcessCall(InProcessClient client, MethodDescriptor<?, Resp> method, @Nullable Deadline deadline,
      @Nullable Consumer<Metadata> responseMetadata, CallMetrics metrics, @Nullable Executor executor) {
    this.client = client;
    this.method = method;
    this.deadline = deadline;
    this.responseMetadata = responseMetadata;
    this.metrics = metrics;
    this.executor = executor;
    this.startNanos = System.nanoTime();
  }

  @Override
  public @Nullable Deadline callDeadline() {
    return deadline;
  }

  boolean isFinished() {
    return finished != 0;
  }

  /** Ends the call for the client (no timer, no longer pending); false if it had already ended. */
  private boolean claim() {
    if (!FINISHED.compareAndSet(this, 0, 1)) {
      return false;
    }
    ScheduledFuture<?> t = timer;
    if (t != null) {
      t.cancel(false);
    }
    client.callEnded();
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

  // ---- the server's side of the call ----

  /** Dispatched: the server made this context for the call (before it may run). */
  void serverContext(ServerContext context) {
    serverContext = context;
    if (isFinished()) {
      context.cancel(); // ended locally before the server knew of it; it can only have been a local end
    }
  }

  /** The server's OK response: {@code body} is this call's to release. */
  void onResponse(Metadata metadata, int metaLen, ByteBuf body) {
    int frameSize = Frames.HEADER_SIZE + metaLen + body.readableBytes();
    if (frameSize > client.maxFrameSize() || metaLen > client.maxMetadataSize()) {
      body.release();
      boolean frame = frameSize > client.maxFrameSize();
      fail(Status.RESOURCE_EXHAUSTED.withDescription("response of " + frameSize + " bytes exceeds the client's max"
          + (frame ? "FrameSize " + client.maxFrameSize() : "MetadataSize " + client.maxMetadataSize())
          + " (raise RpcClient.builder().max" + (frame ? "FrameSize" : "MetadataSize") + ")"));
      return;
    }
    if (isFinished()) {
      body.release(); // ended meanwhile (deadline, cancel): nobody wants it
      return;
    }
    responseSize = body.readableBytes();
    deliverMetadata(metadata);
    Executor e = executor;
    if (e == null) {
      Resp value;
      try {
        value = method.responseMarshaller().read(body);
      } catch (Throwable t) {
        fail(decodeFailure(t));
        return;
      } finally {
        body.release();
      }
      if (tryFinish(Status.Code.OK)) {
        detached(() -> super.complete(value));
      }
      return;
    }
    if (!claim()) {
      body.release();
      return;
    }
    // The executor may be a caller waiting (a blocking call) or a pool that could drop the task: it gets the
    // bytes, not the buffer, so nothing can leak whatever it does with the task.
    byte[] bytes = ByteBufUtil.getBytes(body);
    body.release();
    complete(e, () -> decodeAndComplete(bytes));
  }

  /** The server's error status in place of a response. */
  void onError(Status status, Metadata metadata) {
    if (isFinished()) {
      return;
    }
    deliverMetadata(metadata);
    Status s = status;
    if (s.code() == Status.Code.UNIMPLEMENTED) {
      s = s.withDescription(method.fullName() + " is not implemented by " + client.target() + ": "
          + s.description());
    }
    fail(s);
  }

  private void deliverMetadata(Metadata md) {
    if (responseMetadata != null && !isFinished()) {
      try {
        responseMetadata.accept(md);
      } catch (RuntimeException e) {
        LoggerFactory.getLogger(InProcessCall.class).warn("response metadata listener of {} threw",
            method.fullName(), e);
      }
    }
  }

  private void decodeAndComplete(byte[] bytes) {
    ByteBuf in = Unpooled.wrappedBuffer(bytes);
    Resp value;
    try {
      value = method.responseMarshaller().read(in);
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

  /** A oneway call was handed to the server: it is done (the server may still refuse or run it). */
  void sent() {
    if (tryFinish(Status.Code.OK)) {
      detached(() -> super.complete(null));
    }
  }

  /** Ends the call with {@code status} (the server's answer, a refusal, or a closed connection). */
  void fail(Status status) {
    if (tryFinish(status.code())) {
      failed(status);
    }
  }

  /** Completes the future with {@code status}, once the call has been claimed. */
  private void failed(Status status) {
    Executor e = executor;
    if (e == null) {
      detached(() -> super.completeExceptionally(status.asException()));
    } else {
      complete(e, () -> super.completeExceptionally(status.asException()));
    }
  }

  /** Ends the call here (deadline, cancellation by the caller): the server's call is cancelled too. */
  private void cancelServer() {
    ServerContext c = serverContext;
    if (c != null) {
      c.cancel();
    }
  }

  // ---- deadline ----

  /** Arms the deadline on the shared timer, unless the call has ended already. */
  void armTimer() {
    Deadline d = deadline;
    if (d == null || isFinished()) {
      return;
    }
    ScheduledFuture<?> t = InProcessClient.timer().schedule(this, Math.max(0, d.remainingNanos()),
        TimeUnit.NANOSECONDS);
    timer = t;
    if (isFinished()) {
      t.cancel(false); // ended while it was armed: claim() may not have seen the timer
    }
  }

  /** The deadline passed: the shared timer's thread. */
  @Override
  public void run() {
    if (isFinished()) {
      return;
    }
    long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    if (tryFinish(Status.Code.DEADLINE_EXCEEDED)) {
      cancelServer(); // first: once the caller sees the failure, the server's call is cancelled
      failed(Status.DEADLINE_EXCEEDED.withDescription("deadline exceeded after " + waitedMs + " ms waiting for "
          + method.fullName() + " from " + client.target()));
    }
  }

  // ---- the caller's side ----

  @Override
  public boolean cancel(boolean mayInterruptIfRunning) {
    if (!tryFinish(Status.Code.CANCELLED)) {
      return false;
    }
    cancelServer();
    return super.cancel(mayInterruptIfRunning);
  }

  @Override
  public boolean complete(Resp value) {
    // Completing by hand ends the call for the transport too.
    if (!tryFinish(Status.Code.OK)) {
      return false;
    }
    cancelServer();
    return super.complete(value);
  }

  @Override
  public boolean completeExceptionally(Throwable ex) {
    if (!tryFinish(Status.fromThrowable(ex).code())) {
      return false;
    }
    cancelServer();
    return super.completeExceptionally(ex);
  }

  @Override
  public <U> CompletableFuture<U> newIncompleteFuture() {
    return new CompletableFuture<>();
  }

  /** Runs {@code task} on the call's executor, or here if that executor refuses it (shut down). */
  private static void complete(Executor e, Runnable task) {
    try {
      e.execute(task);
    } catch (RejectedExecutionException rejected) {
      task.run();
    }
  }

  /**
   * Runs a completion on this thread with no server call attached: in direct mode, or when a business thread
   * answers, the thread is still inside the server's call, whose context the caller's callbacks must not see.
   */
  private static void detached(Runnable completion) {
    ServerContext serving = ServerContext.current();
    if (serving == null) {
      completion.run();
      return;
    }
    ServerContext.restore(null);
    try {
      completion.run();
    } finally {
      ServerContext.restore(serving);
    }
  }
}
