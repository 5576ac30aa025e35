package io.petrel.rpc.spi;

import io.netty.buffer.ByteBuf;
import io.petrel.rpc.Marshaller;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.MethodType;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.ServerInterceptor;
import io.petrel.rpc.ServerMethodDefinition;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One incoming call, as a transport hands it to the core: a {@link Runnable} that the {@link ServerDispatcher}
 * runs on the business executor (or at once, in direct mode). Core's part is the same for every transport:
 * check the client's messages, decode the request, run the interceptors and the handler, turn what they return
 * or throw into an answer, record the call's metrics. The transport's part is the subclass: it delivers what
 * the client sent, carries the answer back, and keeps its per-connection bookkeeping ({@link #onEnded}).
 *
 * <h2>The contract: a sequence of messages with an end marker, each way</h2>
 *
 * <p><b>Inbound</b> (transport to core, final methods): the messages of the client's stream, each with
 * {@link #messageReceived(ByteBuf, boolean)}, whose {@code endOfStream} says that it is the client's last, or
 * with {@link #endOfStreamReceived()} for an end that comes without a message. The call owns every message from
 * then on and releases each exactly once: a unary or oneway call keeps the first to decode it and releases any
 * other at once; {@link #run()} releases the one it decodes, {@link #discard()} and {@link #abandon()} release it
 * when the call never runs. In this version a transport delivers a call's messages and its end when it makes the
 * call, before {@link ServerDispatcher#execute}; core then checks that a unary or oneway method got exactly one
 * message before the end, and answers INVALID_ARGUMENT (the client sent none, or several) or INTERNAL (the call
 * was handed over before the end of the client's stream) without running the handler.
 *
 * <p><b>Outbound</b> (core to transport, abstract): {@link #sendHeaders} (the response headers on their own),
 * {@link #sendMessage} (one message of the answer; {@code endOfStream} marks the last, which also ends the call
 * with OK) and {@link #sendStatus} (the end of the call with a status). A unary answer is one message with the
 * end marker, or the status alone; core calls one of them once and then nothing else (a oneway call, none). Its
 * headers are folded into that one frame: core does not call {@code sendHeaders} for it, and the transport sends
 * {@link ServerContext#responseMetadata()} with the message, or the metadata {@code sendStatus} is given.
 *
 * <p><b>How the transports map it</b> (docs/protocol.md, "Flags and streams", is the specification):
 *
 * <table>
 *   <caption>Transport calls and the frames they become</caption>
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
public abstract class ServerCall implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(ServerCall.class);

  /** What {@link #sendMessage} returns when the message waits for the peer to read; the call is not over. */
  public static final int DEFERRED = Integer.MIN_VALUE;

  private final ServerDispatcher dispatcher;
  private final ServerMethodDefinition<Object, Object> def;
  private final ServerDispatcher.Method entry;
  private final ServerContext context;
  /** The request: the first message the client sent, owned until decoded (or released unread). */
  private @Nullable ByteBuf request;
  /** Messages delivered so far, the first one included; a unary or oneway call wants exactly one. */
  private int messages;
  /** The end of the client's stream has been delivered. */
  private boolean ended;

  /**
   * @param entry the method, from {@link ServerDispatcher#lookup}
   * @param context the call's context, made by the transport from what it decoded (metadata, deadline, peer,
   *     request size, start time, peer certificates)
   */
  @SuppressWarnings("unchecked")
  protected ServerCall(ServerDispatcher dispatcher, ServerDispatcher.Method entry, ServerContext context) {
    this.dispatcher = dispatcher;
    this.entry = entry;
    this.def = (ServerMethodDefinition<Object, Object>) entry.definition();
    this.context = context;
  }

  /** The call's context: method, metadata, deadline, peer, cancellation, response metadata. */
  public final ServerContext context() {
    return context;
  }

  public final MethodDescriptor<?, ?> method() {
    return def.method();
  }

  public final boolean isOneway() {
    return def.method().type() == MethodType.ONEWAY;
  }

  // ---- inbound: the transport delivers the client's stream ----

  /**
   * The transport delivers one message of the client's stream; the call owns {@code message} from now on
   * (it releases it, whatever happens). {@code endOfStream}: this is the client's last message. In this version
   * every message and the end come before the call is handed to {@link ServerDispatcher#execute}.
   *
   * @throws IllegalStateException if the end of the client's stream was already delivered (a transport bug;
   *     {@code message} is released)
   */
  protected final void messageReceived(ByteBuf message, boolean endOfStream) {
    if (ended) {
      message.release();
      throw new IllegalStateException("a message of " + def.method().fullName() + " was delivered after the end"
          + " of the client's stream; a transport delivers nothing after the end");
    }
    if (messages++ == 0) {
      request = message;
    } else {
      message.release(); // a unary or oneway method reads one message: run() refuses the call
    }
    ended = endOfStream;
  }

  /**
   * The transport delivers the end of the client's stream, after the messages delivered so far, when it comes
   * without a message of its own.
   *
   * @throws IllegalStateException if the end was already delivered (a transport bug)
   */
  protected final void endOfStreamReceived() {
    if (ended) {
      throw new IllegalStateException("the end of the client's stream of " + def.method().fullName() + " was"
          + " delivered twice");
    }
    ended = true;
  }

  // ---- outbound: core answers through the transport ----

  /**
   * Sends the response headers on their own, ahead of the first message. Core calls it at most once, before any
   * message, and not in this version: a unary answer carries its headers in its one frame (see the class
   * comment). A transport may hold them and send them with the next frame.
   */
  protected abstract void sendHeaders(Metadata headers);

  /**
   * Sends one message of the answer (never called for oneway calls). The first message carries the headers:
   * those given to {@link #sendHeaders}, or else the context's {@link ServerContext#responseMetadata()}.
   *
   * @param endOfStream this is the last message, and it ends the call with OK: core calls nothing after it. A
   *     unary answer is one message with the end; core does not send a message without the end in this version
   * @return the message's size in bytes; -1 if it could not be sent and an error status was sent in its place
   *     (too large, out of the server's buffer budget...), which ends the call; or {@link #DEFERRED} if it waits
   *     for the peer to read, in which case the transport ends the call later with {@link #deferredDone}
   */
  protected abstract int sendMessage(Marshaller<Object> marshaller, Object message, boolean endOfStream);

  /**
   * Ends the call with {@code status} (never called for oneway calls; not OK in this version, where an OK call
   * ends with its one message). When no message was sent, which is every such call in this version, the status
   * is the whole answer and {@code metadata} all of its metadata: core passes the context's response metadata
   * (headers and trailers in one, like gRPC's trailers-only response). After messages it is the trailers.
   */
  protected abstract void sendStatus(Status status, Metadata metadata);

  /**
   * The call has ended (answered, failed, dropped or abandoned): the transport's bookkeeping (the connection's
   * count of calls in flight). Called exactly once, from any thread.
   */
  protected abstract void onEnded();

  /** Releases the request of a call refused before it ran; the call never started, nothing is recorded. */
  public final void discard() {
    releaseRequest();
  }

  @Override
  public final void run() {
    Object value;
    try {
      if (messages != 1 || !ended) {
        finish(null, badStream().asException());
        return;
      }
      if (context.isCancelled()) {
        // The caller has given up already (deadline passed or cancelled); do not spend a handler on it.
        finish(null, Status.DEADLINE_EXCEEDED.withDescription("the call's deadline passed or it was cancelled"
            + " while it waited in the server's queue; the handler was not run").asException());
        return;
      }
      try {
        value = def.method().requestMarshaller().read(Objects.requireNonNull(request, "the call's one message"));
      } catch (Throwable t) {
        finish(null, Status.INVALID_ARGUMENT.withDescription("cannot decode the request of "
            + def.method().fullName() + ": " + Status.describe(t)).asException());
        return;
      }
    } finally {
      releaseRequest();
    }
    ServerContext previous = context.attach();
    try {
      List<ServerInterceptor> interceptors = dispatcher.interceptors();
      if (interceptors.isEmpty() && !def.isAsync()) {
        // The plain path: no stage, no chain.
        finish(Objects.requireNonNull(def.handler(), "a method that is not async has a blocking handler").invoke(value),
            null);
      } else {
        CompletionStage<Object> stage = ServerChain.invoke(interceptors, def, value,
            context);
        stage.whenComplete(this::finish);
      }
    } catch (Throwable t) {
      finish(null, t);
    } finally {
      ServerContext.restore(previous);
    }
  }

  /** Why a unary or oneway call's inbound stream is not one message and the end; the handler is not run. */
  private Status badStream() {
    String method = def.method().fullName() + ", a " + def.method().type() + " method,";
    if (messages > 1) {
      return Status.INVALID_ARGUMENT.withDescription("the client sent " + messages + " request messages to "
          + method + " which takes exactly one; the handler was not run (send one request per call)");
    }
    if (!ended) {
      String why = "the server ran " + method + " before the end of the client's"
          + " stream (" + messages + (messages == 1 ? " message" : " messages") + " so far): a bug in the server's"
          + " transport, which must deliver a call's message and its end before it hands the call over; the"
          + " handler was not run";
      dispatcher.limitLog().warn("stream not ended: " + def.method().fullName(), why);
      return Status.INTERNAL.withDescription(why);
    }
    return Status.INVALID_ARGUMENT.withDescription("the client ended its stream to " + method + " without a"
        + " request message; it takes exactly one; the handler was not run (send one request per call)");
  }

  private void finish(@Nullable Object response, @Nullable Throwable error) {
    Status.Code code = Status.Code.OK;
    int responseBytes = -1;
    try {
      if (error != null) {
        Throwable t = unwrap(error);
        Status status = ErrorAnswers.statusOf(t, def.method(), dispatcher.config().exceptionMapper());
        Metadata metadata = context.responseMetadata();
        if (dispatcher.isStoppingNow()) {
          // shutdownNow interrupted the handler: what it threw says nothing about the call.
          status = Status.UNAVAILABLE.withDescription("server '" + dispatcher.name() + "' was stopped (shutdownNow)"
              + " while " + def.method().fullName() + " ran; retry on another server");
          t = status.asException();
        } else if (!isOneway()) {
          metadata = ErrorAnswers.metadataOf(t, metadata); // a declared exception's class and message
        }
        code = status.code();
        if (t instanceof StatusException || !(t instanceof RuntimeException || t instanceof Error)) {
          // A status, or a checked exception the service declares: an answer, not a server fault.
          log.debug("{} failed with {}", def.method().fullName(), status);
        } else {
          dispatcher.limitLog().warn("handler threw: " + def.method().fullName(),
              def.method().fullName() + " threw; the caller gets " + status.code(), t);
        }
        if (!isOneway()) {
          sendStatus(ErrorAnswers.capped(status), metadata); // the whole answer: no message was sent
        }
        if (ServerDispatcher.isFatal(t)) {
          dispatcher.fatal("the handler of " + def.method().fullName() + " (thread "
              + Thread.currentThread().getName() + ")", t);
        }
      } else if (!isOneway()) {
        // The one message of a unary answer, with the end marker; its headers travel with it.
        // A null response goes to the marshaller as it is (a ValueMarshaller writes it as an absent field): the
        // marshaller's type is then Marshaller<@Nullable Resp>, which NullAway's standard mode does not model.
        @SuppressWarnings("NullAway")
        int sent = sendMessage(Objects.requireNonNull(def.method().responseMarshaller(), "a unary method has a"
            + " response marshaller"), response, true);
        responseBytes = sent;
        if (responseBytes == DEFERRED) {
          return; // the message waits for the peer to read; deferredDone ends the call
        }
        if (responseBytes < 0) {
          code = Status.Code.RESOURCE_EXHAUSTED; // or INTERNAL: the response could not be sent, an error was
        }
      }
    } catch (RuntimeException | Error e) {
      code = Status.Code.INTERNAL;
      throw e;
    } finally {
      if (responseBytes != DEFERRED) {
        ended(code, responseBytes);
      }
    }
  }

  /** The executor refused the call: record it as RESOURCE_EXHAUSTED (the transport answers and discards). */
  final void refused() {
    entry.metrics().record(Status.Code.RESOURCE_EXHAUSTED, System.nanoTime() - context.startNanos(),
        context.requestSize(), -1);
  }

  /** The server stopped before this queued call ran: release the request and end the call (CANCELLED). */
  public final void abandon() {
    releaseRequest();
    ended(Status.Code.CANCELLED, -1);
  }

  /**
   * A message that waited for the peer to read ({@link #DEFERRED}) was written ({@code OK}, with its size) or
   * dropped.
   */
  public final void deferredDone(Status.Code code, int responseBytes) {
    ended(code, responseBytes);
  }

  private void ended(Status.Code code, int responseBytes) {
    entry.metrics().record(code, System.nanoTime() - context.startNanos(), context.requestSize(), responseBytes);
    try {
      onEnded();
    } finally {
      dispatcher.callEnded();
    }
  }

  /** Releases the request if the call still holds it (each message is released exactly once). */
  private void releaseRequest() {
    ByteBuf b = request;
    request = null;
    if (b != null) {
      b.release();
      requestReleased();
    }
  }

  /**
   * The call has let go of its request message (decoded, refused or abandoned): a transport that counts the
   * bytes of requests waiting for the business pool stops counting this one. Called at most once, from any
   * thread; the default does nothing.
   */
  protected void requestReleased() {}

  private static Throwable unwrap(Throwable t) {
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }
}
