package io.petrel.rpc.spi;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.Deadline;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.MethodType;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.Status;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.LoggerFactory;

/**
 * One client call from start to end, and the future its caller holds: the client's per-call runtime, the same
 * for every transport. It ends exactly once, with a response, a status, or an end by the caller (cancel, or
 * completing the future by hand); the first to {@linkplain #claim claim} it wins and the others do nothing. On
 * that end it is uncounted from the client's pending calls, its meters recorded, and its future completed on
 * the call's executor (the call's own, else the client's callback executor, else the thread that ended it).
 *
 * <p>The transport's part is the subclass: how the request travels (set up by
 * {@code RpcClient.start(call, ...)}), the deadline timer, and what to do when the call ends
 * ({@link #onEnded()}) or the caller gives up on it ({@link #onCancelledByCaller()}). It reports what the peer
 * sends through the methods below, as a stream of events: {@link #onResponseMetadata}, then
 * {@link #onMessage} (a message, possibly with the end of the stream) and/or {@link #onStatus} (the end with a
 * status). A unary response is one message with the end marker; an error is a status alone. A server-streaming
 * call (not offered to users yet) will deliver several messages before its end without a change to this
 * contract; today a unary call that gets a message without the end fails with INTERNAL.
 *
 * <p>Derived stages ({@code thenApply} etc.) are plain CompletableFutures.
 */
public abstract class ClientCall<Resp> extends CompletableFuture<Resp>
    implements LoadBalancer.PickArgs {
  @SuppressWarnings("rawtypes")
  private static final AtomicIntegerFieldUpdater<ClientCall> FINISHED =
      AtomicIntegerFieldUpdater.newUpdater(ClientCall.class, "finished");
  @SuppressWarnings("rawtypes")
  private static final AtomicReferenceFieldUpdater<ClientCall, ClientSubchannel> COUNTED =
      AtomicReferenceFieldUpdater.newUpdater(ClientCall.class, ClientSubchannel.class, "countedOn");

  private final ClientCallRuntime runtime;
  private final MethodDescriptor<?, Resp> method;
  private final @Nullable Deadline deadline;
  private final long startNanos;
  private final @Nullable Consumer<Metadata> responseMetadata;
  private final CallRecorder metrics;
  /** Where the response is decoded and the future completed; null for the thread that ends the call. */
  private final @Nullable Executor executor;
  /** The call's options after the interceptors; set by the core before the transport starts the call. */
  private CallOptions options = CallOptions.DEFAULT;
  private int requestSize = -1;
  private int responseSize = -1;
  /** The endpoint the call is counted on, when the client has several; uncounted when the call ends. */
  private volatile @Nullable ClientSubchannel countedOn;
  private volatile int finished;
  /** The caller's request, kept for another attempt; null until {@link #start} (and for a call never started). */
  private @Nullable Object request;
  /** Attempts sent again because no handler saw the request (NOT_SENT, REFUSED); see {@link #onClose}. */
  private int resends;
  /** Attempts made again after one that may have run failed with UNAVAILABLE (idempotent methods only). */
  private int retries;
  /**
   * Why the previous attempt could not be sent, or was refused by a limit of its endpoint, while the next one is
   * being picked; else null. Such a call goes only to another endpoint (see {@link #unsentCause}).
   */
  private @Nullable Status unsent;
  /** The endpoint the core picked for the current (or last) attempt; null before the first pick. */
  private @Nullable ClientSubchannel picked;

  /**
   * How many times a call whose request no handler saw is sent again, without the caller seeing it: bounds the
   * loop when every connection refuses (each re-send goes through the balancer again, so to another endpoint
   * when there is one).
   */
  public static final int MAX_RESENDS = 3;

  /**
   * @param runtime the client's runtime ({@code RpcClient.runtime()})
   * @param deadline when the call must end, or null for none
   * @param responseMetadata gets the server's response metadata before the future completes, or null
   * @param executor where the future completes, or null for the thread that ends the call
   */
  protected ClientCall(ClientCallRuntime runtime, MethodDescriptor<?, Resp> method, @Nullable Deadline deadline,
      @Nullable Consumer<Metadata> responseMetadata, @Nullable Executor executor) {
    this.runtime = runtime;
    this.method = method;
    this.deadline = deadline;
    this.responseMetadata = responseMetadata;
    this.executor = executor;
    this.metrics = runtime.metricsFor(method);
    this.startNanos = System.nanoTime();
  }

  public final MethodDescriptor<?, Resp> method() {
    return method;
  }

  /** Set by the core ({@code RpcClient}) before it hands the call to the transport. */
  public final void options(CallOptions options) {
    this.options = options;
  }

  /** The call's options (after the interceptors), as the core started it. */
  public final CallOptions options() {
    return options;
  }

  @Override
  public final Metadata metadata() {
    return options.metadata();
  }

  @Override
  public final @Nullable String hashKey() {
    return options.hashKey();
  }

  /** When the call must end, or null for none. */
  public final @Nullable Deadline deadline() {
    return deadline;
  }

  public final boolean isOneway() {
    return method.type() == MethodType.ONEWAY;
  }

  /** When the call started, in {@link System#nanoTime()}. */
  public final long startNanos() {
    return startNanos;
  }

  /** The encoded request body's size, for the meters; set by the transport before it sends the request. */
  public final void requestSize(int bytes) {
    requestSize = bytes;
  }

  /**
   * The core's: counts the attempt on {@code s} until it ends (the core's pick, when the client has several
   * endpoints).
   */
  public final void countOn(ClientSubchannel s) {
    s.callStarted();
    countedOn = s;
    if (isFinished() && COUNTED.compareAndSet(this, s, null)) {
      // ended meanwhile (cancelled by another thread before it was routed)
      s.callEnded(Status.CANCELLED, System.nanoTime() - startNanos);
    }
  }

  /**
   * Set by the core: starts the call's first attempt with {@code request} (kept for later attempts). A
   * marshaller's exception fails the call with INVALID_ARGUMENT or INTERNAL, a {@link FrameSizes.TooLarge} with
   * its RESOURCE_EXHAUSTED status and "not sent", a {@link io.petrel.rpc.StatusException} with its status.
   */
  public final void start(Object request) {
    this.request = request;
    startAttempt(request);
  }

  private void startAttempt(Object req) {
    try {
      runtime.startAttempt(this, req);
    } catch (Throwable t) {
      startFailed(t);
    }
  }

  /**
   * The core's: starting an attempt threw {@code t} (the transport encodes before it hands the attempt on): a
   * {@link FrameSizes.TooLarge} fails the call with its RESOURCE_EXHAUSTED status and "not sent", a
   * {@link io.petrel.rpc.StatusException} with its status, a marshaller's exception with INVALID_ARGUMENT or
   * INTERNAL.
   */
  public final void startFailed(Throwable t) {
    if (t instanceof FrameSizes.TooLarge e) {
      fail(e.status.augmentDescription("not sent")); // over maxFrameSize or maxMetadataSize
    } else if (t instanceof io.petrel.rpc.StatusException e) {
      fail(e.status());
    } else {
      // The request's marshaller failed.
      Status.Code code = t instanceof IllegalArgumentException || t instanceof NullPointerException
          ? Status.Code.INVALID_ARGUMENT : Status.Code.INTERNAL;
      fail(code.toStatus().withDescription("cannot encode the request of " + method.fullName() + ": "
          + Status.describe(t)).withCause(t));
    }
  }

  /**
   * Why the call's previous attempt could not be sent (NOT_SENT), or the status with which its endpoint refused
   * it by a limit (REFUSED, not UNAVAILABLE), or null: such a call is sent again only to another endpoint (its
   * own just failed to connect, and waited for that attempt; or just said it is full), and fails with this
   * status when the balancer has no other.
   */
  public final @Nullable Status unsentCause() {
    return unsent;
  }

  /** The endpoint picked for the current or last attempt, or null (none yet, or an in-process client). */
  public final @Nullable ClientSubchannel picked() {
    return picked;
  }

  /** The core's: the endpoint picked for the attempt starting now. */
  public final void picked(ClientSubchannel s) {
    picked = s;
  }

  /** Attempts made so far, the first included (tests, messages). */
  public final int attempts() {
    return 1 + resends + retries;
  }

  /** True once the call has ended (any thread). */
  public final boolean isFinished() {
    return finished != 0;
  }

  // ---- the transport's hooks ----

  /**
   * The call has ended, whoever ended it: the transport's bookkeeping (cancel its deadline timer, uncount it
   * from its endpoint). Called exactly once, from any thread, before the future completes.
   */
  protected void onEnded() {}

  /**
   * The current attempt failed and the core sends the call again: forget everything about the attempt (its
   * connection, request id, timer, queue place, encoded request) so that {@code startCall} can send it anew.
   * The transport's bookkeeping of the failed attempt is done already (it reported the end). The default does
   * nothing.
   */
  protected void onNextAttempt() {}

  /**
   * The caller ended the call ({@code cancel}, or completing the future by hand) after it was handed to the
   * transport: stop waiting for it, tell the server if it was sent. Any thread; after {@link #onEnded()}.
   */
  protected void onCancelledByCaller() {}

  /**
   * The call's deadline ended it ({@link #deadlineExceeded}): called after {@link #onEnded()} and before the
   * future fails, so that whatever the transport cancels is cancelled before the caller hears of it.
   */
  protected void onDeadlineExceeded() {}

  // ---- events from the transport ----

  /** The server's response metadata: handed to the call's listener, if any, before the call completes. */
  public final void onResponseMetadata(Metadata md) {
    if (responseMetadata != null && !isFinished()) {
      try {
        responseMetadata.accept(md);
      } catch (RuntimeException e) {
        LoggerFactory.getLogger(ClientCall.class).warn("response metadata listener of {} threw",
            method.fullName(), e);
      }
    }
  }

  /**
   * A response message, and whether it ends the server's stream with OK. The transport keeps ownership of
   * {@code body}: the call decodes it, or copies its bytes for the executor, before returning.
   *
   * @param wakeChain the transport thread's chain for waking blocking callers in batches, or null to hand the
   *     decoding to the executor at once
   */
  @SuppressWarnings("unchecked")
  public final void onMessage(ByteBuf body, boolean endOfStream, @Nullable WakeChain wakeChain) {
    if (!endOfStream) {
      fail(Status.INTERNAL.withDescription("the server sent " + method.fullName() + " a response message that"
          + " does not end the call; a " + method.type() + " method has exactly one (is the server streaming?)"));
      return;
    }
    responseSize = body.readableBytes();
    Executor e = executor;
    if (e == null) {
      Resp value;
      try {
        value = (Resp) Objects.requireNonNull(method.responseMarshaller(), "a call with a response has its marshaller")
            .read(body);
      } catch (Throwable t) {
        fail(decodeFailure(t));
        return;
      }
      if (tryFinish(Status.OK)) {
        completeDetached(value, null);
      }
      return;
    }
    if (!claim(Status.OK)) {
      return;
    }
    // The executor may be a caller waiting (a blocking call) or a pool that could drop the task: it gets the
    // bytes, not the buffer, so nothing can leak whatever it does with the task.
    byte[] bytes = ByteBufUtil.getBytes(body);
    Runnable task = () -> decodeAndComplete(bytes);
    if (wakeChain != null && e instanceof ThreadlessExecutor waiter) {
      wakeChain.post(waiter, task); // a blocking caller: woken by the chain, see WakeChain
      return;
    }
    completeOn(e, task);
  }

  /**
   * The end of the call with the server's status (an error, in place of a response). {@code peer} names the
   * server in the message of an UNIMPLEMENTED status.
   */
  public final void onStatus(Status status, String peer) {
    if (isFinished()) {
      return;
    }
    Status s = status;
    if (s.code() == Status.Code.OK) {
      s = Status.INTERNAL.withDescription("the server ended " + method.fullName() + " with OK but sent no"
          + " response message");
    } else if (s.code() == Status.Code.UNIMPLEMENTED) {
      s = s.withDescription(method.fullName() + " is not implemented by " + peer + ": " + s.description());
    }
    onClose(s, AttemptProgress.PROCESSED); // the server answered: its handler may have run
  }

  /**
   * The current attempt ended without a response, with {@code status} (not OK), having got as far as
   * {@code progress}. The core decides: an UNAVAILABLE attempt whose request no handler saw (NOT_SENT, REFUSED)
   * is sent again, through the balancer, up to {@link #MAX_RESENDS} times (a fail-fast call that could not be
   * sent is not); an attempt REFUSED with another status (a limit of the server: its pool, its calls per
   * connection) is sent again the same way but only to another endpoint, since its own just said it is full,
   * and only while the retry budget allows (such a refusal takes a token, as a failure does), and with none the
   * call fails with the server's status as it came; one that may have run (PROCESSED) is sent
   * again only if its method is idempotent and it failed with UNAVAILABLE, up to the client's
   * {@code maxRetries} and while its retry budget allows; always within the call's deadline. Otherwise the call
   * fails with {@code status}. Any thread; call it holding no lock (another attempt starts here).
   */
  public final void onClose(Status status, AttemptProgress progress) {
    if (isFinished()) {
      return;
    }
    if (status.code() == Status.Code.UNAVAILABLE) {
      runtime.attemptFailed();
      if (anotherAttempt(status, progress)) {
        return;
      }
    } else if (progress == AttemptProgress.REFUSED) {
      // Refused by a limit, unread: another endpoint may have room. It takes a retry token like a failure, so
      // that a fleet refusing everything (overloaded) does not get every call up to 1 + MAX_RESENDS times.
      runtime.attemptFailed();
      if (anotherAttempt(status, progress)) {
        return;
      }
    }
    fail(status);
  }

  /** Starts another attempt if the rules allow one (see {@link #onClose}); false if the call is to fail. */
  private boolean anotherAttempt(Status status, AttemptProgress progress) {
    Object req = request;
    if (req == null || isOneway() || runtime.isTerminating()) {
      return false;
    }
    Deadline d = deadline;
    if (d != null && d.isExpired()) {
      return false;
    }
    // Refused by a limit: only another endpoint may take it, and a client without endpoints has no other.
    boolean full = progress == AttemptProgress.REFUSED && status.code() != Status.Code.UNAVAILABLE;
    if (full && (picked == null || !runtime.mayRetry())) {
      return false;
    }
    if (progress != AttemptProgress.PROCESSED && resends < MAX_RESENDS
        && !(progress == AttemptProgress.NOT_SENT && options.isFailFast())) {
      resends++;
    } else if (!full && method.isIdempotent() && retries < runtime.maxRetries() && runtime.mayRetry()) {
      retries++;
    } else {
      return false;
    }
    // The failed attempt's endpoint hears its outcome; the next attempt is counted where it is picked.
    ClientSubchannel s = countedOn;
    if (s != null && COUNTED.compareAndSet(this, s, null)) {
      s.callEnded(status, System.nanoTime() - startNanos);
    }
    onNextAttempt();
    unsent = progress == AttemptProgress.NOT_SENT || full ? status : null;
    if (!isFinished()) {
      startAttempt(req);
    }
    return true;
  }

  /** A oneway request was handed over (written, or given to the in-process server): the call is done. */
  public final void onSent() {
    if (tryFinish(Status.OK)) {
      completeDetached(null, null);
    }
  }

  /**
   * The call's deadline passed: it fails with DEADLINE_EXCEEDED, saying how long it waited and where;
   * {@code detail} adds what the transport knows (" (the request was not sent yet)"). Returns false if the call
   * had ended already.
   */
  public final boolean deadlineExceeded(String detail) {
    if (isFinished()) {
      return false;
    }
    long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    Status status = Status.DEADLINE_EXCEEDED.withDescription("deadline exceeded after " + waitedMs
        + " ms waiting for " + method.fullName() + " from " + runtime.target() + detail);
    if (!tryFinish(status)) {
      return false;
    }
    onDeadlineExceeded();
    completeFailed(status);
    return true;
  }

  /** Ends the call with {@code status}; false if it had ended already. */
  public final boolean fail(Status status) {
    if (!tryFinish(status)) {
      return false;
    }
    completeFailed(status);
    return true;
  }

  private void completeFailed(Status status) {
    Executor e = executor;
    if (e == null) {
      completeDetached(null, status.asException());
    } else {
      completeOn(e, () -> super.completeExceptionally(status.asException()));
    }
  }

  // ---- the caller's side ----

  @Override
  public final boolean cancel(boolean mayInterruptIfRunning) {
    if (!tryFinish(Status.CANCELLED)) {
      return false;
    }
    onCancelledByCaller();
    return super.cancel(mayInterruptIfRunning);
  }

  @Override
  public final boolean complete(Resp value) {
    // Completing by hand ends the call for the transport too.
    if (!tryFinish(Status.OK)) {
      return false;
    }
    onCancelledByCaller();
    return super.complete(value);
  }

  @Override
  public final boolean completeExceptionally(Throwable ex) {
    if (!tryFinish(Status.fromThrowable(ex))) {
      return false;
    }
    onCancelledByCaller();
    return super.completeExceptionally(ex);
  }

  @Override
  public <U> CompletableFuture<U> newIncompleteFuture() {
    return new CompletableFuture<>();
  }

  // ---- internals ----

  /**
   * Ends the call for the client (no longer pending, the transport told, its endpoint's balancer told of
   * {@code outcome}); the winner of this race completes the future. Returns false if the call had already ended.
   */
  private boolean claim(Status outcome) {
    if (!FINISHED.compareAndSet(this, 0, 1)) {
      return false;
    }
    if (outcome.code() == Status.Code.OK) {
      runtime.callSucceeded();
    }
    try {
      onEnded();
    } finally {
      ClientSubchannel s = countedOn;
      if (s != null && COUNTED.compareAndSet(this, s, null)) {
        s.callEnded(outcome, System.nanoTime() - startNanos);
      }
      runtime.callEnded();
    }
    return true;
  }

  private boolean tryFinish(Status outcome) {
    if (!claim(outcome)) {
      return false;
    }
    record(outcome.code());
    return true;
  }

  private void record(Status.Code code) {
    metrics.record(code, System.nanoTime() - startNanos, requestSize, responseSize);
  }

  @SuppressWarnings("unchecked")
  private void decodeAndComplete(byte[] bytes) {
    ByteBuf in = Unpooled.wrappedBuffer(bytes);
    Resp value;
    try {
      value = (Resp) Objects.requireNonNull(method.responseMarshaller(), "a call with a response has its marshaller")
          .read(in);
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

  /** Runs {@code task} on the call's executor, or here if that executor refuses it (shut down). */
  private static void completeOn(Executor e, Runnable task) {
    try {
      e.execute(task);
    } catch (RejectedExecutionException rejected) {
      task.run(); // complete here rather than never
    }
  }

  /**
   * Completes the future on this thread with no server call attached: when a server's thread ends the call (an
   * in-process server's business thread, or a handler calling out in direct mode), the caller's callbacks must
   * not see that server call's context. On an event loop the check is one array read.
   */
  private void completeDetached(@Nullable Resp value, @Nullable Throwable error) {
    ServerContext serving = ServerContext.current();
    if (serving != null) {
      ServerContext.restore(null);
    }
    try {
      if (error == null) {
        super.complete(value);
      } else {
        super.completeExceptionally(error);
      }
    } finally {
      if (serving != null) {
        ServerContext.restore(serving);
      }
    }
  }
}
