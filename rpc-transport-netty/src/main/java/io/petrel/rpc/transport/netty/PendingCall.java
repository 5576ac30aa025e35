package io.petrel.rpc.transport.netty;

import static io.petrel.rpc.transport.netty.Protocol.TYPE_ONEWAY;
import static io.petrel.rpc.transport.netty.Protocol.TYPE_REQUEST;

import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.ScheduledFuture;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.Deadline;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.MethodType;
import io.petrel.rpc.Status;
import io.petrel.rpc.spi.AttemptProgress;
import io.petrel.rpc.spi.ClientStream;
import io.petrel.rpc.spi.ClientStreamListener;
import io.petrel.rpc.spi.WakeBatch;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * One attempt of a client call on the Netty transport, the {@link ClientStream} the core starts on a
 * {@link ClientConnection}: where the attempt is on the wire (its encoded request until written, its request id,
 * its place in the connection's queue, its deadline timer on the connection's event loop) and the core's call it
 * reports to ({@link #listener}). Petrel's frame carries a whole unary request: {@link #sendMessage} encodes it on
 * the caller's thread and {@link #halfClose} hands it to the connection. The attempt ends once: the server's
 * answer, a refusal, the connection going away, its deadline, or the caller's {@link #cancel}.
 */
final class PendingCall implements ClientStream, Runnable {
  final ClientConnection owner;
  private final MethodDescriptor<?, ?> method;
  private final Metadata metadata;
  private final @Nullable Deadline deadline;
  /** The core's call: hears what the server sends and how the attempt ends. */
  private final ClientStreamListener listener;
  /** The encoded request; owned by this attempt until written. Touched on the event loop once queued. */
  @Nullable ByteBuf frame;
  /**
   * Set on the event loop when the attempt is registered on its connection (a plain write, on the hot path) or
   * held in its queue ({@link #holdOn}, a volatile write). Read from other threads by {@link #cancel}.
   */
  @Nullable ClientConnection connection;
  int requestId;
  @Nullable ScheduledFuture<?> timer;
  /**
   * Event loop only: the attempt ended locally (deadline, cancel) while in flight on a connection whose server
   * limits its calls in flight; CANCEL was sent, and it keeps its place in the connection's in-flight map until
   * the server's answer comes, because the server counts it until then. See ClientConnection#forget.
   */
  boolean abandoned;
  /** Event loop only: when {@link #abandoned} was set ({@link System#nanoTime()}). */
  long abandonedAt;
  /** Event loop only (or the caller's thread before the request is queued): the attempt has reported its end. */
  private boolean ended;
  /** The caller ended the call ({@link #cancel}); any thread. */
  private volatile boolean cancelled;
  /** Event loop only: the connection queue the attempt waits in, if any, and its links there. */
  @Nullable CallQueue queuedIn;
  @Nullable PendingCall queuePrev;
  @Nullable PendingCall queueNext;

  private static final java.lang.invoke.VarHandle CONNECTION;

  static {
    try {
      CONNECTION = java.lang.invoke.MethodHandles.lookup().findVarHandle(PendingCall.class, "connection",
          ClientConnection.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  PendingCall(ClientConnection owner, MethodDescriptor<?, ?> method, CallOptions options,
      @Nullable Deadline deadline, ClientStreamListener listener) {
    this.owner = owner;
    this.method = method;
    this.metadata = options.metadata();
    this.deadline = deadline;
    this.listener = listener;
  }

  MethodDescriptor<?, ?> method() {
    return method;
  }

  @Nullable Deadline deadline() {
    return deadline;
  }

  boolean isOneway() {
    return method.type() == MethodType.ONEWAY;
  }

  /** True once the attempt has ended, or its caller ended the call. */
  boolean isFinished() {
    return ended || cancelled;
  }

  // ---- the core's side ----

  /** Encodes the request on the caller's thread, into one heap buffer of the exact size. */
  @Override
  // A request may be null (a method without parameters): its marshaller decides, as it does for every value.
  @SuppressWarnings({"unchecked", "NullAway"})
  public int sendMessage(@Nullable Object message) throws Exception {
    NettyRpcClient client = owner.client();
    ByteBuf f = FrameEncoder.encodeMessage(IoSupport.CALLER_ALLOCATOR, isOneway() ? TYPE_ONEWAY : TYPE_REQUEST, 0,
        method.id(), 0, metadata, ((MethodDescriptor<Object, ?>) method).requestMarshaller(), message,
        client.maxFrameSize(), client.maxMetadataSize(), "RpcClient.builder()");
    // (over a limit: FrameSizes.TooLarge, which the core turns into the call's status)
    frame = f;
    return f.getInt(Protocol.OFF_BODY_LENGTH);
  }

  /** The whole request is one frame: handed to the connection's write queue. */
  @Override
  public void halfClose() {
    owner.send(this);
  }

  /** The caller ended the call: the connection forgets the attempt (and tells the server) on its event loop. */
  @Override
  public void cancel(Status status) {
    cancelled = true; // volatile, then the volatile read of the connection: see holdOn
    ScheduledFuture<?> t = timer;
    if (t != null) {
      t.cancel(false);
    }
    ClientConnection c = connectionSeen();
    if (c != null) {
      c.cancelled(this);
    }
  }

  @Override
  public String peer() {
    return owner.authority();
  }

  @Override
  public WakeBatch wakeBatch() {
    return owner.wakeBatch();
  }

  // ---- what the connection reports, on its event loop ----

  /** Ends the attempt here once: no timer. False if it had ended, or was cancelled. */
  private boolean end() {
    if (ended) {
      return false;
    }
    ended = true;
    ScheduledFuture<?> t = timer;
    if (t != null) {
      t.cancel(false);
    }
    return !cancelled;
  }

  /** The server's response: its metadata, its one message, and the end with OK. */
  void responded(Metadata responseMetadata, ByteBuf body) {
    if (end()) {
      listener.onHeaders(responseMetadata);
      listener.onMessage(body); // a unary response: one message that ends the call with OK
      listener.onClose(Status.OK, Metadata.EMPTY, AttemptProgress.PROCESSED);
    }
  }

  /** The server's error status in place of a response (its handler may have run). */
  void answered(Metadata responseMetadata, Status status) {
    if (end()) {
      listener.onHeaders(responseMetadata);
      listener.onClose(status, Metadata.EMPTY, AttemptProgress.PROCESSED);
    }
  }

  /** The attempt ended without an answer, having got as far as {@code progress}. */
  void closed(Status status, AttemptProgress progress) {
    if (end()) {
      listener.onClose(status, Metadata.EMPTY, progress);
    }
  }

  /** A oneway request was written: the call is done. */
  void sent() {
    if (end()) {
      listener.onClose(Status.OK, Metadata.EMPTY, AttemptProgress.PROCESSED);
    }
  }

  /**
   * Event loop: the attempt waits in {@code c}'s queue. A volatile write, paired with the volatile read of
   * {@link #connectionSeen} after a canceller has set {@link #cancelled}: either the canceller sees the
   * connection (and has it drop the attempt) or the event loop sees the attempt cancelled (and drops it itself).
   */
  void holdOn(ClientConnection c) {
    CONNECTION.setVolatile(this, c);
  }

  /** Any thread: the connection the attempt is registered or held on, if the caller's thread can tell. */
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
    String detail = c == null ? " (the request was not sent yet)" : c.forget(this);
    if (end()) {
      listener.onDeadlineExceeded(detail);
    }
  }

  /**
   * Arms the deadline timer on {@code loop} unless already armed. Call on that loop. Returns false, having ended
   * the attempt with UNAVAILABLE, if the loop is shut down (the client is shutting down, or the caller shut down
   * the event loops it gave the client).
   */
  boolean armTimer(io.netty.channel.EventLoop loop) {
    Deadline d = deadline;
    if (d != null && timer == null && !isFinished()) {
      try {
        timer = loop.schedule(this, Math.max(0, d.remainingNanos()), TimeUnit.NANOSECONDS);
      } catch (RejectedExecutionException e) {
        releaseFrame();
        closed(Status.UNAVAILABLE.withDescription(owner.client().whyStopped() + "; " + method.fullName()
            + " not sent"), AttemptProgress.NOT_SENT);
        return false;
      }
    }
    return true;
  }

  /** The request not yet written (an attempt is queued and sent with it). */
  ByteBuf frame() {
    return Objects.requireNonNull(frame, "the request of an attempt not yet written");
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
