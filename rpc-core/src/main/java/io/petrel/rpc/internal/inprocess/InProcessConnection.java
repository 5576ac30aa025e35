package io.petrel.rpc.internal.inprocess;

import io.petrel.rpc.spi.FrameSizes;
import io.netty.buffer.ByteBuf;
import io.petrel.rpc.Deadline;
import io.petrel.rpc.InProcessAddress;
import io.petrel.rpc.Marshaller;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.Status;
import io.petrel.rpc.spi.ServerConfig;
import io.petrel.rpc.spi.ServerDispatcher;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's side of one in-process client: what a socket connection is to the Netty transport. It checks
 * each request as the Netty server's connection does (sizes, method, shutdown, its call limit, call type), makes
 * the {@link InProcessServerCall} for the core's {@link ServerDispatcher}, counts its calls in flight, and
 * carries answers back to the caller's future. Requests arrive on the callers' threads, so unlike a Netty
 * connection (one event loop) its state is thread-safe.
 */
final class InProcessConnection {
  private static final Logger log = LoggerFactory.getLogger(InProcessConnection.class);

  private final InProcessServerTransport server;
  private final InProcessAddress peer;
  private final String clientName;
  /**
   * What maxConcurrentCallsPerConnection counts, as the Netty server does: a unary call until its answer is handed
   * to the caller (so a caller that sends its next call on receiving an answer always finds the place free), a
   * oneway until it ends.
   */
  private final AtomicInteger active = new AtomicInteger();
  /** Calls admitted and not yet ended (answered, failed, dropped or abandoned): what a drain waits for. */
  private final AtomicInteger inFlight = new AtomicInteger();
  private final Set<InProcessServerCall> calls = ConcurrentHashMap.newKeySet();
  private final AtomicBoolean removed = new AtomicBoolean();
  private final CompletableFuture<Void> drained = new CompletableFuture<>();
  /** The server is draining: no new call on this connection (the client's next call looks for another). */
  private volatile boolean goaway;
  private volatile boolean closed;
  private volatile @Nullable String closedWhy;

  InProcessConnection(InProcessServerTransport server, InProcessAddress peer, String clientName) {
    this.server = server;
    this.peer = peer;
    this.clientName = clientName;
  }

  ServerDispatcher dispatcher() {
    return server.dispatcher();
  }

  boolean isUsable() {
    return !goaway && !closed;
  }

  int inFlight() {
    return inFlight.get();
  }

  /**
   * The caller's thread: a request for the server. Takes ownership of {@code body}; ends {@code call} with an
   * error if the server refuses the request (a refused oneway is dropped, as over a socket).
   */
  void dispatch(InProcessStream call, Metadata metadata, int metaLen, ByteBuf body,
      @Nullable Deadline deadline, boolean oneway) {
    MethodDescriptor<?, ?> method = call.method();
    ServerConfig config = server.config();
    ServerDispatcher dispatcher = server.dispatcher();
    int bodySize = body.readableBytes();
    int frameSize = Frames.HEADER_SIZE + metaLen + bodySize;
    if (frameSize > config.maxFrameSize() || metaLen > config.maxMetadataSize()) {
      body.release();
      boolean frame = frameSize > config.maxFrameSize();
      Status status = Status.RESOURCE_EXHAUSTED.withDescription((frame ? "request of " + frameSize
          : "metadata of " + metaLen) + " bytes exceeds the server's max" + (frame ? "FrameSize " : "MetadataSize ")
          + (frame ? config.maxFrameSize() : config.maxMetadataSize()) + " (raise RpcServer.builder().max"
          + (frame ? "FrameSize" : "MetadataSize") + ")");
      dispatcher.limitLog().warn(frame ? "maxframe" : "maxmetadata", status.description() + " from " + peer
          + ": refused");
      reject(call, oneway, status);
      return;
    }
    ServerDispatcher.Method def = dispatcher.lookup(method.id());
    if (def == null) {
      body.release();
      reject(call, oneway, dispatcher.unknownMethod(method.id(), peer));
      return;
    }
    // Each refusal below is counted for its method (rpc.server.calls), as the business pool's are.
    if (dispatcher.isShutdown()) {
      body.release();
      // The shutdown refuses calls before its GOAWAY reaches this connection (stopAccepting): go away first, so
      // that the refused call, sent again, looks for another connection instead of coming back to this one.
      goaway = true;
      Status refusal = dispatcher.shuttingDown();
      dispatcher.refused(def, refusal.code(), bodySize);
      refuse(call, oneway, refusal);
      return;
    }
    Status wrongType = ServerDispatcher.checkType(def, oneway);
    if (wrongType != null) {
      body.release();
      dispatcher.refused(def, wrongType.code(), bodySize);
      reject(call, oneway, wrongType);
      return;
    }
    int limit = config.maxConcurrentCallsPerConnection();
    if (!admit(limit)) {
      body.release();
      dispatcher.refused(def, Status.Code.RESOURCE_EXHAUSTED, bodySize);
      refuse(call, oneway, Status.RESOURCE_EXHAUSTED.withDescription("this connection already has " + limit
          + " calls in flight, the server's maxConcurrentCallsPerConnection (raise it with"
          + " RpcServer.builder().maxConcurrentCallsPerConnection, or spread calls over more connections)"));
      return;
    }
    long start = System.nanoTime();
    ServerContext context = new ServerContext(def.method(), metadata, deadline, peer, bodySize, start);
    InProcessServerCall serverCall = new InProcessServerCall(this, def, context, body, oneway ? null : call);
    calls.add(serverCall);
    if (closed) {
      // Closed while this call came in (after the connection was found usable): it never reached the server.
      if (calls.remove(serverCall)) {
        serverCall.discard();
        freePlace(serverCall);
        ended();
        dispatcher.callEnded();
        call.onRefused(Status.UNAVAILABLE.withDescription("connection to in-process server '" + server.name()
            + "' closed" + (closedWhy == null ? "" : " (" + closedWhy + ")") + " before " + method.fullName()
            + " reached it"));
      }
      return;
    }
    if (!oneway) {
      call.serverContext(context);
    }
    Status refused = dispatcher.execute(serverCall.call());
    if (refused != null) {
      calls.remove(serverCall);
      serverCall.discard();
      freePlace(serverCall);
      ended();
      dispatcher.callEnded();
      refuse(call, oneway, refused); // the executor is full (or shut down): the call never ran
    }
  }

  /** Takes a place under the connection's call limit (and counts the call in flight), or returns false. */
  private boolean admit(int limit) {
    for (;;) {
      int n = active.get();
      if (n >= limit) {
        return false;
      }
      if (active.compareAndSet(n, n + 1)) {
        inFlight.incrementAndGet();
        return true;
      }
    }
  }

  /** The call no longer counts against the limit (once per call: its answer is on its way, or it ended). */
  private void freePlace(InProcessServerCall serverCall) {
    if (serverCall.releasePlace()) {
      active.decrementAndGet();
    }
  }

  /** Answers a request with an error status (a oneway is dropped): what it asks for cannot be served. */
  private void reject(InProcessStream call, boolean oneway, Status status) {
    if (oneway) {
      log.debug("dropping oneway call from {}: {}", peer, status);
    } else {
      call.onError(Frames.asReceived(status), Metadata.EMPTY);
    }
  }

  /**
   * Refuses a request before any handler saw it, because of a limit or the server's shutdown, as the Netty server
   * does with its REFUSED flag: the caller's attempt ends REFUSED (a oneway is dropped).
   */
  private void refuse(InProcessStream call, boolean oneway, Status status) {
    if (oneway) {
      log.debug("dropping oneway call from {}: {}", peer, status);
    } else {
      call.onRefused(Frames.asReceived(status));
    }
  }

  /**
   * A business thread (or the caller's, in direct mode): the call's one message with the end marker
   * ({@code ServerCall.sendMessage}), marshalled for the caller, whose future it completes with {@code metadata}
   * as the response headers. Returns its size, or -1 if it could not be encoded (an error went instead).
   */
  int sendResponse(InProcessServerCall serverCall, Marshaller<Object> marshaller, Object response,
      Metadata metadata) {
    ServerConfig config = server.config();
    MethodDescriptor<?, ?> m = serverCall.method();
    int metaLen;
    ByteBuf body;
    try {
      metaLen = Frames.checkMetadata(metadata, config.maxMetadataSize(), "RpcServer.builder()");
      body = Frames.encode("response", marshaller, response, metaLen, config.maxFrameSize(),
          "RpcServer.builder()");
    } catch (FrameSizes.TooLarge e) {
      server.dispatcher().limitLog().warn("response too large: " + m.fullName(), m.fullName() + ": "
          + e.status.description());
      sendError(serverCall, e.status, Metadata.EMPTY);
      return -1;
    } catch (Throwable t) {
      Status s = server.dispatcher().responseEncodeFailed(m, t);
      sendError(serverCall, s, Metadata.EMPTY);
      return -1;
    }
    int size = body.readableBytes();
    freePlace(serverCall);
    InProcessStream caller = serverCall.caller();
    if (caller == null) {
      body.release(); // (a oneway has no response; never called for one)
    } else {
      caller.onResponse(metadata, metaLen, body);
    }
    return size;
  }

  /**
   * An error status in place of the response ({@code ServerCall.sendStatus}), as it would arrive over a socket
   * (no local cause).
   */
  void sendError(InProcessServerCall serverCall, Status status, Metadata metadata) {
    freePlace(serverCall);
    InProcessStream caller = serverCall.caller();
    if (caller != null) {
      caller.onError(Frames.asReceived(status), metadata);
    }
  }

  /** A call admitted on this connection has ended (answered, failed, dropped or abandoned). */
  void callDone(InProcessServerCall serverCall) {
    calls.remove(serverCall);
    freePlace(serverCall);
    ended();
  }

  private void ended() {
    if (inFlight.decrementAndGet() == 0 && closed) {
      finishClose();
    }
  }

  /** The server drains: no new calls here; calls in flight go on. */
  void goaway() {
    goaway = true;
  }

  /**
   * Closes the connection. {@code now}: calls in flight fail at their callers with UNAVAILABLE and are
   * cancelled on the server (their handlers may still be running; the server no longer counts them), and the
   * connection is gone at once. Otherwise it goes once its calls have ended ({@link #drained()}).
   */
  void close(boolean now, String why) {
    closedWhy = why;
    closed = true;
    if (now) {
      for (InProcessServerCall c : calls) {
        InProcessStream caller = c.caller();
        if (caller != null) {
          // First: what the handler does once cancelled comes too late. It may have run.
          caller.onClosed(closedStatus(c.method()));
        }
        c.context().cancel(Status.CANCELLED.withDescription("the in-process connection closed: " + why));
      }
      finishClose();
      return;
    }
    if (inFlight.get() == 0) {
      finishClose();
    }
  }

  private Status closedStatus(MethodDescriptor<?, ?> method) {
    String why = closedWhy;
    return Status.UNAVAILABLE.withDescription("connection to in-process server '" + server.name() + "' closed"
        + (why == null ? "" : " (" + why + ")") + " while " + method.fullName() + " was in flight; the server may"
        + " or may not have run it");
  }

  private void finishClose() {
    if (removed.compareAndSet(false, true)) {
      server.connectionClosed(this);
      log.debug("in-process connection {} of client '{}' closed with {} calls in flight", peer, clientName,
          inFlight.get());
      drained.complete(null);
    }
  }

  /** Completes when the connection is closed and gone from the server. */
  CompletableFuture<Void> drained() {
    return drained;
  }

  @Override
  public String toString() {
    return "InProcessConnection{" + peer + ", client " + clientName + ", inFlight=" + inFlight.get() + ", goaway="
        + goaway + ", closed=" + closed + "}";
  }
}
