package io.petrel.rpc.internal;

import io.netty.buffer.ByteBuf;
import io.petrel.rpc.ExceptionDetails;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.MethodType;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.ServerInterceptor;
import io.petrel.rpc.ServerMethodDefinition;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.spi.ServerCall;
import io.petrel.rpc.spi.ServerDispatcher;
import io.petrel.rpc.spi.ServerStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * The core's half of one incoming call ({@link ServerCall}): a {@link Runnable} that the {@link CoreDispatcher}
 * runs on the business executor (or at once, in direct mode). The same for every transport: check the client's
 * messages, decode the request, run the interceptors and the handler, turn what they return or throw into an
 * answer through the transport's {@link ServerStream}, record the call's metrics. The contract is on
 * {@link ServerStream}.
 */
final class CoreServerCall implements ServerCall, Runnable, java.util.function.Consumer<Throwable> {
  private static final Logger log = LoggerFactory.getLogger(CoreServerCall.class);

  private final CoreDispatcher dispatcher;
  private final ServerMethodDefinition<Object, Object> def;
  private final CoreDispatcher.Entry entry;
  private final ServerContext context;
  private final ServerStream stream;
  /** The request: the first message the client sent, owned until decoded (or released unread). */
  private @Nullable ByteBuf request;
  /** Messages delivered so far, the first one included; a unary or oneway call wants exactly one. */
  private int messages;
  /** The end of the client's stream has been delivered. */
  private boolean ended;
  /**
   * Set by an executor that counts the calls it runs against a limit ({@link BusinessPool},
   * {@link VirtualThreadExecutor}): frees the call's place. Run once, by whichever comes first: the call about to
   * hand its answer to the transport, or the executor when {@link #run} returns. So a client that has the answer
   * finds the place free for its next call.
   */
  // Not volatile: set before the call is queued (the queue orders it before the run), taken atomically with
  // BEFORE_ANSWER; a stale read in finish() only leaves the release to the executor, which takes it after run().
  private @Nullable Runnable beforeAnswer;
  /** The logging MDC when the handler threw inside the interceptors, if it had any (see {@link #accept}). */
  private @Nullable Map<String, String> mdcAtThrow;
  private static final VarHandle BEFORE_ANSWER;

  static {
    try {
      BEFORE_ANSWER = MethodHandles.lookup().findVarHandle(CoreServerCall.class, "beforeAnswer", Runnable.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  @SuppressWarnings("unchecked")
  CoreServerCall(CoreDispatcher dispatcher, CoreDispatcher.Entry entry, ServerContext context, ServerStream stream) {
    this.dispatcher = dispatcher;
    this.entry = entry;
    this.def = (ServerMethodDefinition<Object, Object>) entry.definition();
    this.context = context;
    this.stream = stream;
  }

  @Override
  public ServerContext context() {
    return context;
  }

  @Override
  public MethodDescriptor<?, ?> method() {
    return def.method();
  }

  @Override
  public boolean isOneway() {
    return def.method().type() == MethodType.ONEWAY;
  }

  @Override
  public void messageReceived(ByteBuf message, boolean endOfStream) {
    if (ended) {
      message.release();
      throw new IllegalStateException("a message of " + def.method().fullName() + " was delivered after the end"
          + " of the client's stream; a transport delivers nothing after the end");
    }
    if (messages++ == 0) {
      request = message;
    } else {
      message.release(); // a unary or oneway method reads one message: run() refuses the call
    }
    ended = endOfStream;
  }

  @Override
  public void endOfStreamReceived() {
    if (ended) {
      throw new IllegalStateException("the end of the client's stream of " + def.method().fullName() + " was"
          + " delivered twice");
    }
    ended = true;
  }

  @Override
  public void discard() {
    releaseRequest();
  }

  @Override
  public void run() {
    Object value;
    try {
      if (messages != 1 || !ended) {
        finish(null, badStream().asException());
        return;
      }
      Status gaveUp = context.cancellationStatus();
      if (gaveUp != null) {
        // The caller has given up already (deadline passed, cancelled, connection gone); do not spend a handler.
        finish(null, gaveUp.withDescription(gaveUp.description() + " while the call waited in the server's queue;"
            + " the handler was not run").asException());
        return;
      }
      try {
        value = def.method().requestMarshaller().read(Objects.requireNonNull(request, "the call's one message"));
      } catch (Throwable t) {
        finish(null, Status.INVALID_ARGUMENT.withDescription("cannot decode the request of "
            + def.method().fullName() + ": " + Status.describe(t)).asException());
        return;
      }
    } finally {
      releaseRequest();
    }
    ServerContext previous = context.attach();
    try {
      List<ServerInterceptor> interceptors = dispatcher.interceptors();
      if (interceptors.isEmpty() && !def.isAsync()) {
        // The plain path: no stage, no chain.
        finish(Objects.requireNonNull(def.handler(), "a method that is not async has a blocking handler").invoke(value),
            null);
      } else {
        CompletionStage<Object> stage = ServerChain.invoke(interceptors, def, value,
            context, interceptors.isEmpty() ? null : this);
        stage.whenComplete(this::finish);
      }
    } catch (Throwable t) {
      finish(null, t);
    } finally {
      ServerContext.restore(previous);
    }
  }

  /**
   * The handler threw {@code t}, on its thread, inside the interceptors' scopes ({@link ServerChain}'s callback):
   * keeps the logging MDC as it is now (a tracing interceptor's trace and span ids), so that what {@link #finish}
   * logs about the failure after the interceptors have unwound carries it. Written once, on the handler's thread,
   * before the stage that runs finish completes (which orders it before finish reads it).
   */
  @Override
  public void accept(Throwable t) {
    Map<String, String> mdc = MDC.getCopyOfContextMap();
    if (mdc != null && !mdc.isEmpty()) {
      mdcAtThrow = mdc;
    }
  }

  // Logs with the MDC the handler threw in, if it kept one (see accept), then puts the thread's own back.
  private void logWithHandlerMdc(Runnable line) {
    Map<String, String> mdc = mdcAtThrow;
    if (mdc == null) {
      line.run();
      return;
    }
    Map<String, String> before = MDC.getCopyOfContextMap();
    MDC.setContextMap(mdc);
    try {
      line.run();
    } finally {
      if (before == null) {
        MDC.clear();
      } else {
        MDC.setContextMap(before);
      }
    }
  }

  /** Why a unary or oneway call's inbound stream is not one message and the end; the handler is not run. */
  private Status badStream() {
    String method = def.method().fullName() + ", a " + def.method().type() + " method,";
    if (messages > 1) {
      return Status.INVALID_ARGUMENT.withDescription("the client sent " + messages + " request messages to "
          + method + " which takes exactly one; the handler was not run (send one request per call)");
    }
    if (!ended) {
      String why = "the server ran " + method + " before the end of the client's"
          + " stream (" + messages + (messages == 1 ? " message" : " messages") + " so far): a bug in the server's"
          + " transport, which must deliver a call's message and its end before it hands the call over; the"
          + " handler was not run";
      dispatcher.limitLog().warn("stream not ended: " + def.method().fullName(), why);
      return Status.INTERNAL.withDescription(why);
    }
    return Status.INVALID_ARGUMENT.withDescription("the client ended its stream to " + method + " without a"
        + " request message; it takes exactly one; the handler was not run (send one request per call)");
  }

  /**
   * For a counting executor: {@code release} frees the call's place; it runs once, just before the answer goes to
   * the transport, unless the executor takes it back first with {@link #takeBeforeAnswer} (and runs it itself).
   */
  void beforeAnswer(Runnable release) {
    beforeAnswer = release;
  }

  /** The release set with {@link #beforeAnswer} if it has not run yet (it then never runs here), else null. */
  @Nullable Runnable takeBeforeAnswer() {
    return (Runnable) BEFORE_ANSWER.getAndSet(this, (Runnable) null);
  }

  /**
   * For a counting executor whose task has ended or will never run: whether it must free the task's place itself,
   * that is, unless the task is a call that freed it before its answer (its release then never runs).
   */
  static boolean stillHoldsPlace(Runnable task) {
    return !(task instanceof CoreServerCall call) || call.takeBeforeAnswer() != null;
  }

  /** Codes that say the server failed rather than answered: a mapped exception with one is still logged at WARN. */
  private static boolean isFault(Status.Code code) {
    return code == Status.Code.UNKNOWN || code == Status.Code.INTERNAL || code == Status.Code.DATA_LOSS;
  }

  private void finish(@Nullable Object response, @Nullable Throwable error) {
    Runnable release = beforeAnswer == null ? null : takeBeforeAnswer(); // a plain read: null in direct mode
    if (release != null) {
      release.run();
    }
    Status.Code code = Status.Code.OK;
    int responseBytes = -1;
    try {
      if (error != null) {
        Throwable t = unwrap(error);
        // The caller cancelled the call (or its deadline passed) and the handler cancelled its future in turn, as
        // an onCancel listener does: nobody waits for an answer, and nothing failed on the server.
        boolean cancelledWithTheCall = t instanceof java.util.concurrent.CancellationException
            && context.isCancelled();
        // The exceptionMapper's answer: an expected outcome the application chose a status for, not a fault.
        Status mapped = cancelledWithTheCall ? null
            : ErrorAnswers.mapped(t, def.method(), dispatcher.config().exceptionMapper());
        ExceptionDetails details = dispatcher.config().exceptionDetails();
        boolean exposed = ErrorAnswers.exposes(t, def.method(), details);
        boolean carriesStatus = ErrorAnswers.carriesStatus(t);
        Status status = cancelledWithTheCall
            ? Status.CANCELLED.withDescription("the caller cancelled " + def.method().fullName()
                + " (or its deadline passed), and the handler's future was cancelled with it")
            : mapped != null ? mapped
            // A oneway call's status only goes to the log below (no caller gets it): it names the exception.
            : ErrorAnswers.statusOf(t, def.method(), null, isOneway() ? ExceptionDetails.ALL : details);
        Metadata metadata = context.responseMetadata();
        if (dispatcher.isStoppingNow()) {
          // shutdownNow interrupted the handler: what it threw says nothing about the call.
          // No server name: the caller may be any peer (docs/security.md).
          status = Status.UNAVAILABLE.withDescription("the server was stopped (shutdownNow) while "
              + def.method().fullName() + " ran; retry on another server");
          t = status.asException();
        } else if (!isOneway() && !cancelledWithTheCall) {
          // a declared exception's class and message (or any exception's, with exceptionDetails(ALL))
          metadata = ErrorAnswers.metadataOf(t, def.method(), details, metadata);
        }
        code = status.code();
        Status answer = status;
        Throwable thrownNow = t;
        if (cancelledWithTheCall) {
          if (log.isDebugEnabled()) {
            logWithHandlerMdc(() -> log.debug("{} ended with {}", def.method().fullName(), answer));
          }
        } else if (isOneway()) {
          // No caller hears of it, whatever it is (a status, a declared exception): only this log says so.
          logWithHandlerMdc(() -> dispatcher.limitLog().warn("handler threw: " + def.method().fullName(),
              def.method().fullName() + " (oneway) threw; no caller waits for it, so only this log says so ("
                  + answer + ")", thrownNow));
        } else if (t instanceof StatusException
            || (!(t instanceof RuntimeException || t instanceof Error) && (exposed || carriesStatus))
            || (mapped != null && !(t instanceof Error) && !isFault(mapped.code()))) {
          // A status, a checked exception the service declares (or any checked exception, when all travel), one
          // that carries the status of the next service's answer, or one the exceptionMapper mapped to an answer
          // (not to a server fault: a catch-all mapper sending every exception as INTERNAL must not hide bugs).
          // A checked exception the method does not declare reaches its caller as a bare UNKNOWN: logged below.
          if (log.isDebugEnabled()) {
            logWithHandlerMdc(() -> log.debug("{} failed with {}", def.method().fullName(), answer));
          }
        } else if (mapped != null) {
          logWithHandlerMdc(() -> dispatcher.limitLog().warn("handler threw: " + def.method().fullName(),
              def.method().fullName() + " threw; the exceptionMapper answers " + answer.code() + ", which says the"
                  + " server failed, so it is logged as a fault (fix the handler, or map the exception to a status"
                  + " that is an answer: NOT_FOUND, INVALID_ARGUMENT, ...)", thrownNow));
        } else {
          logWithHandlerMdc(() -> dispatcher.limitLog().warn("handler threw: " + def.method().fullName(),
              def.method().fullName() + " threw; the caller gets " + answer.code()
                  + (exposed || carriesStatus ? "" : " without the exception's class or message (the method does"
                  + " not declare it)") + " (if this is an answer"
                  + " rather than a fault: throw a StatusException with the status to send, declare a checked"
                  + " exception in the service interface to send it as itself, or map it with"
                  + " RpcServer.builder().exceptionMapper)", thrownNow));
        }
        if (!isOneway()) {
          stream.sendStatus(ErrorAnswers.capped(status), metadata); // the whole answer: no message was sent
        }
        if (ServerDispatcher.isFatal(t)) {
          dispatcher.fatal("the handler of " + def.method().fullName() + " (thread "
              + Thread.currentThread().getName() + ")", t);
        }
      } else if (!isOneway()) {
        // The one message of a unary answer, with the end marker; its headers travel with it.
        // A null response goes to the marshaller as it is (a ValueMarshaller writes it as an absent field): the
        // marshaller's type is then Marshaller<@Nullable Resp>, which NullAway's standard mode does not model.
        @SuppressWarnings("NullAway")
        int sent = stream.sendMessage(Objects.requireNonNull(def.method().responseMarshaller(), "a unary method has a"
            + " response marshaller"), response, true);
        responseBytes = sent;
        if (responseBytes == DEFERRED) {
          return; // the message waits for the peer to read; deferredDone ends the call
        }
        if (responseBytes < 0) {
          code = Status.Code.RESOURCE_EXHAUSTED; // or INTERNAL: the response could not be sent, an error was
        }
      }
    } catch (RuntimeException | Error e) {
      code = Status.Code.INTERNAL;
      throw e;
    } finally {
      if (responseBytes != DEFERRED) {
        ended(code, responseBytes);
      }
    }
  }

  /** The executor refused the call: record it as RESOURCE_EXHAUSTED (the transport answers and discards). */
  final void refused(Status.Code code) {
    entry.metrics().record(code, System.nanoTime() - context.startNanos(), context.requestSize(), -1);
  }

  @Override
  public void abandon() {
    releaseRequest();
    ended(Status.Code.CANCELLED, -1);
  }

  @Override
  public void deferredDone(Status.Code code, int responseBytes) {
    ended(code, responseBytes);
  }

  private void ended(Status.Code code, int responseBytes) {
    long now = System.nanoTime();
    if (code == Status.Code.OK && !isOneway()) {
      // Answered after the caller gave up (cancelled, its deadline passed, its connection closed): nobody got
      // the answer, so the call is not counted a success (as gRPC counts it).
      Status.Code gaveUp = context.cancellationCode(now);
      if (gaveUp != null) {
        code = gaveUp;
      }
    }
    entry.metrics().record(code, now - context.startNanos(), context.requestSize(), responseBytes);
    try {
      stream.onEnded();
    } finally {
      dispatcher.callEnded();
    }
  }

  /** Releases the request if the call still holds it (each message is released exactly once). */
  private void releaseRequest() {
    ByteBuf b = request;
    request = null;
    if (b != null) {
      b.release();
      stream.requestReleased();
    }
  }

  private static Throwable unwrap(Throwable t) {
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }
}
