package io.petrel.rpc.spi;

import io.netty.buffer.ByteBuf;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.Status;

/**
 * What a {@link ClientStream} reports of its attempt, implemented by the core's call: the server's response as a
 * sequence of messages with an end. The order is {@link #onHeaders} (at most once), {@link #onMessage} (zero or
 * more times), then exactly one end: {@link #onClose} or {@link #onDeadlineExceeded}. A unary response is one
 * message and a close with OK; an error is a close with the server's status and no message; a oneway call is
 * closed with OK once its request is written. A server-streaming method (not offered to users yet) would get
 * several messages before its close, through the same contract. Called on the transport's threads, one event at a
 * time, holding no lock (the core may start another attempt from {@link #onClose}).
 */
public interface ClientStreamListener {

  /** The server's response metadata, before its first message or its close. */
  void onHeaders(Metadata headers);

  /**
   * A response message. The transport keeps ownership of {@code message}: the core decodes it, or copies its
   * bytes, before returning.
   */
  void onMessage(ByteBuf message);

  /**
   * The attempt ended with {@code status} (OK: the server's response is complete), having got as far as
   * {@code progress}; {@code trailers} is what the server sent with its end ({@link Metadata#EMPTY} on Petrel's
   * wire). The core decides whether a failed attempt is made again ({@link AttemptProgress}, docs/cluster.md
   * "Retry rules"). A status the transport decided (a lost connection, a limit) says what happened and what to do.
   */
  void onClose(Status status, Metadata trailers, AttemptProgress progress);

  /**
   * The call's deadline passed before the attempt ended (the transport enforces it, on its own timers): the
   * attempt is over, and cancelled on the server if it was sent, before this is called. {@code detail} is added
   * to the core's message (" (the request was not sent yet)", or "").
   */
  void onDeadlineExceeded(String detail);
}
