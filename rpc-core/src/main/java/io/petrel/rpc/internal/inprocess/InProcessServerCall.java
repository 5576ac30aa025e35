package io.petrel.rpc.internal.inprocess;

import io.netty.buffer.ByteBuf;
import io.petrel.rpc.Marshaller;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.Status;
import io.petrel.rpc.spi.ServerCall;
import io.petrel.rpc.spi.ServerDispatcher;
import io.petrel.rpc.spi.ServerStream;
import org.jspecify.annotations.Nullable;

/**
 * A call that arrived on an {@link InProcessConnection}, and the caller's future its answer goes to: the
 * transport's {@link ServerStream} of the core's {@link ServerCall}. The contract without frames: the marshalled request is the one message and the end of the
 * client's stream (the core owns it until decoded, as it does a Netty frame's body); a message with the end
 * marker completes the caller's future, a status alone fails it. There is no stream for a message without the
 * end, which this transport refuses.
 */
final class InProcessServerCall implements ServerStream {
  private final InProcessConnection connection;
  private final @Nullable InProcessStream caller;
  /** The core's half of the call. */
  private final ServerCall call;
  /** Headers sent ahead of the first message with {@link #sendHeaders}, or null: the context's are used. */
  private @Nullable Metadata headers;
  /** Holds a place under the connection's call limit; the thread that runs or ends the call frees it. */
  private boolean holdsPlace = true;

  InProcessServerCall(InProcessConnection connection, ServerDispatcher.Method method, ServerContext context,
      ByteBuf request, @Nullable InProcessStream caller) {
    this.connection = connection;
    this.caller = caller;
    this.call = connection.dispatcher().newCall(method, context, this);
    call.messageReceived(request, true); // a whole unary request: one message and the end
  }

  /** The core's half, for the dispatcher. */
  ServerCall call() {
    return call;
  }

  ServerContext context() {
    return call.context();
  }

  MethodDescriptor<?, ?> method() {
    return call.method();
  }

  /** Releases the request of a call refused before it ran. */
  void discard() {
    call.discard();
  }

  /** Gives up the call's place under the connection's limit; true the first time. */
  boolean releasePlace() {
    if (!holdsPlace) {
      return false;
    }
    holdsPlace = false;
    return true;
  }

  /** The caller's future, or null for a oneway. */
  @Nullable InProcessStream caller() {
    return caller;
  }

  @Override
  public void sendHeaders(Metadata headers) {
    this.headers = headers; // travel with the answer: the caller's future takes headers and message together
  }

  @Override
  public int sendMessage(Marshaller<Object> marshaller, Object message, boolean endOfStream) {
    if (!endOfStream) {
      throw new IllegalStateException(method().fullName() + ": the in-process transport answers with one message"
          + " and the end; only unary and oneway methods are served in this version");
    }
    Metadata h = headers;
    return connection.sendResponse(this, marshaller, message, h != null ? h : context().responseMetadata());
  }

  @Override
  public void sendStatus(Status status, Metadata metadata) {
    if (status.isOk()) {
      throw new IllegalStateException(method().fullName() + ": an OK status without a message has no answer in"
          + " the in-process transport; a unary call ends OK with its message");
    }
    connection.sendError(this, status, metadata);
  }

  @Override
  public void onEnded() {
    connection.callDone(this);
  }
}
