package io.petrel.rpc.spi;

import io.netty.buffer.ByteBuf;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.Status;

/**
 * The core's half of one incoming call, as a transport drives it: made by {@link ServerDispatcher#newCall} for
 * the transport's {@link ServerStream}, given the client's messages and the end of its stream, then handed to
 * {@link ServerDispatcher#execute}. The core checks the client's messages, decodes the request, runs the
 * interceptors and the handler, answers through the stream and records the call's metrics; the contract is on
 * {@link ServerStream}.
 *
 * <p>The call owns every message delivered to it and releases each exactly once: a unary or oneway call keeps
 * the first to decode it and releases any other at once; running the call releases the one it decodes,
 * {@link #discard()} and {@link #abandon()} release it when the call never runs. A unary or oneway method that
 * did not get exactly one message before the end is answered INVALID_ARGUMENT (the client sent none, or several)
 * or INTERNAL (the call was handed over before the end of the client's stream) without running the handler.
 */
public interface ServerCall {

  /** What {@link ServerStream#sendMessage} returns when the message waits for the peer to read. */
  int DEFERRED = Integer.MIN_VALUE;

  /** The call's context: method, metadata, deadline, peer, cancellation, response metadata. */
  ServerContext context();

  MethodDescriptor<?, ?> method();

  boolean isOneway();

  /**
   * One message of the client's stream; the call owns {@code message} from now on (it releases it, whatever
   * happens). {@code endOfStream}: this is the client's last message.
   *
   * @throws IllegalStateException if the end of the client's stream was already delivered (a transport bug;
   *     {@code message} is released)
   */
  void messageReceived(ByteBuf message, boolean endOfStream);

  /**
   * The end of the client's stream, after the messages delivered so far, when it comes without a message of its
   * own.
   *
   * @throws IllegalStateException if the end was already delivered (a transport bug)
   */
  void endOfStreamReceived();

  /** Releases the request of a call refused before it ran; the call never started, nothing is recorded. */
  void discard();

  /** The server stopped before this queued call ran: release the request and end the call (CANCELLED). */
  void abandon();

  /**
   * A message that waited for the peer to read ({@link #DEFERRED}) was written ({@code OK}, with its size) or
   * dropped.
   */
  void deferredDone(Status.Code code, int responseBytes);
}
