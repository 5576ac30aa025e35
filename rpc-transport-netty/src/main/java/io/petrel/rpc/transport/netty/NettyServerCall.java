package io.petrel.rpc.transport.netty;

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
 * A call that arrived on a {@link ServerConnection}, and how its answer goes back through the connection's
 * write path: the transport's {@link ServerStream} of the core's {@link ServerCall}. The contract maps to frames as docs/protocol.md ("Flags and streams")
 * says: the REQUEST or ONEWAY frame is one message and the end of the client's stream; a message with the end
 * marker is the one RESPONSE (status 0), a status alone an error RESPONSE. This server does not announce
 * {@code STREAMS}, so it has no frame yet for a message without the end and refuses one.
 */
final class NettyServerCall implements ServerStream {
  private final ServerConnection connection;
  final int requestId;
  /** The core's half of the call. */
  private final ServerCall call;
  /** Headers sent ahead of the first message with {@link #sendHeaders}, or null: the context's are used. */
  private @Nullable Metadata headers;
  /** Bytes of the request counted against the connection's share until the core lets go of it; 0 if none. */
  private int heldRequestBytes;

  /** Takes over the frame: its body is the call's one message, and the frame ends the client's stream. */
  NettyServerCall(ServerConnection connection, ServerDispatcher.Method method, ServerContext context, Frame frame) {
    this.connection = connection;
    this.requestId = frame.requestId;
    this.call = connection.dispatcher().newCall(method, context, this);
    // A REQUEST or ONEWAY is a whole unary side: one message and the end (MORE is only ever sent to servers that
    // announce STREAMS, and a v1 receiver ignores flags it does not know).
    call.messageReceived(frame.body(), true);
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

  boolean isOneway() {
    return call.isOneway();
  }

  /** Releases the request of a call refused before it ran. */
  void discard() {
    call.discard();
  }

  /** A response that waited for the peer to read was written or dropped. */
  void deferredDone(Status.Code code, int responseBytes) {
    call.deferredDone(code, responseBytes);
  }

  /** The request's bytes count against the connection's share until the core releases it. */
  void holdRequestBytes(int bytes) {
    heldRequestBytes = bytes;
  }

  @Override
  public void requestReleased() {
    int n = heldRequestBytes;
    if (n > 0) {
      heldRequestBytes = 0;
      connection.requestReleased(n);
    }
  }

  /** The headers of the call's answer, folded into its one RESPONSE frame. */
  Metadata headers() {
    Metadata h = headers;
    return h != null ? h : context().responseMetadata();
  }

  @Override
  public void sendHeaders(Metadata headers) {
    this.headers = headers; // folded into the first frame: a RESPONSE has a metadata section, there is no other
  }

  @Override
  public int sendMessage(Marshaller<Object> marshaller, Object message, boolean endOfStream) {
    if (!endOfStream) {
      throw new IllegalStateException(method().fullName() + ": a message without the end of the stream needs a"
          + " MESSAGE frame, which this server does not send (it announces no STREAMS setting); only unary and"
          + " oneway methods are served in this version");
    }
    return connection.writeResponse(this, marshaller, message);
  }

  @Override
  public void sendStatus(Status status, Metadata metadata) {
    if (status.isOk()) {
      throw new IllegalStateException(method().fullName() + ": an OK status without a message needs a MESSAGE"
          + " frame with END_WITH_STATUS, which this server does not send; a unary call ends OK with its message");
    }
    connection.writeError(requestId, status, metadata);
  }

  @Override
  public void onEnded() {
    if (isOneway()) {
      connection.onewayDone();
    }
    connection.callDone();
  }
}
