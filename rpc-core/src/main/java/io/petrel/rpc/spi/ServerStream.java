package io.petrel.rpc.spi;

import io.petrel.rpc.Marshaller;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.Status;

/**
 * The transport's half of one incoming call: how the core's answer goes back to the client, and the transport's
 * bookkeeping when the call ends. A transport makes one per call it decodes and hands it to
 * {@link ServerDispatcher#newCall}, which returns the core's half, the {@link ServerCall}.
 *
 * <h2>The contract: a sequence of messages with an end marker, each way</h2>
 *
 * <p><b>Inbound</b> (transport to core, on the {@link ServerCall}): the messages of the client's stream, each
 * with {@link ServerCall#messageReceived}, whose {@code endOfStream} says that it is the client's last, or with
 * {@link ServerCall#endOfStreamReceived()} for an end that comes without a message. In this version a transport
 * delivers a call's messages and its end when it makes the call, before {@link ServerDispatcher#execute}.
 *
 * <p><b>Outbound</b> (core to transport, here): {@link #sendHeaders} (the response headers on their own),
 * {@link #sendMessage} (one message of the answer; {@code endOfStream} marks the last, which also ends the call
 * with OK) and {@link #sendStatus} (the end of the call with a status). A unary answer is one message with the
 * end marker, or the status alone; the core calls one of them once and then nothing else (a oneway call, none).
 * Its headers are folded into that one frame: the core does not call {@code sendHeaders} for it, and the
 * transport sends {@link ServerContext#responseMetadata()} with the message, or the metadata {@code sendStatus}
 * is given.
 *
 * <p><b>How the transports map it</b> (docs/protocol.md, "Flags and streams", is the specification):
 *
 * <table>
 *   <caption>Core calls and the frames they become</caption>
 *   <tr><th>call</th><th>today: unary and oneway</th><th>later: server streaming</th></tr>
 *   <tr><td>{@code messageReceived(m, true)}</td><td>a REQUEST or ONEWAY frame (MORE clear: one message and
 *     the end)</td><td>the same</td></tr>
 *   <tr><td>{@code sendHeaders(h)}</td><td>not called: the headers are the metadata section of the one
 *     RESPONSE</td><td>held by the transport and sent as the metadata of the call's first frame</td></tr>
 *   <tr><td>{@code sendMessage(m, v, false)}</td><td>not called (the transports refuse it)</td><td>the first:
 *     RESPONSE, status 0, MORE set; the others: MESSAGE (type 9), MORE set</td></tr>
 *   <tr><td>{@code sendMessage(m, v, true)}</td><td>the one RESPONSE, status 0, flags 0: the frame every
 *     version-1 server sends</td><td>MESSAGE with MORE clear (the last message; the call ends OK, no
 *     trailers)</td></tr>
 *   <tr><td>{@code sendStatus(s, md)}</td><td>an error RESPONSE: status {@code s}, the description as body,
 *     {@code md} as metadata</td><td>MESSAGE with END_WITH_STATUS, status {@code s} (0 for OK), the
 *     description as body, the trailers {@code md} as metadata; before any message, an error is still the
 *     error RESPONSE</td></tr>
 * </table>
 *
 * <p>The in-process transport carries the same calls without frames: a message with the end completes the
 * caller's future with the response, a status fails it.
 */
public interface ServerStream {

  /**
   * Sends the response headers on their own, ahead of the first message. The core calls it at most once, before
   * any message, and not in this version: a unary answer carries its headers in its one frame. A transport may
   * hold them and send them with the next frame.
   */
  void sendHeaders(Metadata headers);

  /**
   * Sends one message of the answer (never called for oneway calls). The first message carries the headers:
   * those given to {@link #sendHeaders}, or else the context's {@link ServerContext#responseMetadata()}.
   *
   * @param endOfStream this is the last message, and it ends the call with OK: the core calls nothing after it.
   *     A unary answer is one message with the end; the core does not send a message without the end in this
   *     version
   * @return the message's size in bytes; -1 if it could not be sent and an error status was sent in its place
   *     (too large, out of the server's buffer budget...), which ends the call; or {@link ServerCall#DEFERRED}
   *     if it waits for the peer to read, in which case the transport ends the call later with
   *     {@link ServerCall#deferredDone}
   */
  int sendMessage(Marshaller<Object> marshaller, Object message, boolean endOfStream);

  /**
   * Ends the call with {@code status} (never called for oneway calls; not OK in this version, where an OK call
   * ends with its one message). When no message was sent, which is every such call in this version, the status
   * is the whole answer and {@code metadata} all of its metadata: the core passes the context's response
   * metadata (headers and trailers in one, like gRPC's trailers-only response). After messages it is the
   * trailers.
   */
  void sendStatus(Status status, Metadata metadata);

  /**
   * The call has ended (answered, failed, dropped or abandoned): the transport's bookkeeping (the connection's
   * count of calls in flight). Called exactly once, from any thread.
   */
  void onEnded();

  /**
   * The call has let go of its request message (decoded, refused or abandoned): a transport that counts the
   * bytes of requests waiting for the business pool stops counting this one. Called at most once, from any
   * thread; the default does nothing.
   */
  default void requestReleased() {}
}
