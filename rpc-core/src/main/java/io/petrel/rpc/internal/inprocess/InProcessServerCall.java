package io.petrel.rpc.internal.inprocess;

import io.netty.buffer.ByteBuf;
import io.petrel.rpc.Marshaller;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.Status;
import io.petrel.rpc.spi.ServerCall;
import io.petrel.rpc.spi.ServerDispatcher;
import org.jspecify.annotations.Nullable;

/**
 * A call that arrived on an {@link InProcessConnection}: its marshalled request (owned until decoded, released
 * by the core's {@link ServerCall} exactly as a Netty frame is) and the caller's future its answer goes to.
 */
final class InProcessServerCall extends ServerCall {
  private final InProcessConnection connection;
  private final @Nullable InProcessCall<?> caller;
  private @Nullable ByteBuf request;
  /** Holds a place under the connection's call limit; the thread that runs or ends the call frees it. */
  private boolean holdsPlace = true;

  InProcessServerCall(InProcessConnection connection, ServerDispatcher.Method method, ServerContext context,
      ByteBuf request, @Nullable InProcessCall<?> caller) {
    super(connection.dispatcher(), method, context);
    this.connection = connection;
    this.request = request;
    this.caller = caller;
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
  @Nullable InProcessCall<?> caller() {
    return caller;
  }

  @Override
  protected ByteBuf requestBody() {
    ByteBuf b = request;
    if (b == null) {
      throw new IllegalStateException("the request of " + method().fullName() + " was already released");
    }
    return b;
  }

  @Override
  protected void releaseRequest() {
    ByteBuf b = request;
    request = null;
    if (b != null) {
      b.release();
    }
  }

  @Override
  protected int sendResponse(Marshaller<Object> marshaller, Object response, Metadata metadata) {
    return connection.sendResponse(this, marshaller, response, metadata);
  }

  @Override
  protected void sendError(Status status, Metadata metadata) {
    connection.sendError(this, status, metadata);
  }

  @Override
  protected void onEnded() {
    connection.callDone(this);
  }
}
