package io.petrel.rpc.transport.netty;

import io.netty.buffer.ByteBuf;
import io.petrel.rpc.Deadline;
import io.petrel.rpc.MethodType;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.ServerInterceptor;
import io.petrel.rpc.ServerMethodDefinition;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.internal.CallMetrics;
import io.petrel.rpc.internal.ServerChain;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One incoming call, run on the business executor (or the event loop in direct mode): decode the request,
 * run interceptors and handler, encode the response into the connection's write queue. Owns the request
 * frame until it is decoded.
 */
final class ServerCall implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(ServerCall.class);

  private final ServerConnection connection;
  private final ServerMethodDefinition<Object, Object> def;
  private final CallMetrics metrics;
  final int requestId;
  final ServerContext context;
  private Frame frame;

  @SuppressWarnings("unchecked")
  ServerCall(ServerConnection connection, ServerMethodDefinition<?, ?> def, CallMetrics metrics, Frame frame,
      long startNanos) {
    this.connection = connection;
    this.def = (ServerMethodDefinition<Object, Object>) def;
    this.metrics = metrics;
    this.frame = frame;
    this.requestId = frame.requestId;
    Deadline deadline = frame.timeoutMillis == 0 ? null : Deadline.afterNanos(frame.timeoutMillis * 1_000_000L, startNanos);
    this.context = new ServerContext(def.method(), frame.metadata, deadline, connection.remoteAddress(),
        frame.body().readableBytes(), startNanos, connection.server().isTls()
            ? ServerTlsHandler.peerCertificates(connection.channel()) : List.of());
  }

  boolean isOneway() {
    return def.method().type() == MethodType.ONEWAY;
  }

  /** Releases the request when the call is rejected before it runs. */
  void discard() {
    Frame f = frame;
    frame = null;
    if (f != null) {
      f.release();
    }
  }

  @Override
  public void run() {
    Frame f = frame;
    frame = null;
    Object request;
    try {
      if (context.isCancelled()) {
        // The caller has given up already (deadline passed or cancelled); do not spend a handler on it.
        finish(null, Status.DEADLINE_EXCEEDED.withDescription("the call's deadline passed or it was cancelled"
            + " while it waited in the server's queue; the handler was not run").asException());
        return;
      }
      try {
        request = def.method().requestMarshaller().read(f.body());
      } catch (Throwable t) {
        finish(null, Status.INVALID_ARGUMENT.withDescription("cannot decode the request of "
            + def.method().fullName() + ": " + Status.describe(t)).asException());
        return;
      }
    } finally {
      f.release();
    }
    ServerContext previous = context.attach();
    try {
      List<ServerInterceptor> interceptors = connection.server().interceptors();
      if (interceptors.isEmpty() && !def.isAsync()) {
        finish(def.handler().invoke(request), null); // the plain path: no stage, no chain
      } else {
        CompletionStage<Object> stage = ServerChain.invoke(interceptors, def, request, context);
        stage.whenComplete(this::finish);
      }
    } catch (Throwable t) {
      finish(null, t);
    } finally {
      ServerContext.restore(previous);
    }
  }

  private void finish(Object response, Throwable error) {
    Status.Code code = Status.Code.OK;
    int responseBytes = -1;
    try {
      if (error != null) {
        Throwable t = unwrap(error);
        Status status = Status.fromThrowable(t);
        code = status.code();
        if (t instanceof StatusException || !(t instanceof RuntimeException || t instanceof Error)) {
          // A status, or a checked exception the service declares: an answer, not a server fault.
          log.debug("{} failed with {}", def.method().fullName(), status);
        } else {
          connection.server().limitLog().warn("handler threw: " + def.method().fullName(),
              def.method().fullName() + " threw; the caller gets " + status.code(), t);
        }
        if (!isOneway()) {
          connection.writeError(requestId, status, context.responseMetadata());
        }
      } else if (!isOneway()) {
        responseBytes = connection.writeResponse(this, def.method().responseMarshaller(), response, def.method());
        if (responseBytes == ServerConnection.DEFERRED) {
          return; // the response waits for the peer to read; deferredDone ends the call
        }
        if (responseBytes < 0) {
          code = Status.Code.RESOURCE_EXHAUSTED; // or INTERNAL: the encoder failed and an error was sent
        }
      }
    } catch (RuntimeException | Error e) {
      code = Status.Code.INTERNAL;
      throw e;
    } finally {
      if (responseBytes != ServerConnection.DEFERRED) {
        ended(code, responseBytes);
      }
    }
  }

  /** The server stopped before this queued call ran: release the request and end the call (CANCELLED). */
  void abandon() {
    discard();
    ended(Status.Code.CANCELLED, -1);
  }

  /** A response that waited for the peer to read was written ({@code OK}) or dropped. */
  void deferredDone(Status.Code code, int responseBytes) {
    ended(code, responseBytes);
  }

  private void ended(Status.Code code, int responseBytes) {
    metrics.record(code, System.nanoTime() - context.startNanos(), context.requestSize(), responseBytes);
    if (isOneway()) {
      connection.onewayDone();
    }
    connection.callDone();
  }

  private static Throwable unwrap(Throwable t) {
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }
}
