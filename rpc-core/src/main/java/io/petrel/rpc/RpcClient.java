package io.petrel.rpc;

import io.petrel.rpc.internal.ClientCall;
import io.petrel.rpc.internal.ClientChain;
import io.petrel.rpc.internal.ClientRuntime;
import io.petrel.rpc.internal.ThreadlessExecutor;
import io.petrel.rpc.spi.ClientConfig;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * A client of one Petrel server endpoint, over one or more connections. Thread-safe; share one per endpoint.
 * Create with {@link #builder()}.
 *
 * <p>Every call ends: with a response, or a {@link StatusException} no later than its deadline. A call on a
 * connection that closes fails at once with UNAVAILABLE; lost connections are re-established with backoff.
 * A call made while serving another call (inside a handler) never gets a later deadline than the call being
 * served. Generated stubs call these methods; they are also usable directly with hand-written descriptors.
 *
 * <p>This class is the client's runtime, the same whatever the transport: interceptors, deadlines, the
 * pending-call limit, shutdown and termination, call meters ({@link ClientRuntime}), and each call's single
 * completion ({@link ClientCall}). Its one implementation is the core's ({@code internal.ClientChannel}), which
 * hands each call to the transport's {@link io.petrel.rpc.spi.ClientTransport}; transports do not subclass it.
 */
public abstract class RpcClient implements AutoCloseable {
  private final ClientRuntime runtime;
  private final List<ClientInterceptor> interceptors;
  private final long defaultTimeoutNanos;
  private final boolean secure;
  private final ClientChain.Terminal terminal = new ClientChain.Terminal() {
    @Override
    public <Req, Resp> CompletableFuture<Resp> send(MethodDescriptor<Req, Resp> method, Req request,
        CallOptions options, Consumer<Metadata> responseMetadata) {
      return RpcClient.this.send(method, request, options, deadlineOf(method, options), responseMetadata);
    }

    @Override
    public boolean isSecure() {
      return secure;
    }
  };

  /**
   * For the core's client: {@code secure} is what {@link #isSecure()} says (TLS, or a transport whose calls
   * never leave the process).
   */
  protected RpcClient(ClientConfig config, boolean secure) {
    this.runtime = new ClientRuntime(config);
    this.runtime.terminator(this::terminate);
    this.runtime.attemptStarter(this::startAttempt);
    this.interceptors = config.interceptors();
    this.defaultTimeoutNanos = config.defaultTimeoutNanos();
    this.secure = secure;
  }

  public static RpcClientBuilder builder() {
    return new RpcClientBuilder();
  }

  /**
   * Connects now and waits up to the connect timeout. Optional: calls connect on demand. If no endpoint can be
   * reached, throws {@link StatusException} UNAVAILABLE naming each address and why; the client stays usable and
   * recovers as after any failed connection attempt (its later calls reach a server that has come up since).
   * A client dropped after a failed {@code builder().build().start()} leaks nothing: it holds no connection, and
   * its share of the transport's threads is released when it is garbage collected.
   */
  public abstract RpcClient start();

  /** Sends a request and returns the future response. The future fails with {@link StatusException}. */
  public final <Req, Resp> CompletableFuture<Resp> unaryCallAsync(
      MethodDescriptor<Req, Resp> method, Req request, CallOptions options) {
    if (method.type() != MethodType.UNARY) {
      throw new IllegalArgumentException(method.fullName() + " is " + method.type() + "; use oneway(...)");
    }
    return call(method, request, options);
  }

  /**
   * Sends a oneway request. The future completes once the request is written to the socket (not when the
   * server has run it), or fails with {@link StatusException} if it could not be sent.
   */
  @SuppressWarnings("unchecked")
  public final <Req> CompletableFuture<Void> oneway(MethodDescriptor<Req, ?> method, Req request,
      CallOptions options) {
    if (method.type() != MethodType.ONEWAY) {
      throw new IllegalArgumentException(method.fullName() + " is " + method.type() + "; use unaryCall(...)");
    }
    return (CompletableFuture<Void>) call(method, request, options);
  }

  private <Req, Resp> CompletableFuture<Resp> call(MethodDescriptor<Req, Resp> method, Req request,
      CallOptions options) {
    List<ClientInterceptor> perCall = options.interceptors();
    if (interceptors.isEmpty() && perCall.isEmpty()) {
      return send(method, request, options, deadlineOf(method, options), options.responseMetadataListener());
    }
    return ClientChain.start(terminal, interceptors, perCall, method, request, options);
  }

  /**
   * The deadline of a call starting now: from its options, else the method's default, else the client's
   * default; and never later than the deadline of the call this thread is serving, if any.
   */
  public final Deadline deadlineOf(MethodDescriptor<?, ?> method, CallOptions options) {
    long fallback = method.defaultTimeoutNanos() > 0 ? method.defaultTimeoutNanos() : defaultTimeoutNanos;
    Deadline d = options.effectiveDeadline(fallback);
    ServerContext serving = ServerContext.current();
    if (serving != null && serving.deadline() != null) {
      d = serving.deadline().minimum(d);
    }
    return Objects.requireNonNull(d, "deadline: a client's default deadline is > 0");
  }

  /** The client's runtime (pending calls, shutdown state, meters), which its calls are made with. */
  protected final ClientRuntime runtime() {
    return runtime;
  }

  /**
   * A call after the interceptors: made by the transport, counted, checked against the client's state and
   * limits, then handed to the transport to send. Every path ends the call exactly once.
   */
  private <Req, Resp> CompletableFuture<Resp> send(MethodDescriptor<Req, Resp> method, Req request,
      CallOptions options, @Nullable Deadline deadline, @Nullable Consumer<Metadata> responseMetadata) {
    Executor executor = options.executor() != null ? options.executor() : runtime.callbackExecutor();
    ClientCall<Resp> call = new ClientCall<>(runtime, method, deadline, responseMetadata, executor);
    // Counted from here; every path below ends the call exactly once, which uncounts it.
    int n = runtime.callStarted();
    if (runtime.isShutdown()) {
      call.fail(Status.UNAVAILABLE.withDescription("client '" + runtime.name() + "' is shut down; "
          + method.fullName() + " not sent"));
      return call;
    }
    if (n > runtime.maxPendingCalls()) {
      call.fail(Status.RESOURCE_EXHAUSTED.withDescription("client has " + runtime.maxPendingCalls()
          + " calls pending (awaiting responses, or waiting for the server to take more calls), its"
          + " maxPendingCalls (raise RpcClient.builder().maxPendingCalls, or wait for responses before sending"
          + " more)"));
      return call;
    }
    if (deadline != null && deadline.isExpired()) {
      call.fail(Status.DEADLINE_EXCEEDED.withDescription("deadline already passed before " + method.fullName()
          + " was sent"));
      return call;
    }
    call.options(options); // what a load balancer reads when it picks for the call
    call.start(request); // the first attempt; the call keeps the request for another (see ClientCall#onClose)
    return call;
  }

  /**
   * One attempt of {@code call}, with the request and options it keeps: pick an endpoint and a connection, and
   * start a stream of the transport there (see {@link ClientCall#startStream}), or hold the call until a
   * connection takes it. The call has been counted and checked (client running, within maxPendingCalls, deadline
   * not passed). Throws what encoding the request throws: a marshaller's exception fails the call with
   * INVALID_ARGUMENT or INTERNAL, a {@link StatusException} with its status, a
   * {@link io.petrel.rpc.spi.FrameSizes.TooLarge} with its RESOURCE_EXHAUSTED status and "not sent"; once the
   * request is handed on, the transport ends the attempt (by its deadline at the latest) and nothing is thrown.
   */
  protected abstract void startAttempt(ClientCall<?> call) throws Exception;

  /**
   * The client terminates (shut down with no call pending, or {@link #shutdownNow()}): close
   * every connection (calls still in flight fail with UNAVAILABLE), release threads, then run {@code done}.
   * Called once.
   */
  protected abstract void terminate(Runnable done);

  /**
   * Sends a request and waits for the response; throws {@link StatusException} on failure. The response is
   * decoded, and the call's callbacks run, on the calling thread (see {@link CallOptions#withExecutor}).
   */
  public <Req, Resp> Resp unaryCall(MethodDescriptor<Req, Resp> method, Req request, CallOptions options) {
    if (isTransportThread()) {
      throw Status.FAILED_PRECONDITION.withDescription("blocking call to " + method.fullName() + " made on "
          + Thread.currentThread().getName() + ", an event loop of this client (for example in a callback of an"
          + " async call, which runs there unless a callbackExecutor is set): it would wait forever for a response"
          + " that this very thread has to read. Use the async stub and chain with thenCompose, or set"
          + " RpcClient.builder().callbackExecutor(...) so that callbacks run elsewhere").asException();
    }
    ThreadlessExecutor executor = new ThreadlessExecutor();
    CompletableFuture<Resp> f = unaryCallAsync(method, request, options.withExecutor(executor));
    try {
      // The transport ends the call by its deadline; the caller checks too, a little later, so that a blocking
      // call never depends on a thread that user code could block.
      Deadline own = f instanceof ClientCall<?> call ? call.deadline() : null; // null: an interceptor's future
      Deadline d = own != null ? own : deadlineOf(method, options);
      if (!executor.awaitCompletion(f, d.nanoTime() + SELF_DEADLINE_MARGIN_NANOS)) {
        f.completeExceptionally(Status.DEADLINE_EXCEEDED.withDescription("deadline passed while waiting for "
            + method.fullName() + ", and the transport had not ended the call (is its event loop blocked?)")
            .asException());
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
   * How long after a blocking call's deadline the calling thread ends the call itself if the transport has
   * not (it normally ends it within a few milliseconds of the deadline).
   */
  static final long SELF_DEADLINE_MARGIN_NANOS = TimeUnit.MILLISECONDS.toNanos(15);

  /**
   * True when the current thread is one of this client's I/O threads, where a blocking call could never be
   * answered. Transports override it; the default is false.
   */
  protected boolean isTransportThread() {
    return false;
  }

  public <Req, Resp> Resp unaryCall(MethodDescriptor<Req, Resp> method, Req request) {
    return unaryCall(method, request, CallOptions.DEFAULT);
  }

  /**
   * True when this client was built with {@code RpcClientBuilder.tls(...)}: every connection it makes is TLS,
   * so nothing it sends (metadata such as tokens, requests) travels in plaintext. Also true for an in-process
   * client ({@code RpcClientBuilder.inProcess(...)}), whose calls never leave the process. Interceptors see the
   * same through {@link ClientInterceptor.Chain#isSecure()}.
   */
  public final boolean isSecure() {
    return secure;
  }

  /**
   * Loads the TLS material of this client's {@link TlsConfig} again (its files, or its key stores' current
   * entries); connections made from now on use it, open ones keep theirs. If the new material cannot be loaded
   * the client keeps the previous one.
   *
   * @throws IllegalStateException if the client has no TLS
   * @throws java.io.IOException naming the file and the problem, if the material cannot be loaded
   */
  public void reloadTls() throws java.io.IOException {
    throw new IllegalStateException(secure ? "transport " + getClass().getName() + " cannot reload TLS"
        : "client has no TLS to reload; configure it with RpcClient.builder().tls(...)");
  }

  /** Stops accepting new calls and closes connections once pending calls have ended. Returns at once. */
  public final RpcClient shutdown() {
    runtime.shutdown();
    return this;
  }

  /** Fails pending calls with UNAVAILABLE and closes at once. */
  public final RpcClient shutdownNow() {
    runtime.shutdownNow();
    return this;
  }

  public final boolean isShutdown() {
    return runtime.isShutdown();
  }

  public final boolean isTerminated() {
    return runtime.isTerminated();
  }

  public final boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    return runtime.awaitTermination(timeout, unit);
  }

  /** Calls started and not yet ended, for operators and tests. */
  public final int pendingCalls() {
    return runtime.pendingCalls();
  }

  @Override
  public void close() {
    shutdown();
    try {
      if (!awaitTermination(30, TimeUnit.SECONDS)) {
        shutdownNow();
        awaitTermination(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      shutdownNow();
      Thread.currentThread().interrupt();
    }
  }
}
