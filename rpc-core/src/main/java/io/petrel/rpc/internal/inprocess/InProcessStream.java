package io.petrel.rpc.internal.inprocess;

import io.netty.buffer.ByteBuf;
import io.petrel.rpc.Deadline;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.MethodType;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.Status;
import io.petrel.rpc.spi.AttemptProgress;
import io.petrel.rpc.spi.ClientStream;
import io.petrel.rpc.spi.ClientStreamListener;
import java.util.Objects;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * One attempt of an in-process client call: its request, marshalled into a buffer of its own by
 * {@link #sendMessage} and handed to the server's connection by {@link #halfClose}, its link to the server's call,
 * and its deadline on the in-process clients' shared timer. What the server answers goes to the core's call, the
 * stream's {@link ClientStreamListener}. The attempt ends once (a response, an error, a refusal, the connection
 * closing, the deadline, or the caller's cancel); ending it locally (deadline, cancel) cancels the server's
 * {@link ServerContext} of the call, and a response that comes after the end is released.
 */
// The reference is how the attempt ended, set once by whichever end comes first (null while it runs): the code
// the server's context is cancelled with when the end was the caller's (its cancel, its deadline).
@SuppressWarnings("serial")
final class InProcessStream extends AtomicReference<Status.@Nullable Code> implements ClientStream, Runnable {
  private final InProcessClient client;
  private final MethodDescriptor<?, ?> method;
  private final Metadata metadata;
  private final @Nullable Deadline deadline;
  private final ClientStreamListener listener;
  /** The encoded request, from {@link #sendMessage} until {@link #halfClose} hands it to the server. */
  private @Nullable ByteBuf body;
  private int metaLen;
  /** The server's connection the request goes to, found by {@link #sendMessage}. */
  private @Nullable InProcessConnection conn;
  private volatile @Nullable ScheduledFuture<?> timer;
  /** The server's context of this call, once dispatched: cancelled when the attempt ends locally. */
  private volatile @Nullable ServerContext serverContext;

  InProcessStream(InProcessClient client, MethodDescriptor<?, ?> method, Metadata metadata,
      @Nullable Deadline deadline, ClientStreamListener listener) {
    this.client = client;
    this.method = method;
    this.metadata = metadata;
    this.deadline = deadline;
    this.listener = listener;
  }

  MethodDescriptor<?, ?> method() {
    return method;
  }

  boolean isOneway() {
    return method.type() == MethodType.ONEWAY;
  }

  /** True once the attempt has ended (any thread). */
  boolean isFinished() {
    return get() != null;
  }

  /** Ends the attempt here, once: the first caller wins and cancels the deadline timer. */
  private boolean finish() {
    return finish(Status.Code.OK);
  }

  /**
   * As {@link #finish()}, with the code the server's context is cancelled with if this end cancels it (the
   * caller's cancel: its status's code; the deadline: DEADLINE_EXCEEDED).
   */
  private boolean finish(Status.Code how) {
    if (!compareAndSet(null, how)) {
      return false;
    }
    ScheduledFuture<?> t = timer;
    if (t != null) {
      t.cancel(false);
    }
    return true;
  }

  /** The code the end was made with: DEADLINE_EXCEEDED for the deadline, else CANCELLED. */
  private Status.Code endCode() {
    return get() == Status.Code.DEADLINE_EXCEEDED ? Status.Code.DEADLINE_EXCEEDED : Status.Code.CANCELLED;
  }

  // ---- the core's side ----

  @Override
  // A request may be null (a method without parameters): its marshaller decides, as it does for every value.
  @SuppressWarnings({"unchecked", "NullAway"})
  public int sendMessage(@Nullable Object message) throws Exception {
    // Over a limit: FrameSizes.TooLarge, which the core turns into the call's status.
    int len = Frames.checkMetadata(metadata, client.maxMetadataSize(), "RpcClient.builder()");
    ByteBuf b = Frames.encode("request", ((MethodDescriptor<Object, ?>) method).requestMarshaller(), message, len,
        client.maxFrameSize(), "RpcClient.builder()");
    InProcessConnection c = client.connection();
    if (c == null) {
      b.release();
      throw client.unavailable(method).asException(); // not sent, and there is no other endpoint to send it to
    }
    metaLen = len;
    body = b;
    conn = c;
    return b.readableBytes();
  }

  @Override
  public void halfClose() {
    ByteBuf b = Objects.requireNonNull(body, "the request, sent before the end of the request");
    InProcessConnection c = Objects.requireNonNull(conn, "the connection, found with the request");
    body = null;
    if (isFinished()) {
      b.release(); // cancelled by its caller meanwhile
      return;
    }
    boolean oneway = isOneway();
    c.dispatch(this, metadata, metaLen, b, deadline, oneway); // owns the body from here
    if (oneway) {
      if (finish()) {
        listener.onClose(Status.OK, Metadata.EMPTY, AttemptProgress.PROCESSED); // handed over: done
      }
    } else {
      armTimer();
    }
  }

  @Override
  public void cancel(Status status) {
    if (finish(status.code())) {
      cancelServer();
    }
  }

  @Override
  public String peer() {
    return client.target();
  }

  // ---- the server's side of the call ----

  /** Dispatched: the server made this context for the call (before it may run). */
  void serverContext(ServerContext context) {
    serverContext = context;
    if (isFinished()) {
      context.cancel(endCode()); // ended locally before the server knew of it; it can only have been a local end
    }
  }

  /** The server's OK response: {@code body} is this stream's to release. */
  void onResponse(Metadata responseMetadata, int responseMetaLen, ByteBuf response) {
    try {
      if (!finish()) {
        return; // ended meanwhile (deadline, cancel): nobody wants it
      }
      int frameSize = Frames.HEADER_SIZE + responseMetaLen + response.readableBytes();
      if (frameSize > client.maxFrameSize() || responseMetaLen > client.maxMetadataSize()) {
        boolean frame = frameSize > client.maxFrameSize();
        listener.onClose(Status.RESOURCE_EXHAUSTED.withDescription("response of " + frameSize + " bytes exceeds"
            + " the client's max" + (frame ? "FrameSize " + client.maxFrameSize() : "MetadataSize "
            + client.maxMetadataSize()) + " (raise RpcClient.builder().max" + (frame ? "FrameSize" : "MetadataSize")
            + ")"), Metadata.EMPTY, AttemptProgress.PROCESSED);
        return;
      }
      listener.onHeaders(responseMetadata);
      listener.onMessage(response); // a unary response: one message, then the end with OK
      listener.onClose(Status.OK, Metadata.EMPTY, AttemptProgress.PROCESSED);
    } finally {
      response.release();
    }
  }

  /** The server's error status in place of a response. */
  void onError(Status status, Metadata responseMetadata) {
    if (!finish()) {
      return;
    }
    listener.onHeaders(responseMetadata);
    listener.onClose(status, Metadata.EMPTY, AttemptProgress.PROCESSED); // the server answered: its handler may have run
  }

  /**
   * The server refused the request before any handler saw it (shutting down, over a limit): the attempt ends
   * REFUSED with the server's status, and the core decides whether to send it again.
   */
  void onRefused(Status status) {
    if (finish()) {
      listener.onClose(status, Metadata.EMPTY, AttemptProgress.REFUSED);
    }
  }

  /** The connection closed with the call in flight: the server may have run it. */
  void onClosed(Status status) {
    if (finish()) {
      listener.onClose(status, Metadata.EMPTY, AttemptProgress.PROCESSED);
    }
  }

  /** Ends the call on the server too (deadline, cancellation by the caller). */
  private void cancelServer() {
    ServerContext c = serverContext;
    if (c != null) {
      c.cancel(endCode());
    }
  }

  // ---- deadline ----

  /** Arms the deadline on the shared timer, unless the attempt has ended already. */
  private void armTimer() {
    Deadline d = deadline;
    if (d == null || isFinished()) {
      return;
    }
    ScheduledFuture<?> t = InProcessClient.timer().schedule(this, Math.max(0, d.remainingNanos()),
        TimeUnit.NANOSECONDS);
    timer = t;
    if (isFinished()) {
      t.cancel(false); // ended while it was armed: finish() may not have seen the timer
    }
  }

  /** The deadline passed (the shared timer's thread): the server's call is cancelled before the caller hears. */
  @Override
  public void run() {
    if (!finish(Status.Code.DEADLINE_EXCEEDED)) {
      return;
    }
    cancelServer();
    listener.onDeadlineExceeded("");
  }
}
