package io.petrel.rpc.internal;

import io.netty.util.concurrent.FastThreadLocalThread;
import io.netty.util.internal.ThreadExecutorMap;
import io.petrel.rpc.spi.RateLimitedLog;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.ClientInterceptor;
import io.petrel.rpc.Deadline;
import io.petrel.rpc.HedgingPolicy;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.MethodType;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.spi.ClientConfig;
import io.petrel.rpc.spi.ClientTransport;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.LoggerFactory;

/**
 * The client users hold, whatever the transport: the one implementation of {@link RpcClient}. It runs every call
 * (interceptors, the deadline, the pending-call limit, shutdown and termination, meters: {@link ClientRuntime};
 * each call's attempts and single completion: {@link ClientCall}), and owns the endpoints ({@link ClientEndpoints}: the resolver, one {@link InternalSubchannel} per endpoint with its
 * connections, their reconnect backoff and waiting calls, the load balancer), picks one per attempt, and hands
 * the attempt to a connection of the {@link ClientTransport} the builder made for it. Transports implement
 * {@link ClientTransport}; none subclasses {@link RpcClient}.
 */
public final class ClientChannel extends RpcClient {
  /**
   * How long after a blocking call's deadline the calling thread ends the call itself if the transport has
   * not (it normally ends it within a few milliseconds of the deadline).
   */
  static final long SELF_DEADLINE_MARGIN_NANOS = TimeUnit.MILLISECONDS.toNanos(15);

  private static final RateLimitedLog BLOCKING_ON_A_LOOP = new RateLimitedLog(LoggerFactory.getLogger(RpcClient.class));
  /**
   * Netty's {@code EventLoop} (netty-transport, which rpc-core does not depend on): a thread running one is an I/O
   * thread, unlike Netty's other executors (a DefaultEventExecutorGroup, where blocking is expected); null
   * without netty-transport, where no thread is an event loop.
   */
  private static final @Nullable Class<?> EVENT_LOOP = eventLoopClass();

  private static @Nullable Class<?> eventLoopClass() {
    try {
      return Class.forName("io.netty.channel.EventLoop", false, ClientChannel.class.getClassLoader());
    } catch (ClassNotFoundException | LinkageError e) {
      return null;
    }
  }

  private final ClientRuntime runtime;
  private final List<ClientInterceptor> interceptors;
  private final long defaultTimeoutNanos;
  private final boolean secure;
  private final ClientChain.Terminal terminal = new ClientChain.Terminal() {
    @Override
    public <Req, Resp> CompletableFuture<Resp> send(MethodDescriptor<Req, Resp> method, Req request,
        CallOptions options, Consumer<Metadata> responseMetadata) {
      return ClientChannel.this.send(method, request, options, responseMetadata);
    }

    @Override
    public boolean isSecure() {
      return secure;
    }
  };
  private final ClientTransport transport;
  /** The endpoints and their subchannels; null for a transport without endpoints (in-process). */
  private final @Nullable ClientEndpoints<InternalSubchannel> endpoints;
  private final ClientConfig config;
  /** The client's hedging policy, or null when it has none (or no endpoints: an in-process client never hedges). */
  private final @Nullable HedgingPolicy hedging;

  /**
   * @param secure what {@link #isSecure()} says: TLS configured, or a transport whose calls never leave the
   *     process
   * @param transport makes the transport with this client's runtime (once, here)
   */
  public ClientChannel(ClientConfig config, boolean secure, Function<ClientRuntime, ClientTransport> transport) {
    this.runtime = new ClientRuntime(config);
    this.runtime.terminator(this::terminate);
    this.runtime.attemptStarter(this::startAttempt);
    this.interceptors = config.interceptors();
    this.defaultTimeoutNanos = config.defaultTimeoutNanos();
    this.secure = secure;
    ClientTransport t = transport.apply(runtime);
    this.transport = t;
    this.config = config;
    if (config.resolver() != null) {
      java.util.concurrent.ScheduledExecutorService scheduler = t.scheduler();
      String stopped = "client '" + config.name() + "' is shut down";
      ClientEndpoints<InternalSubchannel> e = new ClientEndpoints<>(config,
          endpoint -> new InternalSubchannel(endpoint, t, scheduler, config, () -> stopped, this::subchannelsNow),
          new RateLimitedLog(LoggerFactory.getLogger(ClientEndpoints.class)));
      this.endpoints = e;
      runtime.endpoints(e); // for the re-send rules and the endpoints' meters
      runtime.balancerReadsHashKey(e.balancerReadsHashKey());
      e.start(); // a static resolver answers at once, on this thread
    } else {
      this.endpoints = null;
    }
    this.hedging = endpoints != null && config.hedging().isOn() ? config.hedging() : null;
  }

  /** The client's endpoints now (none before its resolver first answered, or without a resolver). */
  private List<InternalSubchannel> subchannelsNow() {
    ClientEndpoints<InternalSubchannel> e = endpoints;
    return e == null ? List.of() : e.subchannels();
  }

  /** The transport carrying this client's calls (for its own tests). */
  public static ClientTransport transportOf(RpcClient client) {
    return ((ClientChannel) client).transport;
  }

  /** The runtime of the client's calls (tests: the retry budget). */
  public static ClientRuntime runtimeOf(RpcClient client) {
    return ((ClientChannel) client).runtime;
  }

  /** The client's endpoints, or null for a transport without endpoints (tests, meters). */
  public static @Nullable ClientEndpoints<InternalSubchannel> endpointsOf(RpcClient client) {
    return ((ClientChannel) client).endpoints;
  }

  /**
   * Connects to every endpoint now and waits for each to answer (its server's first frame) or fail, within the
   * transport's timers (connect, TLS handshake) and the slot's (first frame), each the connect timeout. Succeeds when at least
   * one server answered; otherwise throws UNAVAILABLE naming each failure. Either way the client stays usable: an endpoint that
   * failed is in its backoff, as after any failed attempt, and later calls reach it once it is up. A client
   * dropped after a failed {@code build().start()} holds no connection and, once its backoff has passed, no
   * timer.
   */
  @Override
  public RpcClient start() {
    ClientEndpoints<InternalSubchannel> e = endpoints;
    if (e == null) {
      transport.start();
      return this;
    }
    List<InternalSubchannel> subs = e.subchannels();
    if (subs.isEmpty()) {
      throw e.noEndpoint("").asException();
    }
    List<CompletableFuture<?>> attempts = new ArrayList<>();
    List<String> owners = new ArrayList<>();
    for (InternalSubchannel sub : subs) {
      for (CompletableFuture<?> f : sub.connectNow()) {
        attempts.add(f);
        owners.add(sub.authority());
      }
    }
    // The transport's and the slot's timers end each attempt: the connect, the TLS handshake (with TLS), then the
    // server's first frame, each within connectTimeout.
    long waitMs = (config.tls() != null ? 3 : 2) * TimeUnit.NANOSECONDS.toMillis(config.connectTimeoutNanos()) + 1000;
    long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
    StatusException first = null;
    List<String> failures = new ArrayList<>();
    int ok = 0;
    for (int i = 0; i < attempts.size(); i++) {
      long left = Math.max(0, TimeUnit.NANOSECONDS.toMillis(until - System.nanoTime()));
      StatusException failure = null;
      try {
        attempts.get(i).get(left, TimeUnit.MILLISECONDS);
        ok++;
      } catch (TimeoutException t) {
        failure = Status.UNAVAILABLE.withDescription("cannot connect to " + owners.get(i) + " within " + waitMs
            + " ms").asException();
      } catch (InterruptedException ie) {
        Thread.currentThread().interrupt();
        throw Status.CANCELLED.withDescription("interrupted while connecting to " + config.target())
            .withCause(ie).asException();
      } catch (ExecutionException ee) {
        Throwable cause = ee.getCause();
        failure = cause instanceof StatusException se ? new StatusException(se.status()) // described; our stack
            : Status.UNAVAILABLE.withDescription("cannot connect to " + owners.get(i) + ": " + cause)
                .withCause(cause != null ? cause : ee).asException();
      }
      if (failure != null) {
        first = first == null ? failure : first;
        failures.add(failure.status().description());
      }
    }
    if (ok > 0) {
      if (!failures.isEmpty()) {
        LoggerFactory.getLogger(RpcClient.class).warn("client '{}' for {}: {} of {} connections failed at start,"
            + " calls go to the others: {}", config.name(), config.target(), failures.size(), attempts.size(),
            summarize(failures));
      }
      return this;
    }
    if (attempts.size() == 1 && first != null) {
      throw first;
    }
    throw Status.UNAVAILABLE.withDescription("cannot connect to any endpoint of " + config.target() + ": "
        + summarize(failures)).asException();
  }

  /**
   * The distinct failures, each once with how often it happened ("3 x cannot connect to h:7000 ...; ..."), at most
   * five of them: a client with thousands of connections must not write thousands of lines' worth into one.
   */
  public static String summarize(List<String> failures) {
    Map<String, Integer> counts = new LinkedHashMap<>();
    for (String f : failures) {
      counts.merge(f, 1, Integer::sum);
    }
    StringBuilder sb = new StringBuilder();
    int shown = 0;
    for (Map.Entry<String, Integer> en : counts.entrySet()) {
      if (shown == 5) {
        sb.append("; and ").append(counts.size() - shown).append(" other failures");
        break;
      }
      sb.append(shown == 0 ? "" : "; ").append(en.getValue() > 1 ? en.getValue() + " x " : "").append(en.getKey());
      shown++;
    }
    return sb.toString();
  }

  @Override
  public <Req, Resp> CompletableFuture<Resp> unaryCallAsync(MethodDescriptor<Req, Resp> method, Req request,
      CallOptions options) {
    if (method.type() != MethodType.UNARY) {
      throw new IllegalArgumentException(method.fullName() + " is " + method.type() + "; use oneway(...)");
    }
    return call(method, request, options);
  }

  @Override
  @SuppressWarnings("unchecked")
  public <Req> CompletableFuture<Void> oneway(MethodDescriptor<Req, ?> method, Req request, CallOptions options) {
    if (method.type() != MethodType.ONEWAY) {
      throw new IllegalArgumentException(method.fullName() + " is " + method.type() + "; use unaryCall(...)");
    }
    return (CompletableFuture<Void>) call(method, request, options);
  }

  private <Req, Resp> CompletableFuture<Resp> call(MethodDescriptor<Req, Resp> method, Req request,
      CallOptions options) {
    List<ClientInterceptor> perCall = options.interceptors();
    if (interceptors.isEmpty() && perCall.isEmpty()) {
      return send(method, request, options, options.responseMetadataListener());
    }
    return ClientChain.start(terminal, interceptors, perCall, method, request, options);
  }

  @Override
  public Deadline deadlineOf(MethodDescriptor<?, ?> method, CallOptions options) {
    return deadlineOf(method, options, System.nanoTime(), ServerContext.current());
  }

  /**
   * {@link #deadlineOf(MethodDescriptor, CallOptions)} of a call starting at {@code now}, made while serving
   * {@code serving} (null: not from a handler's thread).
   */
  private Deadline deadlineOf(MethodDescriptor<?, ?> method, CallOptions options, long now,
      @Nullable ServerContext serving) {
    long fallback = method.defaultTimeoutNanos() > 0 ? method.defaultTimeoutNanos() : defaultTimeoutNanos;
    Deadline d = options.effectiveDeadline(fallback, now);
    if (serving != null && serving.deadline() != null) {
      d = serving.deadline().minimum(d);
    }
    return Objects.requireNonNull(d, "deadline: a client's default deadline is > 0");
  }

  /**
   * A call after the interceptors, made on this thread: a call made while the thread serves a call (a handler
   * calling another service) takes that call's deadline when it is earlier, and is cancelled with it.
   */
  private <Req, Resp> CompletableFuture<Resp> send(MethodDescriptor<Req, Resp> method, Req request,
      CallOptions options, @Nullable Consumer<Metadata> responseMetadata) {
    long now = System.nanoTime(); // one reading: the call's deadline and its start (its "after N ms")
    ServerContext serving = ServerContext.current();
    CompletableFuture<Resp> call = send(method, request, options, deadlineOf(method, options, now, serving),
        responseMetadata, now, serving);
    if (serving != null && !call.isDone()) {
      cancelWith(serving, method, call);
    }
    return call;
  }

  /**
   * Ends {@code call} when the call being served, {@code serving}, is cancelled: its caller cancelled it, its
   * deadline passed, or its connection closed, so nobody waits for what this call was made for. It ends with
   * CANCELLED, or DEADLINE_EXCEEDED when that is why (this call has that deadline or an earlier one, and the
   * caller's CANCEL may come before either timer), and its server is told. The listener runs on the thread that
   * learns of the cancellation (a server's event loop), so the call is ended on this client's own threads, where
   * its callbacks run as for any other end. The listener is removed when the call ends, so a handler that makes
   * many calls keeps none of them.
   */
  private void cancelWith(ServerContext serving, MethodDescriptor<?, ?> method, CompletableFuture<?> call) {
    Runnable cancel = () -> {
      Runnable end = () -> {
        Status status = cancelledFor(serving, method, "was");
        if (call instanceof ClientCall<?> c) {
          c.fail(status);
        } else if (call instanceof HedgedCall<?> h) {
          h.fail(status);
        } else {
          call.completeExceptionally(status.asException());
        }
      };
      if (endpoints == null) {
        end.run(); // in-process: calls end on the threads of either side anyway
        return;
      }
      try {
        transport.scheduler().execute(end);
      } catch (RejectedExecutionException e) {
        end.run(); // the client is shutting down: end it here rather than never
      }
    };
    serving.onCancel(cancel); // runs at once if the served call is cancelled already
    call.whenComplete((v, e) -> serving.removeCancelListener(cancel));
  }

  /** The status of {@code method}, a call made for {@code serving}, which its caller gave up: why, and what to do. */
  private static Status cancelledFor(ServerContext serving, MethodDescriptor<?, ?> method, String how) {
    Status why = serving.cancellationStatus();
    String served = serving.method().fullName();
    String detail = "; to make a call that outlives the one being served, make it from a thread that is not serving"
        + " a call";
    if (why != null && why.code() == Status.Code.DEADLINE_EXCEEDED) {
      return Status.DEADLINE_EXCEEDED.withDescription(method.fullName() + " " + how + " cancelled because the"
          + " deadline of the call it was made for, " + served + ", passed" + detail);
    }
    return Status.CANCELLED.withDescription(method.fullName() + " " + how + " cancelled because the call it was"
        + " made for, " + served + ", was cancelled: " + (why == null ? "its caller cancelled it"
            : why.description()) + detail);
  }

  /**
   * A call after the interceptors: made, counted, checked against the client's state and limits, then its
   * first attempt started. Every path ends the call exactly once.
   */
  private <Req, Resp> CompletableFuture<Resp> send(MethodDescriptor<Req, Resp> method, Req request,
      CallOptions options, @Nullable Deadline deadline, @Nullable Consumer<Metadata> responseMetadata, long now,
      @Nullable ServerContext serving) {
    HedgingPolicy hedge = options.hedging();
    if (hedge == null) {
      hedge = hedging; // the client's; null when it does not hedge
    }
    if (hedge != null && hedge.isOn() && method.isIdempotent() && method.type() == MethodType.UNARY
        && endpoints != null) {
      return sendHedged(method, request, options, deadline, responseMetadata, hedge, serving);
    }
    Executor executor = options.executor() != null ? options.executor() : runtime.callbackExecutor();
    ClientCall<Resp> call = new ClientCall<>(runtime, method, deadline, responseMetadata, executor, now);
    // Counted from here; every path below ends the call exactly once, which uncounts it.
    Status refused = refusal(method, runtime.callStarted(), deadline, now, serving);
    if (refused != null) {
      call.fail(refused);
      return call;
    }
    if (serving != null && deadline != null && deadline == serving.deadline()) {
      call.deadlineFrom(serving.method().fullName());
    }
    call.options(options); // what a load balancer reads when it picks for the call
    call.start(request); // the first attempt; the call keeps the request for another (see ClientCall#onClose)
    return call;
  }

  /**
   * Why the client does not send a call starting at {@code now}, {@code pending} calls counted with it: shut down, over
   * maxPendingCalls, past its deadline, or made for a served call ({@code serving}) that was cancelled; null to
   * send it.
   */
  private @Nullable Status refusal(MethodDescriptor<?, ?> method, int pending, @Nullable Deadline deadline,
      long now, @Nullable ServerContext serving) {
    if (runtime.isShutdown()) {
      return Status.UNAVAILABLE.withDescription("client '" + runtime.name() + "' is shut down; "
          + method.fullName() + " not sent");
    }
    if (pending > runtime.maxPendingCalls()) {
      return Status.RESOURCE_EXHAUSTED.withDescription("client has " + runtime.maxPendingCalls()
          + " calls pending (awaiting responses, or waiting for the server to take more calls), its"
          + " maxPendingCalls (raise RpcClient.builder().maxPendingCalls, or wait for responses before sending"
          + " more)");
    }
    if (deadline != null && deadline.nanoTime() - now <= 0) {
      return Status.DEADLINE_EXCEEDED.withDescription("deadline already passed before " + method.fullName()
          + " was sent" + (serving != null && deadline == serving.deadline()
              ? ClientCall.inheritedDeadline(serving.method().fullName()) : ""));
    }
    if (serving != null && serving.cancellationCode(now) != null) {
      return cancelledFor(serving, method, "not sent:");
    }
    return null;
  }

  /** A call of an idempotent method under a hedging policy: see {@link HedgedCall}. */
  private <Req, Resp> CompletableFuture<Resp> sendHedged(MethodDescriptor<Req, Resp> method, Req request,
      CallOptions options, @Nullable Deadline deadline, @Nullable Consumer<Metadata> responseMetadata,
      HedgingPolicy policy, @Nullable ServerContext serving) {
    Executor executor = options.executor() != null ? options.executor() : runtime.callbackExecutor();
    HedgedCall<Resp> call = new HedgedCall<>(runtime, method, options, deadline, responseMetadata, executor, policy,
        transport.scheduler(), this::startHedge);
    // Counted from here as its first attempt; each attempt ends exactly once, which uncounts it.
    Status refused = refusal(method, runtime.callStarted(), deadline, System.nanoTime(), serving);
    if (refused != null) {
      call.refused(refused);
      return call;
    }
    call.start(request);
    return call;
  }

  /**
   * A blocking call made on another event loop than this client's: a server's in direct mode (a handler calling
   * out), or another Netty application's. It works, but that loop's connections all wait while it does; said at
   * most once per 10 s per method served (or calling method).
   */
  private static void warnBlockingOnAnEventLoop(MethodDescriptor<?, ?> method) {
    ServerContext serving = ServerContext.current();
    String thread = Thread.currentThread().getName();
    if (serving != null) {
      String served = serving.method().fullName();
      BLOCKING_ON_A_LOOP.warn("blocking call on an event loop: " + served, "blocking call to " + method.fullName()
          + " made by the handler of " + served + " on " + thread + ", an event loop of the server (it serves"
          + " with directExecutor()): every connection of that loop waits until the call returns, its callers'"
          + " cancellations too, so the server serves one call at a time there. Make the call with the async stub and return its future from an"
          + " async handler, or serve " + served + " on the business pool (the default)");
    } else {
      BLOCKING_ON_A_LOOP.warn("blocking call on an event loop: " + method.fullName(), "blocking call to "
          + method.fullName() + " made on " + thread + ", an event loop: every channel of that loop waits until"
          + " the call returns. Use the async stub, or make the call from another thread");
    }
  }

  @Override
  public <Req, Resp> Resp unaryCall(MethodDescriptor<Req, Resp> method, Req request, CallOptions options) {
    if (transport.isTransportThread()) {
      throw Status.FAILED_PRECONDITION.withDescription("blocking call to " + method.fullName() + " made on "
          + Thread.currentThread().getName() + ", an event loop of this client (for example in a callback of an"
          + " async call, which runs there unless a callbackExecutor is set): it would wait forever for a response"
          + " that this very thread has to read. Use the async stub and chain with thenCompose, or set"
          + " RpcClient.builder().callbackExecutor(...) so that callbacks run elsewhere").asException();
    }
    if (EVENT_LOOP != null && Thread.currentThread() instanceof FastThreadLocalThread
        && EVENT_LOOP.isInstance(ThreadExecutorMap.currentExecutor())) {
      warnBlockingOnAnEventLoop(method);
    }
    ThreadlessExecutor executor = new ThreadlessExecutor();
    CompletableFuture<Resp> f = unaryCallAsync(method, request, options.withExecutor(executor));
    try {
      // The transport ends the call by its deadline; the caller checks too, a little later, so that a blocking
      // call never depends on a thread that user code could block.
      Deadline own = f instanceof ClientCall<?> call ? call.deadline()
          : f instanceof HedgedCall<?> hedged ? hedged.deadline() : null; // null: an interceptor's future
      Deadline d = own != null ? own : deadlineOf(method, options);
      if (!executor.awaitCompletion(f, d.nanoTime() + SELF_DEADLINE_MARGIN_NANOS)) {
        f.completeExceptionally(Status.DEADLINE_EXCEEDED.withDescription("deadline passed while waiting for "
            + method.fullName() + " from " + runtime.target() + endpointNow(f) + ", and the transport had not"
            + " ended the call " + TimeUnit.NANOSECONDS.toMillis(SELF_DEADLINE_MARGIN_NANOS) + " ms later (a"
            + " machine too busy to run the transport's timer on time, such as a JVM just started, or an event loop"
            + " of this client blocked by a callback)").asException());
      }
      return f.get();
    } catch (InterruptedException e) {
      f.cancel(false);
      Thread.currentThread().interrupt();
      throw Status.CANCELLED.withDescription("interrupted while waiting for " + method.fullName()).withCause(e)
          .asException();
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof StatusException se) {
        throw new StatusException(se.status()); // fresh stack trace: the caller's
      }
      throw Status.fromThrowable(cause != null ? cause : e).asException();
    }
  }

  /**
   * For the caller's own deadline check: where the call went and what that endpoint was doing, so that the message
   * keeps the cause the transport would have given (a TLS failure, a server that never answered); "" when unknown.
   * A hedged call names each attempt's endpoint.
   */
  static String endpointNow(CompletableFuture<?> f) {
    if (f instanceof HedgedCall<?> hedged) {
      java.util.List<@Nullable ClientSubchannel> picked = hedged.attemptEndpoints();
      StringBuilder sb = new StringBuilder();
      for (int i = 0; i < picked.size(); i++) {
        ClientSubchannel s = picked.get(i);
        if (s != null) {
          sb.append(sb.length() == 0 ? " (" : "; ").append("attempt ").append(i + 1).append(": ")
              .append(endpointDoing(s));
        }
      }
      return sb.length() == 0 ? "" : sb.append(')').toString();
    }
    ClientSubchannel s = f instanceof ClientCall<?> call ? call.picked() : null;
    return s == null ? "" : " (" + endpointDoing(s) + ")";
  }

  /** "endpoint host:port, what it was doing" for {@link #endpointNow}. */
  private static String endpointDoing(ClientSubchannel s) {
    String authority = s.endpoint().authority();
    Status cause = s.stateCause();
    String why = cause == null || cause.description() == null ? "" : cause.description();
    String prefix = "cannot connect to " + authority + ": ";
    if (why.startsWith(prefix)) {
      why = why.substring(prefix.length()); // the address is named already
    }
    String doing = switch (s.state()) {
      case READY -> "connected (the call was sent, or about to be, and no answer came)";
      case CONNECTING -> "still connecting to it (TCP, the TLS handshake, or waiting for the server's first frame)";
      case BACKING_OFF -> "its last connect attempt failed" + (why.isEmpty() ? "" : ": " + why);
      case IDLE -> "not connected";
      case SHUTDOWN -> "closed";
    };
    return "endpoint " + authority + ": " + doing;
  }

  @Override
  public boolean isSecure() {
    return secure;
  }

  @Override
  public RpcClient shutdown() {
    runtime.shutdown();
    return this;
  }

  @Override
  public RpcClient shutdownNow() {
    runtime.shutdownNow();
    return this;
  }

  @Override
  public boolean isShutdown() {
    return runtime.isShutdown();
  }

  @Override
  public boolean isTerminated() {
    return runtime.isTerminated();
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    return runtime.awaitTermination(timeout, unit);
  }

  @Override
  public int pendingCalls() {
    return runtime.pendingCalls();
  }

  @Override
  public io.petrel.rpc.ConnectivityState state() {
    if (isShutdown()) {
      return io.petrel.rpc.ConnectivityState.SHUTDOWN;
    }
    ClientEndpoints<InternalSubchannel> e = endpoints;
    if (e == null) {
      return io.petrel.rpc.ConnectivityState.IDLE; // in-process
    }
    List<InternalSubchannel> subs = e.subchannels();
    if (subs.isEmpty()) {
      return io.petrel.rpc.ConnectivityState.BACKING_OFF; // nothing to call: see noEndpoint's message
    }
    boolean failing = false;
    boolean connecting = false;
    for (InternalSubchannel s : subs) {
      io.petrel.rpc.ConnectivityState st = s.state();
      if (st == io.petrel.rpc.ConnectivityState.READY) {
        return st;
      }
      failing |= s.isFailing() && st != io.petrel.rpc.ConnectivityState.IDLE; // idle: nothing tries it now
      connecting |= st == io.petrel.rpc.ConnectivityState.CONNECTING;
    }
    return failing ? io.petrel.rpc.ConnectivityState.BACKING_OFF
        : connecting ? io.petrel.rpc.ConnectivityState.CONNECTING : io.petrel.rpc.ConnectivityState.IDLE;
  }

  @Override
  public java.util.Map<io.petrel.rpc.ConnectivityState, Integer> endpointStates() {
    ClientEndpoints<InternalSubchannel> e = endpoints;
    if (e == null) {
      return java.util.Map.of();
    }
    java.util.EnumMap<io.petrel.rpc.ConnectivityState, Integer> counts =
        new java.util.EnumMap<>(io.petrel.rpc.ConnectivityState.class);
    for (io.petrel.rpc.ConnectivityState s : io.petrel.rpc.ConnectivityState.values()) {
      if (s != io.petrel.rpc.ConnectivityState.SHUTDOWN) {
        counts.put(s, 0);
      }
    }
    for (InternalSubchannel s : e.subchannels()) {
      counts.computeIfPresent(s.state(), (k, n) -> n + 1);
    }
    return java.util.Collections.unmodifiableMap(counts);
  }

  /**
   * One attempt of {@code call}, with the request and options it keeps: picks the endpoint (another than a failed
   * attempt's when there is one) and a connection of it, and starts a stream of the transport there
   * ({@link ClientCall#startStream}), or holds the call until a connection takes it. An attempt made again
   * ({@code again} not null) is counted in {@code rpc.client.retries} once it has an endpoint (not_sent: once per
   * call, see {@link ClientCall#countsAgain}). Throws what encoding
   * the request throws (see {@link ClientCall#startFailed}).
   */
  private void startAttempt(ClientCall<?> call, ClientRuntime.@Nullable Retry again) throws Exception {
    ClientEndpoints<InternalSubchannel> e = endpoints;
    if (e == null) {
      if (again != null && call.countsAgain(again)) {
        runtime.sentAgain(again);
      }
      call.startStream(transport, null);
      return;
    }
    InternalSubchannel previous = (InternalSubchannel) call.picked();
    if (call.unsentEndpoints() == 2 && !call.heldToKey()) {
      connectUntriedWhileNoneIsReady(e);
    }
    InternalSubchannel sub = e.pick(call, previous);
    if (sub == null) {
      call.fail(e.noPick(call, "; " + call.method().fullName() + " not sent"));
      return;
    }
    call.picked(sub);
    if (again != null && call.countsAgain(again)) {
      runtime.sentAgain(again); // rpc.client.retries: counted once it has somewhere to go
    }
    sub.send(call);
  }

  /**
   * A call could not be sent to two endpoints in a row and none is connected (a client not {@code start()}ed, given
   * many addresses where nothing listens): up to {@link #CONNECT_AHEAD} idle endpoints that no connect attempt has
   * failed for connect now, as {@code start()} would have them, so that a live one is found in about one round
   * trip instead of by calls trying one address after another (each call gives up after
   * {@link ClientCall#MAX_UNSENT_RESENDS}). At most once a second per client, as a task on the transport's
   * scheduler (not inline, in the failed attempt's completion), from a random place in the list. Calls moved on
   * after that ask their balancer for a connected endpoint ({@link ClientEndpoints#pick}).
   */
  private void connectUntriedWhileNoneIsReady(ClientEndpoints<InternalSubchannel> e) {
    long now = System.nanoTime();
    long last = lastConnectAhead.get();
    if (now - last < CONNECT_AHEAD_INTERVAL_NANOS || !lastConnectAhead.compareAndSet(last, now)) {
      return;
    }
    try {
      transport.scheduler().execute(() -> {
        List<InternalSubchannel> all = e.subchannels();
        for (InternalSubchannel s : all) {
          if (s.state() == io.petrel.rpc.ConnectivityState.READY) {
            return;
          }
        }
        int n = all.size();
        int start = n == 0 ? 0 : java.util.concurrent.ThreadLocalRandom.current().nextInt(n);
        int started = 0;
        for (int i = 0; i < n && started < CONNECT_AHEAD; i++) {
          InternalSubchannel s = all.get((start + i) % n);
          if (s.state() == io.petrel.rpc.ConnectivityState.IDLE && !s.isFailing()) {
            s.connectNow(); // its failure is the endpoint's state and its log line; nothing waits on the futures
            started++;
          }
        }
      });
    } catch (java.util.concurrent.RejectedExecutionException shuttingDown) {
      // the client is closing: nothing to connect
    }
  }

  /** Most endpoints {@link #connectUntriedWhileNoneIsReady} connects at a time. */
  static final int CONNECT_AHEAD = 256;
  private static final long CONNECT_AHEAD_INTERVAL_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(1);
  /** When {@link #connectUntriedWhileNoneIsReady} last ran ({@link System#nanoTime()}); far in the past at first. */
  private final java.util.concurrent.atomic.AtomicLong lastConnectAhead =
      new java.util.concurrent.atomic.AtomicLong(System.nanoTime() - CONNECT_AHEAD_INTERVAL_NANOS);

  /**
   * A hedge of a call ({@link HedgedCall}): as {@link #startAttempt}, but the endpoint is picked away from
   * {@code busy}, those of the call's other attempts in flight, where the client has another.
   */
  private void startHedge(ClientCall<?> call, List<ClientSubchannel> busy) throws Exception {
    ClientEndpoints<InternalSubchannel> e = endpoints;
    if (e == null) {
      call.startStream(transport, null);
      return;
    }
    InternalSubchannel sub = e.pickAvoiding(call, busy);
    if (sub == null) {
      call.fail(e.noPick(call, "; " + call.method().fullName() + " not sent"));
      return;
    }
    call.picked(sub);
    sub.send(call);
  }

  /**
   * The client terminates (shut down with no call pending, or shut down now): closes every subchannel (their calls
   * in flight fail with UNAVAILABLE), then the transport, then runs {@code done}. Called once.
   */
  private void terminate(Runnable done) {
    ClientEndpoints<InternalSubchannel> e = endpoints;
    if (e == null) {
      transport.terminate(done);
      return;
    }
    e.shutdown().whenComplete((v, t) -> transport.terminate(done));
  }

  @Override
  public void reloadTls() throws java.io.IOException {
    transport.reloadTls();
  }

  @Override
  public String toString() {
    ClientEndpoints<InternalSubchannel> e = endpoints;
    return transport + (e == null ? "" : ", subchannels=" + e.subchannels());
  }
}
