package io.petrel.rpc.spi;

import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.MethodType;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.Status;
import org.jspecify.annotations.Nullable;

/**
 * The core's server as its transports see it, the same whatever the transport: the method registry, the call
 * runtime, admission into the business executor (a call that does not fit is refused at once with
 * RESOURCE_EXHAUSTED) and the drain state. A transport decodes a request, looks its method up here
 * ({@link #lookup}), makes a {@link ServerCall} for its {@link ServerStream} ({@link #newCall}) and hands it to
 * {@link #execute}; everything per connection (framing, the per-connection call limit, cancellation by the
 * peer, write back-pressure) stays in the transport.
 */
public interface ServerDispatcher {

  /** A method the server serves; opaque to transports except for what it is. */
  interface Method {
    MethodDescriptor<?, ?> method();

    default boolean isOneway() {
      return method().type() == MethodType.ONEWAY;
    }
  }

  ServerConfig config();

  /** The server's name, for messages. */
  String name();

  /** The server's rate-limited WARN log: one line per cause per 10 s, with counts. */
  RateLimitedLog limitLog();

  /** The method with this id, or null (answer {@link #unknownMethod}). */
  @Nullable Method lookup(int methodId);

  /**
   * The status for a method id the server does not serve, asked for by {@code peer}. It is sent before any
   * interceptor runs, so to a peer that may not be authenticated: it names only the id, not the server or its
   * services; the server logs those (rate-limited WARN) for its operator.
   */
  Status unknownMethod(int methodId, Object peer);

  /**
   * The status for a response of {@code m} that its marshaller could not encode ({@code t}, not a frame-size
   * refusal nor an {@link OutOfMemoryError}, which the transport handles itself), after logging it (rate-limited
   * WARN with the stack trace). The marshaller's exception is the server's internals: the caller gets its class
   * and message only with {@code exceptionDetails(ALL)}. Every transport answers an encode failure with this.
   */
  Status responseEncodeFailed(MethodDescriptor<?, ?> m, Throwable t);

  /** The status for a call of {@code m} that came as a oneway when it is unary, or the other way round. */
  static @Nullable Status checkType(Method m, boolean oneway) {
    if (m.isOneway() == oneway) {
      return null;
    }
    return Status.INVALID_ARGUMENT.withDescription(m.method().fullName() + " is a " + m.method().type()
        + " method but was called as " + (oneway ? "ONEWAY" : "UNARY"));
  }

  /** True once the server is shutting down: new calls are refused with {@link #shuttingDown()}. */
  boolean isShutdown();

  /** The status of a call that arrives while the server shuts down. */
  Status shuttingDown();

  /**
   * A call of {@code m} that the transport answered with {@code code} before it ran: refused for a limit (the
   * connection's calls in flight, its share of the buffers), for a shutdown, or for the wrong call type. Counted
   * in {@code rpc.server.calls} with that code, as a call the business pool refused is, so that an operator sees
   * it. The transport's event loop calls it; it must be quick.
   */
  default void refused(Method m, Status.Code code, int requestBytes) {}

  /**
   * The core's half of a call of {@code method} whose answer goes back through {@code stream}; the transport
   * delivers the client's messages to it, then hands it to {@link #execute}.
   *
   * @param context the call's context, made by the transport from what it decoded (metadata, deadline, peer,
   *     request size, start time, peer certificates)
   */
  ServerCall newCall(Method method, ServerContext context, ServerStream stream);

  /**
   * Runs the call: at once on this thread in direct mode, else on the business executor. Returns null when the
   * call was admitted (it ends through its stream), or the status to refuse it with when the executor is full
   * or shut down: the call has not run, and the transport undoes its bookkeeping, calls
   * {@link ServerCall#discard()} and answers with the status.
   */
  @Nullable Status execute(ServerCall call);

  /** Calls refused because the executor was full, over the server's life. */
  long rejectedCalls();

  /**
   * Called by the core after every call, and by a transport when a call it counted in flight went away without
   * running; cheap unless the server is shutting down.
   */
  void callEnded();

  /**
   * An error after which this server cannot be trusted to serve (an {@link OutOfMemoryError} in any of its
   * threads, or an event loop that ended while the server was running): the server logs it once, at ERROR,
   * and stops (docs/reliability.md, row 12). Any thread; never throws.
   *
   * @param where the thread or the part of the server it happened in
   */
  void fatal(String where, Throwable error);

  /** True for the errors that stop the server when they reach one of its threads: {@link OutOfMemoryError}. */
  static boolean isFatal(Throwable t) {
    return t instanceof OutOfMemoryError;
  }
}
