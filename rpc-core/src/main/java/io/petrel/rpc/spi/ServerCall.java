package io.petrel.rpc.spi;

import io.netty.buffer.ByteBuf;
import io.petrel.rpc.Marshaller;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.MethodType;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.ServerInterceptor;
import io.petrel.rpc.ServerMethodDefinition;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One incoming call, as a transport hands it to the core: a {@link Runnable} that the {@link ServerDispatcher}
 * runs on the business executor (or at once, in direct mode). Core's part is the same for every transport:
 * decode the request, run the interceptors and the handler, turn what they return or throw into a response or
 * a status, record the call's metrics. The transport's part is the subclass: where the request bytes are and
 * how an answer travels back ({@link #sendResponse}, {@link #sendError}), and what it counts per connection
 * ({@link #onEnded}).
 *
 * <p>The call owns its request ({@link #requestBody()}) until the request is decoded: {@link #run()} releases
 * it, and so do {@link #discard()} and {@link #abandon()} when the call never runs.
 *
 * <p>Ready for streams: a unary request is one message followed by the end of the request stream, which is
 * what a transport delivers today; a streaming call will deliver further messages through this class without a
 * change to the transports' framing (docs/protocol.md, "Flags").
 */
public abstract class ServerCall implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(ServerCall.class);

  /** What {@link #sendResponse} returns when the response waits for the peer to read; the call is not over. */
  public static final int DEFERRED = Integer.MIN_VALUE;

  private final ServerDispatcher dispatcher;
  private final ServerMethodDefinition<Object, Object> def;
  private final ServerDispatcher.Method entry;
  private final ServerContext context;

  /**
   * @param entry the method, from {@link ServerDispatcher#lookup}
   * @param context the call's context, made by the transport from what it decoded (metadata, deadline, peer,
   *     request size, start time, peer certificates)
   */
  @SuppressWarnings("unchecked")
  protected ServerCall(ServerDispatcher dispatcher, ServerDispatcher.Method entry, ServerContext context) {
    this.dispatcher = dispatcher;
    this.entry = entry;
    this.def = (ServerMethodDefinition<Object, Object>) entry.definition();
    this.context = context;
  }

  /** The call's context: method, metadata, deadline, peer, cancellation, response metadata. */
  public final ServerContext context() {
    return context;
  }

  public final MethodDescriptor<?, ?> method() {
    return def.method();
  }

  public final boolean isOneway() {
    return def.method().type() == MethodType.ONEWAY;
  }

  /** The encoded request; read once by {@link #run()}, then {@link #releaseRequest()}d. */
  protected abstract ByteBuf requestBody();

  /** Releases the request's bytes; called exactly once. */
  protected abstract void releaseRequest();

  /**
   * Sends the response (never called for oneway calls).
   *
   * @return the response body's size in bytes; -1 if it could not be sent and an error status was sent in its
   *     place (too large, out of the server's buffer budget...); or {@link #DEFERRED} if it waits for the peer
   *     to read, in which case the transport ends the call later with {@link #deferredDone}
   */
  protected abstract int sendResponse(Marshaller<Object> marshaller, Object response, Metadata metadata);

  /** Sends an error status in place of a response (never called for oneway calls). */
  protected abstract void sendError(Status status, Metadata metadata);

  /**
   * The call has ended (answered, failed, dropped or abandoned): the transport's bookkeeping (the connection's
   * count of calls in flight). Called exactly once, from any thread.
   */
  protected abstract void onEnded();

  /** Releases the request of a call refused before it ran; the call never started, nothing is recorded. */
  public final void discard() {
    releaseRequest();
  }

  @Override
  public final void run() {
    Object request;
    try {
      if (context.isCancelled()) {
        // The caller has given up already (deadline passed or cancelled); do not spend a handler on it.
        finish(null, Status.DEADLINE_EXCEEDED.withDescription("the call's deadline passed or it was cancelled"
            + " while it waited in the server's queue; the handler was not run").asException());
        return;
      }
      try {
        request = def.method().requestMarshaller().read(requestBody());
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
        finish(def.handler().invoke(request), null); // the plain path: no stage, no chain
      } else {
        CompletionStage<Object> stage = io.petrel.rpc.internal.ServerChain.invoke(interceptors, def, request,
            context);
        stage.whenComplete(this::finish);
      }
    } catch (Throwable t) {
      finish(null, t);
    } finally {
      ServerContext.restore(previous);
    }
  }

  private void finish(@Nullable Object response, @Nullable Throwable error) {
    Status.Code code = Status.Code.OK;
    int responseBytes = -1;
    try {
      if (error != null) {
        Throwable t = unwrap(error);
        Status status = Status.fromThrowable(t);
        if (dispatcher.isStoppingNow()) {
          // shutdownNow interrupted the handler: what it threw says nothing about the call.
          status = Status.UNAVAILABLE.withDescription("server '" + dispatcher.name() + "' was stopped (shutdownNow)"
              + " while " + def.method().fullName() + " ran; retry on another server");
          t = status.asException();
        }
        code = status.code();
        if (t instanceof StatusException || !(t instanceof RuntimeException || t instanceof Error)) {
          // A status, or a checked exception the service declares: an answer, not a server fault.
          log.debug("{} failed with {}", def.method().fullName(), status);
        } else {
          dispatcher.limitLog().warn("handler threw: " + def.method().fullName(),
              def.method().fullName() + " threw; the caller gets " + status.code(), t);
        }
        if (!isOneway()) {
          sendError(status, context.responseMetadata());
        }
      } else if (!isOneway()) {
        responseBytes = sendResponse(def.method().responseMarshaller(), response, context.responseMetadata());
        if (responseBytes == DEFERRED) {
          return; // the response waits for the peer to read; deferredDone ends the call
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
  final void refused() {
    entry.metrics().record(Status.Code.RESOURCE_EXHAUSTED, System.nanoTime() - context.startNanos(),
        context.requestSize(), -1);
  }

  /** The server stopped before this queued call ran: release the request and end the call (CANCELLED). */
  public final void abandon() {
    releaseRequest();
    ended(Status.Code.CANCELLED, -1);
  }

  /** A response that waited for the peer to read was written ({@code OK}, with its body size) or dropped. */
  public final void deferredDone(Status.Code code, int responseBytes) {
    ended(code, responseBytes);
  }

  private void ended(Status.Code code, int responseBytes) {
    entry.metrics().record(code, System.nanoTime() - context.startNanos(), context.requestSize(), responseBytes);
    try {
      onEnded();
    } finally {
      dispatcher.callEnded();
    }
  }

  private static Throwable unwrap(Throwable t) {
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }
}
