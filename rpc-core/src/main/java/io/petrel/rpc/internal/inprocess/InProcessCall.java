package io.petrel.rpc.internal.inprocess;

import io.netty.buffer.ByteBuf;
import io.petrel.rpc.Deadline;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.Status;
import io.petrel.rpc.spi.AttemptProgress;
import io.petrel.rpc.spi.ClientCall;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * One in-process client call: the core's {@link ClientCall} (single completion, meters, executor, decoding)
 * plus its link to the server's call. Ending it locally (deadline, cancel, by hand) cancels the server's
 * {@link ServerContext} of the call; a response that comes after the end is released.
 */
final class InProcessCall<Resp> extends ClientCall<Resp> implements Runnable {
  private final InProcessClient client;
  private volatile @Nullable ScheduledFuture<?> timer;
  /** The server's context of this call, once dispatched: cancelled when the call ends locally. */
  private volatile @Nullable ServerContext serverContext;

  InProcessCall(InProcessClient client, MethodDescriptor<?, Resp> method, @Nullable Deadline deadline,
      @Nullable Consumer<Metadata> responseMetadata, @Nullable Executor executor) {
    super(client.callRuntime(), method, deadline, responseMetadata, executor);
    this.client = client;
  }

  @Override
  protected void onEnded() {
    ScheduledFuture<?> t = timer;
    if (t != null) {
      t.cancel(false);
    }
  }

  @Override
  protected void onCancelledByCaller() {
    cancelServer();
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
    try {
      int frameSize = Frames.HEADER_SIZE + metaLen + body.readableBytes();
      if (frameSize > client.maxFrameSize() || metaLen > client.maxMetadataSize()) {
        boolean frame = frameSize > client.maxFrameSize();
        fail(Status.RESOURCE_EXHAUSTED.withDescription("response of " + frameSize + " bytes exceeds the client's"
            + " max" + (frame ? "FrameSize " + client.maxFrameSize() : "MetadataSize " + client.maxMetadataSize())
            + " (raise RpcClient.builder().max" + (frame ? "FrameSize" : "MetadataSize") + ")"));
        return;
      }
      if (isFinished()) {
        return; // ended meanwhile (deadline, cancel): nobody wants it
      }
      onResponseMetadata(metadata);
      onMessage(body, true, null); // a unary response: one message that ends the call with OK
    } finally {
      body.release();
    }
  }

  /** The server's error status in place of a response. */
  void onError(Status status, Metadata metadata) {
    if (isFinished()) {
      return;
    }
    onResponseMetadata(metadata);
    onStatus(status, client.target());
  }

  /**
   * The server refused the request before any handler saw it (shutting down, over a limit): the attempt ends
   * REFUSED with the server's status, and the core decides whether to send it again (see
   * {@link ClientCall#onClose}).
   */
  void onRefused(Status status) {
    if (isFinished()) {
      return;
    }
    onClose(status, AttemptProgress.REFUSED);
  }

  /** Another attempt follows: the failed one's timer and server call are forgotten. */
  @Override
  protected void onNextAttempt() {
    ScheduledFuture<?> t = timer;
    timer = null;
    if (t != null) {
      t.cancel(false);
    }
    serverContext = null;
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
    Deadline d = deadline();
    if (d == null || isFinished()) {
      return;
    }
    ScheduledFuture<?> t = InProcessClient.timer().schedule(this, Math.max(0, d.remainingNanos()),
        TimeUnit.NANOSECONDS);
    timer = t;
    if (isFinished()) {
      t.cancel(false); // ended while it was armed: onEnded() may not have seen the timer
    }
  }

  /** The deadline passed: the shared timer's thread. */
  @Override
  public void run() {
    if (isFinished()) {
      return;
    }
    deadlineExceeded("");
  }

  /** Before the caller sees DEADLINE_EXCEEDED: the server's call is cancelled. */
  @Override
  protected void onDeadlineExceeded() {
    cancelServer();
  }
}
