package io.petrel.rpc.spi;

import org.jspecify.annotations.Nullable;

/**
 * One attempt of a client call on a transport: the request side of a stream of messages with an end, made by
 * {@link ClientTransport#newStream} for one connection. The core sends the request messages
 * ({@link #sendMessage}), then says that no more follow ({@link #halfClose}); the transport reports what the
 * server sends to the stream's {@link ClientStreamListener}: response headers, messages, and one close with a
 * status and how far the attempt got. A unary or oneway call sends one message and half-closes at once; a call
 * that is tried again gets a new stream. A transport implements it; the core calls {@link #sendMessage} and
 * {@link #halfClose} on one thread, in that order, and {@link #cancel} from any thread.
 */
public interface ClientStream {

  /**
   * Encodes {@code message} (of the stream's method's request type; null where its marshaller takes null, e.g. a
   * method without parameters) on the calling thread and sends it, or keeps
   * it until the stream can. Throws what encoding throws: a marshaller's exception (the core fails the call with
   * INVALID_ARGUMENT or INTERNAL), a {@link FrameSizes.TooLarge} (RESOURCE_EXHAUSTED, "not sent"), a
   * {@link io.petrel.rpc.StatusException} (its status); nothing once the message is handed on.
   *
   * @return the encoded message's size in bytes (the call's request-size meter)
   */
  int sendMessage(@Nullable Object message) throws Exception;

  /**
   * No more request messages. A transport that carries a whole request in one frame (unary and oneway calls on
   * both of Petrel's) hands it to its connection here. From here on the transport ends the attempt, by the
   * call's deadline at the latest: one {@link ClientStreamListener#onClose} (or
   * {@link ClientStreamListener#onDeadlineExceeded}).
   */
  void halfClose();

  /**
   * The call ended on the client (cancelled by its caller, completed by hand): stop waiting for the server, tell
   * it if the request was sent, release what the attempt holds. The listener hears nothing more that matters (the
   * call has ended). Any thread, at most once, possibly before {@link #halfClose}.
   */
  void cancel(io.petrel.rpc.Status status);

  /** Who the attempt talks to, for messages: the endpoint's "host:port", or the in-process server's name. */
  String peer();

  /**
   * Where the transport's thread gathers the wake-ups of blocking callers during a read batch (see
   * {@link ClientTransportContext#newWakeBatch()}), or null to wake each caller at once. The default is null.
   */
  default @Nullable WakeBatch wakeBatch() {
    return null;
  }
}
