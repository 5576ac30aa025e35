package io.petrel.rpc.internal;

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
import io.petrel.rpc.spi.AttemptProgress;
import io.petrel.rpc.spi.ClientStream;
import io.petrel.rpc.spi.ClientStreamListener;
import io.petrel.rpc.spi.ClientTransport;
import io.petrel.rpc.spi.Connection;
import io.petrel.rpc.spi.FrameSizes;
import io.petrel.rpc.LoadBalancer;
import java.util.List;
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
 * One logical client call from start to end, and the future its caller holds: the same for every transport. It
 * makes one attempt per try, each a {@link ClientStream} of the transport ({@link #startStream}), and hears each
 * attempt's response as the stream's {@link ClientStreamListener}: headers, messages, and one close with a status
 * and how far the attempt got, from which it decides whether to make another attempt ({@link #onClose}).
 *
 * <p>It ends exactly once, with a response, a status, or an end by the caller (cancel, or completing the future by
 * hand); the first to {@linkplain #claim claim} it wins and the others do nothing. On that end it is uncounted
 * from the client's pending calls and from its endpoint, its meters recorded, the current stream cancelled unless
 * the stream itself ended it, and its future completed on the call's executor (the call's own, else the client's
 * callback executor, else the thread that ended it).
 *
 * <p>A unary call sends one message and gets one message and a close with OK (or a close with an error); a
 * oneway call is closed with OK once its request is written. A server-streaming call (not offered to users yet)
 * would get several messages before its close through the same listener; today a second message fails a unary
 * call with INTERNAL.
 *
 * <p>Derived stages ({@code thenApply} etc.) are plain CompletableFutures.
 */
public class ClientCall<Resp> extends CompletableFuture<Resp>
    implements LoadBalancer.PickArgs, ClientStreamListener {
  @SuppressWarnings("rawtypes")
  private static final AtomicIntegerFieldUpdater<ClientCall> FINISHED =
      AtomicIntegerFieldUpdater.newUpdater(ClientCall.class, "finished");
  @SuppressWarnings("rawtypes")
  private static final AtomicReferenceFieldUpdater<ClientCall, ClientSubchannel> COUNTED =
      AtomicReferenceFieldUpdater.newUpdater(ClientCall.class, ClientSubchannel.class, "countedOn");

  private final ClientRuntime runtime;
  private final MethodDescriptor<?, Resp> method;
  private final @Nullable Deadline deadline;
  /** The served call whose deadline this call took, or null (see {@link #deadlineFrom}); set before it starts. */
  private @Nullable String deadlineFrom;
  private final long startNanos;
  private final @Nullable Consumer<Metadata> responseMetadata;
  private final CallMetrics metrics;
  /** Where the response is decoded and the future completed; null for the thread that ends the call. */
  private final @Nullable Executor executor;
  /** The call's options after the interceptors; set by the core before the first attempt. */
  private CallOptions options = CallOptions.DEFAULT;
  private int requestSize = -1;
  private int responseSize = -1;
  /** The endpoint the call is counted on, when the client has several; uncounted when the call ends. */
  private volatile @Nullable ClientSubchannel countedOn;
  private volatile int finished;
  /**
   * The current attempt's stream, or null before the first. Volatile: a caller that ends the call reads it after
   * its claim, and {@link #startStream} writes it before it looks whether the call ended, so that one of the two
   * sees the other and a stream never carries the request of an ended call on.
   */
  private volatile @Nullable ClientStream stream;
  /** The caller's request, kept for another attempt; null until {@link #start} (and for a call never started). */
  private @Nullable Object request;
  /** Set by {@link #start}: {@link #request} is the call's (null for a method without parameters). */
  private boolean started;
  /**
   * The current attempt's response message: decoded (no executor), or its bytes for the executor; meaningful
   * once {@link #received}. The stream's thread only.
   */
  private @Nullable Object response;
  private boolean received;
  /** Attempts sent again because no handler saw the request (NOT_SENT, REFUSED); see {@link #onClose}. */
  private int resends;
  /** Attempts made again after one that may have run failed with UNAVAILABLE (idempotent methods only). */
  private int retries;
  /** The call has been counted in {@code rpc.client.retries} with reason not_sent ({@link #countsAgain}). */
  private boolean countedNotSent;
  /**
   * Why the previous attempt could not be sent, or was refused by a limit of its endpoint, while the next one is
   * being picked; else null. Such a call goes only to another endpoint (see {@link #unsentCause}).
   */
  private @Nullable Status unsent;
  /** The endpoint the core picked for the current (or last) attempt; null before the first pick. */
  private @Nullable ClientSubchannel picked;
  /** The endpoints this call's attempts could not be sent to (made at the first such attempt); else null. */
  private @Nullable List<ClientSubchannel> unsentOn;

  /**
   * How many times a call whose request no handler saw is sent again, without the caller seeing it: bounds the
   * loop when every connection refuses (each re-send goes through the balancer again, so to another endpoint
   * when there is one).
   */
  public static final int MAX_RESENDS = 3;

  /**
   * How many times in all a call whose request was never sent (NOT_SENT: its endpoint could not be reached) may be
   * sent again, past {@link #MAX_RESENDS}, while an endpoint it has not been refused by may still take it
   * ({@link ClientRuntime#anotherEndpointMayTakeIt}: connected, or not known to fail). Each failed endpoint backs
   * off and the balancers skip it, so the call moves over the endpoints not yet known to be down until one takes
   * it or its deadline passes (the balancer may offer one it tried before; that costs an attempt, not a loop).
   * Not for calls with a hash key (they stay with their balancer's endpoint) nor fail-fast ones. A client given
   * ten dead addresses and one live, never started, failed its first calls after three refused connects.
   */
  public static final int MAX_UNSENT_RESENDS = 64;

  /**
   * @param runtime the client's runtime
   * @param deadline when the call must end, or null for none
   * @param responseMetadata gets the server's response metadata before the future completes, or null
   * @param executor where the future completes, or null for the thread that ends the call
   */
  public ClientCall(ClientRuntime runtime, MethodDescriptor<?, Resp> method, @Nullable Deadline deadline,
      @Nullable Consumer<Metadata> responseMetadata, @Nullable Executor executor) {
    this(runtime, method, deadline, responseMetadata, executor, runtime.metricsFor(method), System.nanoTime());
  }

  /**
   * As above, for a call that started at {@code startNanos} (the {@link System#nanoTime()} reading its deadline was
   * computed from, so that "deadline exceeded after N ms" counts the whole time the caller gave it).
   */
  ClientCall(ClientRuntime runtime, MethodDescriptor<?, Resp> method, @Nullable Deadline deadline,
      @Nullable Consumer<Metadata> responseMetadata, @Nullable Executor executor, long startNanos) {
    this(runtime, method, deadline, responseMetadata, executor, runtime.metricsFor(method), startNanos);
  }

  /**
   * A call whose end is recorded in {@code metrics}: {@link CallMetrics#NOOP} for an attempt of a hedged call
   * ({@link HedgedCall}), which records the call itself.
   */
  ClientCall(ClientRuntime runtime, MethodDescriptor<?, Resp> method, @Nullable Deadline deadline,
      @Nullable Consumer<Metadata> responseMetadata, @Nullable Executor executor, CallMetrics metrics) {
    this(runtime, method, deadline, responseMetadata, executor, metrics, System.nanoTime());
  }

  private ClientCall(ClientRuntime runtime, MethodDescriptor<?, Resp> method, @Nullable Deadline deadline,
      @Nullable Consumer<Metadata> responseMetadata, @Nullable Executor executor, CallMetrics metrics,
      long startNanos) {
    this.runtime = runtime;
    this.method = method;
    this.deadline = deadline;
    this.responseMetadata = responseMetadata;
    this.executor = executor;
    this.metrics = metrics;
    this.startNanos = startNanos;
  }

  /**
   * How many times an attempt that may have run and failed with UNAVAILABLE is made again: the client's
   * {@code maxRetries} for an idempotent method, else 0. An attempt of a hedged call overrides it with 0 (the hedged
   * call sends the next attempt itself); a request no handler saw is sent again all the same. Asked only after a
   * failed attempt.
   */
  int maxRetries() {
    return method.isIdempotent() ? runtime.maxRetries() : 0;
  }

  @Override
  public MethodDescriptor<?, Resp> method() {
    return method;
  }

  /**
   * Set by the core for a call made by a handler whose deadline is the one of the call it serves,
   * {@code servedMethod} (earlier than its own): its DEADLINE_EXCEEDED says where the deadline came from.
   */
  void deadlineFrom(String servedMethod) {
    this.deadlineFrom = servedMethod;
  }

  /** Set by the core ({@code RpcClient}) before it hands the call to the transport. */
  public void options(CallOptions options) {
    this.options = options;
  }

  /** The call's options (after the interceptors), as the core started it. */
  public CallOptions options() {
    return options;
  }

  @Override
  public Metadata metadata() {
    return options.metadata();
  }

  @Override
  public @Nullable String hashKey() {
    return options.hashKey();
  }

  /**
   * Whether the call's hash key holds it to the endpoint picked for it: it has one, and the client's balancer
   * sends calls by their key ({@link io.petrel.rpc.LoadBalancer#readsHashKey()}; not least_pending nor
   * round_robin, under which a key changes nothing).
   */
  public boolean heldToKey() {
    return options.hashKey() != null && runtime.balancerReadsHashKey();
  }

  /** When the call must end, or null for none. */
  public @Nullable Deadline deadline() {
    return deadline;
  }

  public boolean isOneway() {
    return method.type() == MethodType.ONEWAY;
  }

  /** When the call started, in {@link System#nanoTime()}. */
  public long startNanos() {
    return startNanos;
  }

  /**
   * The core's: counts the attempt on {@code s} until it ends (the core's pick, when the client has several
   * endpoints).
   */
  public void countOn(ClientSubchannel s) {
    s.callStarted();
    countedOn = s;
    if (isFinished() && COUNTED.compareAndSet(this, s, null)) {
      // ended meanwhile (cancelled by another thread before it was routed)
      s.callEnded(Status.CANCELLED, System.nanoTime() - startNanos);
    }
  }

  /**
   * Starts the call's first attempt with {@code request} (kept for later attempts). A marshaller's exception fails
   * the call with INVALID_ARGUMENT or INTERNAL, a {@link FrameSizes.TooLarge} with its RESOURCE_EXHAUSTED status
   * and "not sent", a {@link io.petrel.rpc.StatusException} with its status.
   */
  public void start(@Nullable Object request) {
    this.request = request;
    this.started = true;
    startAttempt(null);
  }

  /**
   * Starts the call's first attempt with {@code request} through {@code first} instead of the client's usual pick
   * (a hedge, which avoids the endpoints of the other attempts); later attempts take the usual way. Fails the call
   * as {@link #start} does when starting throws.
   */
  void start(@Nullable Object request, ClientRuntime.AttemptStarter first) {
    this.request = request;
    this.started = true;
    try {
      first.start(this, null);
    } catch (Throwable t) {
      startFailed(t);
    }
  }

  /** Starts an attempt: the first ({@code again} null), or one made again for that reason. */
  private void startAttempt(ClientRuntime.@Nullable Retry again) {
    try {
      runtime.startAttempt(this, again);
    } catch (Throwable t) {
      startFailed(t);
    }
  }

  /**
   * The core's: the current attempt goes to {@code connection} (null for a transport without endpoints): a new
   * stream of {@code transport}, which gets the request and the end of the request at once (a unary or oneway
   * call). Throws what encoding the request throws (see {@link #startFailed}); a call that ended meanwhile sends
   * nothing.
   */
  public void startStream(ClientTransport transport, @Nullable Connection connection) throws Exception {
    Object req = request; // null for a method whose request is null (no parameters)
    ClientStream s = transport.newStream(connection, method, options, deadline, this);
    stream = s; // volatile, then the look at finished: see the field
    if (isFinished()) {
      return; // ended by its caller before the stream existed: nothing is sent
    }
    requestSize = s.sendMessage(req);
    s.halfClose();
  }

  /**
   * The core's: starting an attempt threw {@code t} (the transport encodes the request as it is handed over): a
   * {@link FrameSizes.TooLarge} fails the call with its RESOURCE_EXHAUSTED status and "not sent", a
   * {@link io.petrel.rpc.StatusException} with its status, a marshaller's exception with INVALID_ARGUMENT or
   * INTERNAL.
   */
  public void startFailed(Throwable t) {
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
   * own just failed to connect, and the call waited for that attempt; or had no connection while another endpoint
   * was available, and the call did not wait; or just said it is full), and fails with this status when the
   * balancer has no other.
   */
  public @Nullable Status unsentCause() {
    return unsent;
  }

  /** The endpoint picked for the current or last attempt, or null (none yet, or an in-process client). */
  public @Nullable ClientSubchannel picked() {
    return picked;
  }

  /** The core's: the endpoint picked for the attempt starting now. */
  public void picked(ClientSubchannel s) {
    picked = s;
  }

  /** The encoded request's size in bytes, or -1 before it was encoded (a hedged call's meters). */
  int requestSize() {
    return requestSize;
  }

  /** The response message's size in bytes, or -1 before one came (a hedged call's meters). */
  int responseSize() {
    return responseSize;
  }

  /** Attempts made so far, the first included (tests, messages). */
  public int attempts() {
    return 1 + resends + retries;
  }

  /** The current (or last) attempt's stream, or null before the first (tests). */
  public @Nullable ClientStream stream() {
    return stream;
  }

  /** True once the call has ended (any thread). */
  public boolean isFinished() {
    return finished != 0;
  }

  // ---- the current stream's events ----

  /** The server's response metadata: handed to the call's listener, if any, before the call completes. */
  @Override
  public void onHeaders(Metadata md) {
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
   * A response message: decoded here when the call has no executor, else its bytes are kept for the executor
   * (the transport keeps {@code body}). The call completes with it when the stream closes with OK. A unary method
   * has exactly one: a second fails the call with INTERNAL.
   */
  @Override
  public void onMessage(ByteBuf body) {
    if (isFinished()) {
      return;
    }
    if (received || isOneway()) {
      fail(Status.INTERNAL.withDescription("the server sent " + method.fullName() + " more than one response"
          + " message; a " + method.type() + " method has " + (isOneway() ? "none" : "exactly one")
          + " (is the server streaming?)"));
      return;
    }
    responseSize = body.readableBytes();
    if (executor == null) {
      try {
        response = Objects.requireNonNull(method.responseMarshaller(), "a call with a response has its marshaller")
            .read(body);
      } catch (Throwable t) {
        fail(decodeFailure(t));
        return;
      }
    } else {
      // The executor may be a caller waiting (a blocking call) or a pool that could drop the task: it gets the
      // bytes, not the buffer, so nothing can leak whatever it does with the task.
      response = ByteBufUtil.getBytes(body);
    }
    received = true;
  }

  /**
   * The current attempt ended with {@code status}, having got as far as {@code progress}. With OK the call
   * completes with the response message (a oneway with null; a unary call without one fails with INTERNAL).
   * Otherwise the core decides: an UNAVAILABLE attempt whose request no handler saw (NOT_SENT, REFUSED) is sent
   * again, through the balancer, up to {@link #MAX_RESENDS} times (a fail-fast call that could not be sent is
   * not); an attempt REFUSED with another status (a limit of the server: its pool, its calls per connection) is
   * sent again the same way but only to another endpoint, since its own just said it is full, and only while the
   * retry budget allows (such a refusal takes a token, as a failure does), and with none the call fails with the
   * server's status as it came; one that may have run (PROCESSED) is sent again only if its method is idempotent
   * and it failed with UNAVAILABLE, up to the client's {@code maxRetries} and while its retry budget allows;
   * always within the call's deadline. Otherwise the call fails with {@code status}. Any thread; call it holding
   * no lock (another attempt starts here).
   */
  @Override
  public void onClose(Status status, Metadata trailers, AttemptProgress progress) {
    if (isFinished()) {
      return;
    }
    if (!trailers.isEmpty()) {
      onHeaders(trailers);
    }
    Status s = status;
    if (s.code() == Status.Code.OK) {
      if (isOneway()) {
        if (tryFinish(Status.OK, true)) {
          completeDetached(null, null);
        }
        return;
      }
      if (received) {
        succeeded();
        return;
      }
      s = Status.INTERNAL.withDescription("the server ended " + method.fullName() + " with OK but sent no"
          + " response message");
    } else if (s.code() == Status.Code.UNIMPLEMENTED && progress == AttemptProgress.PROCESSED) {
      ClientStream st = stream;
      s = s.withDescription(method.fullName() + " is not implemented by " + (st == null ? runtime.target()
          : st.peer()) + ": " + s.description());
    }
    if (s.code() == Status.Code.UNAVAILABLE) {
      if (progress != AttemptProgress.NOT_SENT) {
        // An attempt that was never sent takes no token of the retry budget: it put no load on a server, and
        // connect attempts are bounded by each endpoint's backoff. Counted, 64 calls moving on over dead addresses
        // (205 attempts) took the bucket from 100 tokens to 0.7, stopping every retry and hedge of the client.
        runtime.attemptFailed();
      }
      if (anotherAttempt(s, progress)) {
        return;
      }
      int walked = unsentEndpoints();
      if (progress == AttemptProgress.NOT_SENT && walked > 1) {
        String d = s.description();
        s = s.withDescription((d == null ? "" : d + " ") + "(the call could not reach any of the " + walked
            + " endpoints it tried)");
      }
    } else if (progress == AttemptProgress.REFUSED) {
      // Refused by a limit, unread: another endpoint may have room. It takes a retry token like a failure, so
      // that a fleet refusing everything (overloaded) does not get every call up to 1 + MAX_RESENDS times; and its
      // endpoint pauses, so that the balancers send the next calls elsewhere (see ClientSubchannel.refused). Counted
      // only with several endpoints, where there is an elsewhere.
      ClientSubchannel p = countedOn;
      if (p != null) {
        p.refused();
      }
      runtime.attemptFailed();
      if (anotherAttempt(s, progress)) {
        return;
      }
    }
    if (tryFinish(s, true)) {
      completeFailed(s);
    }
  }

  /** The stream's transport enforced the deadline: see {@link #deadlineExceeded}. */
  @Override
  public void onDeadlineExceeded(String detail) {
    deadlineExceeded(detail, true);
  }

  /** The stream closed with OK after its message: the call completes with it, decoded here or on the executor. */
  @SuppressWarnings("unchecked")
  private void succeeded() {
    Object r = response;
    Executor e = executor;
    if (e == null) {
      if (tryFinish(Status.OK, true)) {
        completeDetached((Resp) r, null);
      }
      return;
    }
    if (!claim(Status.OK, true)) {
      return;
    }
    byte[] bytes = (byte[]) Objects.requireNonNull(r, "the response's bytes, kept for the executor");
    Runnable task = () -> decodeAndComplete(bytes);
    ClientStream s = stream;
    if (e instanceof ThreadlessExecutor waiter && s != null && s.wakeBatch() instanceof WakeChain chain) {
      chain.post(waiter, task); // a blocking caller: woken by the chain, see WakeChain
      return;
    }
    completeOn(e, task);
  }

  /**
   * Whether a connection slot that has no connection for this attempt may end it NOT_SENT, to be sent again through
   * the balancer to another endpoint, rather than make it wait for a connection: true when it would be sent again,
   * unless the call must stay on its endpoint (a hash key) or was sent there on purpose (a hedge's attempt, which
   * avoids its siblings' endpoints).
   */
  boolean mayMoveElsewhere() {
    Deadline d = deadline;
    return started && !runtime.isTerminating() && resends < MAX_RESENDS && !options.isFailFast()
        && (d == null || !d.isExpired()) && !isFinished() && !heldToKey() && !isHedgeAttempt();
  }

  /** True for an attempt of a {@link HedgedCall}. */
  boolean isHedgeAttempt() {
    return false;
  }

  /**
   * Whether an attempt made again for {@code why}, which has an endpoint to go to, counts in
   * {@code rpc.client.retries}: refused and unavailable, each time; not_sent, once per call, however many times the
   * call went on (a call waiting for a connect attempt is moved each time another endpoint becomes READY, and one
   * that could not be sent tries endpoint after endpoint): 9 calls moved twice counted 16. On the thread that
   * starts the attempt (one at a time per call).
   */
  boolean countsAgain(ClientRuntime.Retry why) {
    if (why != ClientRuntime.Retry.NOT_SENT) {
      return true;
    }
    if (countedNotSent) {
      return false;
    }
    countedNotSent = true;
    return true;
  }

  /** How many endpoints this call's attempts could not be sent to (NOT_SENT there). */
  public int unsentEndpoints() {
    List<ClientSubchannel> l = unsentOn;
    return l == null ? 0 : l.size();
  }

  /** The endpoints this call's attempts could not be sent to, {@code failed} (the last one's) added. */
  private List<ClientSubchannel> unsentOn(@Nullable ClientSubchannel failed) {
    List<ClientSubchannel> l = unsentOn;
    if (l == null) {
      l = new java.util.ArrayList<>(4);
      unsentOn = l;
    }
    if (failed != null && !l.contains(failed)) {
      l.add(failed);
    }
    return l;
  }

  /** Starts another attempt if the rules allow one (see {@link #onClose}); false if the call is to fail. */
  private boolean anotherAttempt(Status status, AttemptProgress progress) {
    // Not request == null: a method without parameters sends a null request, and its calls are sent again too.
    // A oneway call whose request no handler saw is sent again as well (else a GOAWAY lost it without a word); one
    // that may have run never is.
    if (!started || runtime.isTerminating()) {
      return false;
    }
    Deadline d = deadline;
    if (d != null && d.isExpired()) {
      return false;
    }
    // Refused by a limit: only another endpoint may take it, and a client without endpoints has no other.
    boolean full = progress == AttemptProgress.REFUSED && status.code() != Status.Code.UNAVAILABLE;
    if (full && picked == null) {
      return false;
    }
    if (full && !runtime.mayRetry()) {
      if (resends < MAX_RESENDS && runtime.hasSeveralEndpoints()) {
        runtime.retryThrottled(true); // it would have been sent to another endpoint but for the budget
      }
      return false;
    }
    List<ClientSubchannel> tried = progress == AttemptProgress.NOT_SENT ? unsentOn(picked) : List.of();
    boolean unsentFailFast = progress == AttemptProgress.NOT_SENT && options.isFailFast();
    ClientRuntime.Retry again;
    if (progress != AttemptProgress.PROCESSED && !unsentFailFast && (resends < MAX_RESENDS
        || (progress == AttemptProgress.NOT_SENT && resends < MAX_UNSENT_RESENDS && !heldToKey()
            && runtime.anotherEndpointMayTakeIt(tried)))) {
      resends++;
      again = progress == AttemptProgress.NOT_SENT ? ClientRuntime.Retry.NOT_SENT : ClientRuntime.Retry.REFUSED;
    } else if (!full && !isOneway() && retries < maxRetries()) {
      if (!runtime.mayRetry()) {
        runtime.retryThrottled(false);
        return false;
      }
      retries++;
      again = ClientRuntime.Retry.UNAVAILABLE;
    } else {
      return false;
    }
    // The failed attempt's endpoint hears its outcome; the next attempt is counted where it is picked.
    ClientSubchannel s = countedOn;
    if (s != null && COUNTED.compareAndSet(this, s, null)) {
      s.callEnded(status, System.nanoTime() - startNanos);
    }
    response = null;
    received = false;
    unsent = progress == AttemptProgress.NOT_SENT || full ? status : null;
    if (!isFinished()) {
      startAttempt(again); // counted in rpc.client.retries once an endpoint is picked for it
    }
    return true;
  }

  /** What a DEADLINE_EXCEEDED adds for a call that took the deadline of the call it was made for. */
  static String inheritedDeadline(String servedMethod) {
    return "; the deadline was that of " + servedMethod + ", the call this one was made for (set by its caller,"
        + " no later than this call's own)";
  }

  /**
   * The call's deadline passed before a connection took it (the core's own timer): it fails with
   * DEADLINE_EXCEEDED, saying how long it waited and where; {@code detail} adds why (" (the request was not sent
   * yet)"). Returns false if the call had ended already.
   */
  public boolean deadlineExceeded(String detail) {
    return deadlineExceeded(detail, false);
  }

  private boolean deadlineExceeded(String detail, boolean byStream) {
    if (isFinished()) {
      return false;
    }
    long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    String from = deadlineFrom;
    ClientSubchannel at = picked;
    String target = runtime.target();
    // Sent, to one of several endpoints: name the one that did not answer (a frozen server, say).
    String where = detail.isEmpty() && at != null && !target.equals(at.endpoint().authority())
        ? " (sent to " + at.endpoint().authority() + ")" : "";
    Status status = Status.DEADLINE_EXCEEDED.withDescription("deadline exceeded after " + waitedMs
        + " ms waiting for " + method.fullName() + " from " + target + where + detail
        + (from == null ? "" : inheritedDeadline(from)));
    if (!tryFinish(status, byStream)) {
      return false;
    }
    completeFailed(status);
    return true;
  }

  /**
   * The core ends the call with {@code status} (its stream, if any, is cancelled); false if it had ended already.
   */
  public boolean fail(Status status) {
    if (!tryFinish(status, false)) {
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
  public boolean cancel(boolean mayInterruptIfRunning) {
    if (!tryFinish(Status.CANCELLED, false)) {
      return false;
    }
    return super.cancel(mayInterruptIfRunning);
  }

  @Override
  public boolean complete(Resp value) {
    // Completing by hand ends the call for the transport too.
    if (!tryFinish(Status.OK, false)) {
      return false;
    }
    return super.complete(value);
  }

  @Override
  public boolean completeExceptionally(Throwable ex) {
    if (!tryFinish(Status.fromThrowable(ex), false)) {
      return false;
    }
    return super.completeExceptionally(ex);
  }

  @Override
  public <U> CompletableFuture<U> newIncompleteFuture() {
    return new CompletableFuture<>();
  }

  // ---- internals ----

  /**
   * Ends the call for the client (no longer pending, its endpoint's balancer told of {@code outcome}, its stream
   * cancelled unless {@code byStream}: the stream itself ended it); the winner of this race completes the future.
   * Returns false if the call had ended already.
   */
  private boolean claim(Status outcome, boolean byStream) {
    if (!FINISHED.compareAndSet(this, 0, 1)) {
      return false;
    }
    if (outcome.code() == Status.Code.OK) {
      runtime.callSucceeded();
    }
    try {
      if (!byStream) {
        ClientStream st = stream;
        if (st != null) {
          st.cancel(outcome); // before the future completes: the transport stops first
        }
      }
    } finally {
      ClientSubchannel s = countedOn;
      if (s != null && COUNTED.compareAndSet(this, s, null)) {
        s.callEnded(outcome, System.nanoTime() - startNanos);
      }
      runtime.callEnded();
    }
    return true;
  }

  private boolean tryFinish(Status outcome, boolean byStream) {
    if (!claim(outcome, byStream)) {
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
