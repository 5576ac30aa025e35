package io.petrel.rpc.transport.netty;

import io.netty.buffer.ByteBuf;
import io.petrel.rpc.Deadline;
import io.petrel.rpc.MethodType;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.ServerMethodDefinition;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One incoming call, run on the business executor (or the event loop in direct mode): decode the request,
 * invoke the handler, encode the response into the connection's write queue. Owns the request frame until
 * it is decoded.
 */
final class ServerCall implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(ServerCall.class);

  private final ServerConnection connection;
  private final ServerMethodDefinition<Object, Object> def;
  private final int requestId;
  private final Deadline deadline;
  private Frame frame;

  @SuppressWarnings("unchecked")
  ServerCall(ServerConnection connection, ServerMethodDefinition<?, ?> def, Frame frame) {
    this.connection = connection;
    this.def = (ServerMethodDefinition<Object, Object>) def;
    this.frame = frame;
    this.requestId = frame.requestId;
    this.deadline = frame.timeoutMillis == 0 ? null : Deadline.afterNanos(frame.timeoutMillis * 1_000_000L);
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
    ServerContext ctx;
    try {
      if (deadline != null && deadline.isExpired()) {
        // The caller has given up already; do not spend a handler on it.
        finish(null, Status.DEADLINE_EXCEEDED.withDescription("deadline passed while the call waited in the"
            + " server's queue; the handler was not run").asException());
        return;
      }
      ByteBuf body = f.body();
      try {
        request = def.method().requestMarshaller().read(body);
      } catch (Throwable t) {
        finish(null, Status.INVALID_ARGUMENT.withDescription("cannot decode the request of "
            + def.method().fullName() + ": " + Status.describe(t)).asException());
        return;
      }
      ctx = new ServerContext(def.method(), f.metadata, deadline, connection.remoteAddress());
    } finally {
      f.release();
    }
    ServerContext previous = ctx.attach();
    try {
      if (def.isAsync()) {
        CompletionStage<Object> stage = def.asyncHandler().invoke(request);
        if (stage == null) {
          finish(null, new NullPointerException("async handler of " + def.method().fullName()
              + " returned null instead of a CompletionStage"));
        } else {
          stage.whenComplete(this::finish);
        }
      } else {
        finish(def.handler().invoke(request), null);
      }
    } catch (Throwable t) {
      finish(null, t);
    } finally {
      ServerContext.restore(previous);
    }
  }

  private void finish(Object response, Throwable error) {
    try {
      if (error != null) {
        Throwable t = unwrap(error);
        Status status = Status.fromThrowable(t);
        if (t instanceof StatusException) {
          log.debug("{} failed with {}", def.method().fullName(), status);
        } else {
          log.warn("{} threw; the caller gets {}", def.method().fullName(), status.code(), t);
        }
        if (!isOneway()) {
          connection.writeError(requestId, status);
        }
      } else if (!isOneway()) {
        connection.writeResponse(requestId, def.method().responseMarshaller(), response, def.method());
      }
    } finally {
      connection.callDone();
    }
  }

  private static Throwable unwrap(Throwable t) {
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }
}
