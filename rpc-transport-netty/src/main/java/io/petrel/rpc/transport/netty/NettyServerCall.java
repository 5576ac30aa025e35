package io.petrel.rpc.transport.netty;

import io.netty.buffer.ByteBuf;
import io.petrel.rpc.Marshaller;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.Status;
import io.petrel.rpc.spi.ServerCall;
import io.petrel.rpc.spi.ServerDispatcher;

/**
 * A call that arrived on a {@link ServerConnection}: its request frame (owned until decoded) and how its answer
 * goes back, through the connection's write path.
 */
final class NettyServerCall extends ServerCall {
  private final ServerConnection connection;
  final int requestId;
  private Frame frame;

  NettyServerCall(ServerConnection connection, ServerDispatcher.Method method, ServerContext context, Frame frame) {
    super(connection.dispatcher(), method, context);
    this.connection = connection;
    this.frame = frame;
    this.requestId = frame.requestId;
  }

  @Override
  protected ByteBuf requestBody() {
    return frame.body();
  }

  @Override
  protected void releaseRequest() {
    Frame f = frame;
    frame = null;
    if (f != null) {
      f.release();
    }
  }

  @Override
  protected int sendResponse(Marshaller<Object> marshaller, Object response, Metadata metadata) {
    return connection.writeResponse(this, marshaller, response);
  }

  @Override
  protected void sendError(Status status, Metadata metadata) {
    connection.writeError(requestId, status, metadata);
  }

  @Override
  protected void onEnded() {
    if (isOneway()) {
      connection.onewayDone();
    }
    connection.callDone();
  }
}
