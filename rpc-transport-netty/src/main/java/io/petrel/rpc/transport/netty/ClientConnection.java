package io.petrel.rpc.transport.netty;

import static io.petrel.rpc.transport.netty.Protocol.*;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import io.petrel.rpc.Deadline;
import io.petrel.rpc.Status;
import io.petrel.rpc.spi.AttemptProgress;
import io.petrel.rpc.spi.WakeBatch;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client side of one connection: one instance per channel. Calls are queued from any thread into the
 * {@link WriteQueue}; on the event loop each gets a request id and enters {@link #inFlight}, which only the
 * event loop touches. A response, the deadline timer, or the connection closing ends it.
 *
 * <p>The server announces in its SETTINGS frame how many calls it allows in flight on the connection
 * ({@link #peerMaxCalls}); calls beyond that wait in {@link #waiting}, in order, and are written as the server's
 * answers free their places. No call is written before the server's first frame has arrived
 * ({@link #INITIAL_MAX_CALLS}); a server whose first frame is not SETTINGS (an older one) has no known limit, as
 * before.
 */
final class ClientConnection extends ChannelInboundHandlerAdapter implements WriteQueue.Sink,
    io.petrel.rpc.spi.Connection {
  private static final Logger log = LoggerFactory.getLogger(ClientConnection.class);

  private final NettyRpcClient client;
  /** The core's side of this connection: told when the server first answers, sends GOAWAY, or the channel closes. */
  private final Listener listener;
  /** The endpoint's "host:port", for messages. */
  private final String authority;
  /** The host the client connects to, as its resolver gave it (TLS messages). */
  private final String host;
  /** Whether {@link #host} is the TLS configuration's {@code serverName} rather than the endpoint's host. */
  private final boolean namedServer;
  private final Channel channel;
  private final WriteQueue writeQueue;
  private final CallTable<PendingCall> inFlight = new CallTable<>();
  /**
   * Deadlines at least this far away are enforced by a sweep of {@link #inFlight} instead of a timer per call:
   * a call with the default 30 s deadline then costs no scheduled task (a timer per call was ~10% of client
   * CPU in the benchmarks). Nearer deadlines get their own timer, to the millisecond.
   */
  static final long SWEPT_DEADLINE_NANOS = TimeUnit.SECONDS.toNanos(1);
  /**
   * How often the sweep looks, while calls are in flight: a swept deadline fires at most this late (plus the
   * event loop's own delay). A look costs one clock reading; the calls are walked only once the earliest swept
   * deadline seen so far is due.
   */
  static final long SWEEP_PERIOD_MILLIS = 10;
  /** Event loop only: a sweep is scheduled. */
  private boolean sweepScheduled;
  /** Event loop only: no swept deadline of a call in {@link #inFlight} or {@link #waiting} is before this. */
  private long earliestSwept = Long.MAX_VALUE;
  /**
   * Event loop only: calls held back, in order, while the connection has as many calls in flight as the server
   * allows ({@link #peerMaxCalls}) or the channel is above its high water mark (the server is not reading).
   * They keep their request in heap memory; they are written in order as places free and the channel drains.
   * One that ends meanwhile (deadline, cancel) leaves at once. Bounded by maxPendingCalls, which counts them.
   */
  private final CallQueue waiting = new CallQueue();
  /**
   * Calls a client writes on a new connection before the server's first frame has arrived: none, as grpc-java
   * writes no stream before the server's HTTP/2 SETTINGS. A server writes SETTINGS when it accepts a connection,
   * before it reads a request, so a connection that closes before its first frame (connected into the backlog of a
   * listening socket that then closed, refused over maxConnections, not a Petrel server) carried no call: its
   * calls are sent again, whatever their method, instead of failing as "may have run". The first call of each
   * new connection waits that one round trip.
   */
  static final int INITIAL_MAX_CALLS = 0;
  /**
   * Event loop only: how many calls the server allows in flight on this connection (its SETTINGS
   * MAX_CONCURRENT_CALLS; {@link #INITIAL_MAX_CALLS} until its first frame, Integer.MAX_VALUE if it announces
   * none). Compared with {@link #inFlight}'s size, which counts unary calls from their write until their
   * response is received, as the server counts them until it writes the response.
   */
  private int peerMaxCalls = INITIAL_MAX_CALLS;
  /** Event loop only: the server's announced maxFrameSize and maxMetadataSize (no limit until announced). */
  private int peerMaxFrameSize = Integer.MAX_VALUE;
  private int peerMaxMetadataSize = Integer.MAX_VALUE;
  /** Event loop only: the server's metadata limit is below the client's own, so requests are checked against it. */
  private boolean checkPeerMetadata;
  /** Event loop only: calls were written while reading (places freed by responses); flushed at the read's end. */
  private boolean flushNeeded;
  /** Event loop only: a frame has been received on this connection. */
  private boolean answered;
  /** Event loop only: the first frame received kept to the protocol (the core was told the server answered). */
  private boolean validFirstFrame;
  private int nextRequestId = 1;
  private volatile boolean goaway;
  private volatile boolean closed;
  /** Wakes the blocking callers whose responses this connection read, at the end of each read batch (the core's). */
  private final WakeBatch wakeChain;
  /** Event loop only: a response was posted to a blocking caller since the last kick. */
  private boolean posted;
  /** Event loop only: why the connection failed, when it was TLS (e.g. the server refused the client's certificate). */
  private @Nullable String closeReason;
  private static final int GOAWAY_SHUTDOWN = 1;
  private static final int GOAWAY_RETIRE = 2;
  /**
   * Event loop: the GOAWAY the server sent, if any ({@link #GOAWAY_SHUTDOWN} or {@link #GOAWAY_RETIRE}; not set by
   * {@link #drain}, the client's own going away), for the reason of a close that follows it.
   */
  private int goawayReceived;
  /** See {@link NettyOptions#ABANDONED_PLACE_TIMEOUT}. */
  private final long abandonedPlaceTimeoutNanos;
  /**
   * Event loop: ids of PINGs read and not answered yet, at most {@link #MAX_PONGS} distinct ones: answered at the
   * end of each read batch, or once the server reads again while it does not. A server that floods PINGs and reads
   * nothing cannot grow what this client holds for it; every distinct PING (keepalive, drain, over-share) is still
   * answered once the server reads.
   */
  private final int[] pongIds = new int[MAX_PONGS];
  private int pongCount;
  private static final int MAX_PONGS = 4;
  /** A refusing GOAWAY (status 14) came: later ones are ignored, whatever came between. */
  private boolean refusingGoawaySeen;
  /** This client closed the connection (its own shutdown, an endpoint gone, a drained connection). */
  private volatile boolean closedHere;

  ClientConnection(NettyRpcClient client, Listener listener, String authority, String host, boolean namedServer,
      Channel channel) {
    this.abandonedPlaceTimeoutNanos = client.clientConfig().option(NettyOptions.ABANDONED_PLACE_TIMEOUT).toNanos();
    this.client = client;
    this.listener = listener;
    this.authority = authority;
    this.host = host;
    this.namedServer = namedServer;
    this.channel = channel;
    this.writeQueue = new WriteQueue(channel, this);
    this.wakeChain = client.context().newWakeBatch();
  }

  NettyRpcClient client() {
    return client;
  }

  /** The endpoint's "host:port". */
  String authority() {
    return authority;
  }

  /** Where the blocking callers of this connection's responses are woken from. */
  WakeBatch wakeBatch() {
    return wakeChain;
  }

  Channel channel() {
    return channel;
  }

  /** True while new calls may be sent here. */
  @Override
  public boolean isUsable() {
    return !goaway && !closed && channel.isActive();
  }

  /** Closes now: calls in flight fail with UNAVAILABLE, waiting ones are sent again elsewhere. Any thread. */
  @Override
  public void close() {
    closedHere = true;
    channel.close();
  }

  /**
   * Closes, {@code reason} saying why to the calls it ends and the core (unless it has a reason already), unless
   * the server's first frame has come by the time this runs on the event loop (the core's timer runs elsewhere).
   */
  @Override
  public void closeIfUnanswered(String reason) {
    try {
      channel.eventLoop().execute(() -> {
        if (answered) {
          return; // the first frame came as the core's timer fired: the connection stays
        }
        if (closeReason == null) {
          closeReason = reason;
        }
        closedHere = true;
        channel.close();
      });
    } catch (java.util.concurrent.RejectedExecutionException e) {
      close(); // the event loop is stopping, and the channel with it
    }
  }

  /** Any thread: an attempt whose request is encoded; written on the event loop. */
  void send(PendingCall call) {
    writeQueue.enqueue(call);
  }

  /** Event loop: register and write one queued call. */
  @Override
  public void write(Object item) {
    if (item instanceof ByteBuf control) { // ping, pong, cancel
      if (channel.isActive()) {
        if (client.metrics() != null) {
          client.metrics().bytesSent.increment(control.readableBytes());
        }
        channel.write(control, channel.voidPromise());
      } else {
        control.release();
      }
      return;
    }
    PendingCall call = (PendingCall) item;
    if (call.isFinished()) {
      call.releaseFrame(); // cancelled, or its deadline passed, while queued
      return;
    }
    if (goaway || closed || !channel.isActive()) {
      unsent(call); // not written: the core sends it on another connection
      return;
    }
    if (call.frame().readableBytes() > peerMaxFrameSize || checkPeerMetadata && overPeerMetadata(call)) {
      refuseOversize(call);
      return;
    }
    // The per-call cost of the server's limit: one compare. Oneways need a free place too (the server counts
    // them while they run), but hold none once written: no answer says when they end.
    if (inFlight.size() >= peerMaxCalls || !waiting.isEmpty() || !channel.isWritable()) {
      hold(call);
      return;
    }
    writeCall(call);
  }

  private boolean overPeerMetadata(PendingCall call) {
    return call.frame().getInt(OFF_METADATA_LENGTH) > peerMaxMetadataSize;
  }

  /** Event loop: a request the server announced it would refuse unread fails here, before it is sent. */
  private void refuseOversize(PendingCall call) {
    int size = call.frame().readableBytes();
    boolean frameTooLarge = size > peerMaxFrameSize;
    String what = frameTooLarge ? "request of " + size + " bytes exceeds the server's maxFrameSize "
        + peerMaxFrameSize : "metadata of " + call.frame().getInt(OFF_METADATA_LENGTH) + " bytes exceeds the server's"
        + " maxMetadataSize " + peerMaxMetadataSize;
    call.releaseFrame();
    call.closed(Status.RESOURCE_EXHAUSTED.withDescription(what + " (announced in its SETTINGS; raise"
        + " RpcServer.builder().max" + (frameTooLarge ? "FrameSize" : "MetadataSize") + "); "
        + call.method().fullName() + " not sent"), AttemptProgress.NOT_SENT);
  }

  /**
   * Event loop: the server has no place for the call yet (or is not reading, or calls before it are waiting):
   * keep it, with its heap-encoded request, until it does. Its deadline still ends it on time.
   */
  private void hold(PendingCall call) {
    waiting.add(call);
    call.holdOn(this);
    if (call.isFinished()) {
      // Ended by another thread that could not yet see where the call was: leave at once (see holdOn).
      waiting.remove(call);
      call.releaseFrame();
      return;
    }
    if (call.deadline() != null) {
      long at = call.deadline().nanoTime();
      if (at - System.nanoTime() < SWEPT_DEADLINE_NANOS) {
        call.armTimer(channel.eventLoop());
      } else if (at < earliestSwept) {
        earliestSwept = at;
      }
    }
    scheduleSweep();
  }

  /**
   * Event loop: writes held calls, in order, while the server has places for them and the channel takes them.
   * Not flushed: {@link #flushNeeded} says that something was written.
   */
  private void releaseWaiting() {
    PendingCall call;
    while (inFlight.size() < peerMaxCalls && channel.isWritable() && (call = waiting.poll()) != null) {
      if (call.isFinished()) {
        call.releaseFrame(); // ended on another thread; its forget task finds it gone
        continue;
      }
      if (call.frame().readableBytes() > peerMaxFrameSize || checkPeerMetadata && overPeerMetadata(call)) {
        refuseOversize(call); // held before the server's SETTINGS said its limits (a new connection's calls)
        continue;
      }
      writeCall(call); // (a closed channel is not writable: what is left is rerouted by channelInactive)
      flushNeeded = true;
    }
  }

  /**
   * Event loop: this connection takes no more calls (closed, or GOAWAY): its unsent calls end REFUSED, and the core
   * sends each again on another connection (of this endpoint or another) without its caller seeing it.
   */
  private void rerouteWaiting() {
    PendingCall call;
    while ((call = waiting.poll()) != null) {
      call.connection = null;
      if (call.isFinished()) {
        call.releaseFrame();
      } else {
        unsent(call);
      }
    }
  }

  /** Event loop: a call handed here and never written, because the connection went away first. */
  private void unsent(PendingCall call) {
    call.releaseFrame();
    call.closed(Status.UNAVAILABLE.withDescription("connection to " + authority + " went away before "
        + call.method().fullName() + " was written" + reasonSuffix()), AttemptProgress.REFUSED);
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
    if (channel.isWritable() && pongCount > 0) {
      sendPongs(); // the PINGs that came while the server was not reading
    }
    if (channel.isWritable() && !waiting.isEmpty()) {
      releaseWaiting();
      if (flushNeeded) {
        flushNeeded = false;
        channel.flush();
      }
    }
    super.channelWritabilityChanged(ctx);
  }

  /** Event loop: registers the call under a new request id and writes its request (not flushed). */
  private void writeCall(PendingCall call) {
    TransportMetrics metrics = client.metrics();
    ByteBuf frame = call.frame();
    call.frame = null;
    if (call.isOneway()) {
      FrameEncoder.patchRequest(frame, 0, 0);
      channel.write(frame).addListener(f -> {
        if (f.isSuccess()) {
          call.sent();
        } else {
          call.closed(Status.UNAVAILABLE.withDescription("oneway " + call.method().fullName() + " to "
              + authority + " could not be written: " + f.cause()).withCause(f.cause()), AttemptProgress.PROCESSED);
        }
      });
      return;
    }
    int id = nextRequestId();
    long timeoutMillis = 0;
    long remainingNanos = Long.MAX_VALUE;
    Deadline deadline = call.deadline();
    if (deadline != null) {
      remainingNanos = deadline.remainingNanos();
      timeoutMillis = Math.max(1, (remainingNanos + 999_999) / 1_000_000);
    }
    FrameEncoder.patchRequest(frame, id, timeoutMillis);
    call.requestId = id;
    call.connection = this; // plain: a canceller that does not see it yet leaves the call to its response
    inFlight.put(id, call);
    if (remainingNanos < SWEPT_DEADLINE_NANOS) {
      call.armTimer(channel.eventLoop());
    } else if (remainingNanos != Long.MAX_VALUE) {
      long at = Objects.requireNonNull(deadline, "a call with a remaining time has a deadline").nanoTime();
      if (at < earliestSwept) {
        earliestSwept = at;
      }
    }
    if (!sweepScheduled) {
      scheduleSweep();
    }
    if (metrics != null) {
      metrics.bytesSent.increment(frame.readableBytes());
    }
    channel.write(frame, channel.voidPromise());
  }

  private int nextRequestId() {
    int id;
    do {
      id = nextRequestId++;
    } while (id == 0 || inFlight.containsKey(id));
    return id;
  }

  @Override
  public void drop(Object item) {
    if (item instanceof ByteBuf control) {
      control.release();
      return;
    }
    PendingCall call = (PendingCall) item;
    call.releaseFrame();
    call.closed(Status.UNAVAILABLE.withDescription(client.whyStopped() + "; " + call.method().fullName()
        + " not sent"), AttemptProgress.NOT_SENT);
  }

  /**
   * Event loop (deadline timer, cancel): the call has ended locally; a late response is dropped. A call still
   * waiting in the queue leaves it, unsent. A call in flight is cancelled on the server; if the server limits
   * the calls in flight, the call keeps its place until the server's answer arrives (the server counts it until
   * then, and it answers every request, late ones included), so that the next call is not refused for want of
   * it. Returns what a deadline failure should add: why the request was not sent, or "".
   */
  String forget(PendingCall call) {
    if (waiting.remove(call)) {
      call.releaseFrame();
      return " (not sent: it waited in the client until " + waitReason() + ")";
    }
    if (call.abandoned || call.requestId == 0 || inFlight.get(call.requestId) != call) {
      return "";
    }
    if (peerMaxCalls == Integer.MAX_VALUE) {
      inFlight.remove(call.requestId); // no limit known: nothing to keep count of
    } else {
      call.abandoned = true; // in inFlight until the server's answer, see onResponse
      call.abandonedAt = System.nanoTime();
    }
    if (channel.isActive()) {
      // Tell the server it may stop working on it.
      // The status says why: the deadline passed, or the caller cancelled (the server counts the call so).
      Deadline d = call.deadline();
      Status.Code why = d != null && d.isExpired() ? Status.Code.DEADLINE_EXCEEDED : Status.Code.CANCELLED;
      writeQueue.enqueue(FrameEncoder.encodeCancel(channel.alloc(), call.requestId, why));
      if (why == Status.Code.DEADLINE_EXCEEDED && answered && !closed) {
        listener.deadlinePassed(); // the core may check that the connection still carries anything
      }
    }
    if (goaway) {
      closeIfDrained();
    }
    return "";
  }

  /** The core's keepalive and liveness checks run on the channel's event loop, where reads are reported. */
  @Override
  public java.util.concurrent.ScheduledExecutorService executor() {
    return channel.eventLoop();
  }

  /** Event loop (the core's keepalive or liveness check): a PING; any bytes read after it count as its answer. */
  @Override
  public void ping() {
    writeQueue.enqueue(FrameEncoder.encodeControl(channel.alloc(), TYPE_PING, 0));
  }

  /**
   * Event loop: the core found the connection dead (a PING unanswered): no new calls, a reset rather than a FIN
   * (the requests still in the send buffer are dropped rather than delivered late). The WARN says what follows as
   * the core told it ({@code next}): reconnecting, or not (the endpoint was removed). The calls in flight fail in
   * {@link #channelInactive}, with {@code reason}, after the core has heard of the close, as for any close: one sent
   * again (an idempotent call) then finds the endpoint's slot without this connection and goes on a new one (or
   * elsewhere). Failed here, before the core knew, it found the slot still holding this connection, and a fail-fast
   * one failed again ("has just closed; retry") although a new connection would have taken it.
   */
  @Override
  public void closeDead(String reason, String warning, String next) {
    if (!channel.isActive()) {
      return;
    }
    int failing = 0; // calls given up on (deadline, cancel) have ended already
    for (PendingCall c : inFlight.values()) {
      failing += c.abandoned ? 0 : 1;
    }
    client.limitLog().warn("dead " + authority, "closing connection to " + authority + ": " + warning + "; "
        + failing + " call(s) in flight fail with UNAVAILABLE, " + next);
    closed = true;
    closedHere = true; // said why (the WARN above): not a close "by the server or the network"
    if (closeReason == null) {
      closeReason = reason; // for the core (Listener.closed) and the calls channelInactive fails
    }
    try {
      channel.config().setOption(io.netty.channel.ChannelOption.SO_LINGER, 0);
    } catch (RuntimeException e) {
      // A transport without SO_LINGER: a plain close
    }
    channel.close();
  }

  /** What the calls in {@link #waiting} wait for, in words. */
  private String waitReason() {
    if (!answered) {
      return "the server's first frame arrived (no call is written on a new connection before it; the server accepted"
          + " the connection and has sent nothing since)";
    }
    if (peerMaxCalls == 0) {
      return "the server allowed a call on this connection (its SETTINGS allow none in flight: it is not taking calls"
          + " here)";
    }
    if (inFlight.size() >= peerMaxCalls) {
      int given = 0;
      for (PendingCall c : inFlight.values()) {
        given += c.abandoned ? 1 : 0;
      }
      return "one of the " + peerMaxCalls + " calls the server allows in flight on this connection ended (its"
          + " maxConcurrentCallsPerConnection; more connections: RpcClient.builder().connectionsPerEndpoint)"
          + (given == 0 ? "" : "; " + given + " of them were given up on (deadline or cancel) and the server has not"
              + " answered them yet");
    }
    return "the server read what was sent before (the connection is above its write buffer high water mark)";
  }

  /**
   * Event loop: after GOAWAY (or a local drain) the connection takes no new calls; once no call waits for an
   * answer on it the client closes it (the server would too, but a server that went away mid-shutdown might
   * not). Abandoned calls (ended here by deadline or cancel, their places kept for the server's count) do not
   * hold it open: nothing new will be sent here, so their places no longer matter, and a server that never
   * answers them must not keep the connection forever.
   */
  private void closeIfDrained() {
    if (closed || !waiting.isEmpty()) {
      return;
    }
    for (PendingCall c : inFlight.values()) {
      if (!c.abandoned) {
        return;
      }
    }
    log.debug("closing connection to {} after GOAWAY: no call left on it", authority);
    closed = true;
    closedHere = true;
    channel.writeAndFlush(io.netty.buffer.Unpooled.EMPTY_BUFFER).addListener(
        io.netty.channel.ChannelFutureListener.CLOSE);
  }

  /**
   * Any thread: the endpoint is gone (the core no longer sends here): as after a GOAWAY, no new call
   * is written here, calls waiting here go elsewhere, and the connection closes once its last call has ended.
   */
  @Override
  public void drain(String why) {
    try {
      channel.eventLoop().execute(() -> {
        if (goaway || closed) {
          return;
        }
        goaway = true;
        log.debug("draining connection to {}: {}; {} calls in flight finish here, {} not sent go elsewhere",
            authority, why, inFlight.size(), waiting.size());
        rerouteWaiting();
        closeIfDrained();
      });
    } catch (java.util.concurrent.RejectedExecutionException e) {
      closedHere = true;
      channel.close(); // the client's event loops are stopping: nothing left to drain for
    }
  }

  /** Any thread: the caller cancelled or completed the future itself. */
  void cancelled(PendingCall call) {
    try {
      channel.eventLoop().execute(() -> forget(call));
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // The client is shutting down: the connection closes and forgets every call anyway.
    }
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
    if (evt instanceof SslHandshakeCompletionEvent done && done.isSuccess()) {
      sendFirstPing(ctx);
    }
    super.userEventTriggered(ctx, evt);
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    boolean first = !answered;
    if (first) {
      answered = true;
      // No limit unless the frame is the server's SETTINGS (an older server sends none: as before).
      peerMaxCalls = Integer.MAX_VALUE;
    }
    if (msg instanceof Frame frame) {
      try {
        onFrame(frame);
      } finally {
        frame.release();
      }
    } else if (msg instanceof OversizeFrame big) {
      PendingCall call = big.type() == TYPE_RESPONSE ? inFlight.remove(big.requestId()) : null;
      if (!waiting.isEmpty()) {
        releaseWaiting();
      }
      Status s = Status.RESOURCE_EXHAUSTED.withDescription("response of " + big.frameSize() + " bytes exceeds the"
          + " client's max" + ("frame".equals(big.what()) ? "FrameSize " : "MetadataSize ") + big.limit()
          + " (raise RpcClient.builder().max" + ("frame".equals(big.what()) ? "FrameSize" : "MetadataSize") + ")");
      client.limitLog().warn("oversize response " + authority, s.description() + " from " + authority
          + ": skipped");
      if (call != null) {
        call.closed(s, AttemptProgress.PROCESSED);
      }
    } else {
      ReferenceCountUtil.release(msg);
    }
    if (first && closeReason == null && !closed) {
      // The server is really there, and its first frame kept to the protocol: the core starts the endpoint's backoff
      // over. (A first frame that broke the protocol closed the connection: it is a failed attempt, backed off.)
      validFirstFrame = true;
      listener.answered();
    }
    if (first && !waiting.isEmpty() && !closed) {
      releaseWaiting();
    }
  }

  private void onFrame(Frame frame) {
    switch (frame.type) {
      case TYPE_RESPONSE:
        onResponse(frame);
        return;
      case TYPE_PING:
        notePing(frame.requestId); // answered at the end of the read batch (see pongIds)
        return;
      case TYPE_PONG:
        return;
      case TYPE_SETTINGS:
        onSettings(frame);
        return;
      case TYPE_GOAWAY:
        goaway = true;
        boolean refusing = frame.status == Status.Code.UNAVAILABLE.value();
        if (refusing && refusingGoawaySeen) {
          // A second refusing GOAWAY: the first said which calls the server took, and those were not sent again.
          // Another id cannot be followed: a lower one would send again calls the server said it took (they would
          // run twice), and the calls after a higher one were already sent elsewhere.
          log.debug("server {} sent another GOAWAY (after request {}); ignored: the first one stands", authority,
              Integer.toUnsignedString(frame.requestId));
          return;
        }
        refusingGoawaySeen |= refusing;
        if (goawayReceived != GOAWAY_SHUTDOWN) {
          goawayReceived = refusing ? GOAWAY_SHUTDOWN : GOAWAY_RETIRE;
        }
        log.debug("server {} sent GOAWAY{}; {} calls still in flight on this connection, {} not sent yet go"
            + " elsewhere", authority, refusing ? " after request " + Integer.toUnsignedString(
            frame.requestId) : "", inFlight.size(), waiting.size());
        listener.goaway();
        if (refusing) {
          resendRefused(frame.requestId);
        }
        rerouteWaiting();
        closeIfDrained();
        return;
      default:
        protocolViolation("wrong-side frame", "the server sent a " + typeName(frame.type)
            + " frame, which only clients send");
    }
  }

  /**
   * Event loop: a GOAWAY said that the server took requests up to {@code lastId} (0: none) and refuses every later
   * one unread (docs/protocol.md, "GOAWAY"): those attempts end REFUSED, and the core sends each call again
   * (through the balancer, so to another connection) without its caller seeing it; the server's refusals of them
   * are dropped as answers to nobody. Calls up to {@code lastId} stay: they may be running.
   */
  private void resendRefused(int lastId) {
    List<PendingCall> refused = null;
    for (PendingCall c : inFlight.values()) {
      if (lastId == 0 || c.requestId - lastId > 0) { // serial order: ids are consecutive and wrap
        if (refused == null) {
          refused = new ArrayList<>();
        }
        refused.add(c);
      }
    }
    if (refused == null) {
      return;
    }
    refused.sort((a, b) -> Integer.compare(a.requestId - lastId, b.requestId - lastId)); // in the order written
    for (PendingCall c : refused) {
      inFlight.remove(c.requestId);
      if (c.abandoned || c.isFinished()) {
        continue; // ended here already (deadline, cancel): nothing to send
      }
      c.closed(Status.UNAVAILABLE.withDescription("server " + authority + " refused "
          + c.method().fullName() + " unread (GOAWAY: it is shutting down)"), AttemptProgress.REFUSED);
    }
  }

  /**
   * Event loop: the server's limits (docs/protocol.md, SETTINGS). Applies to calls written from now on: calls in
   * flight stay, and a lower limit only holds back new calls until enough have ended.
   */
  private void onSettings(Frame frame) {
    ByteBuf body = frame.body();
    int n = body.readableBytes();
    if (n % SETTINGS_ENTRY_SIZE != 0) {
      protocolViolation("bad SETTINGS", "SETTINGS body of " + n + " bytes is not a sequence of " + SETTINGS_ENTRY_SIZE
          + "-byte entries");
      return;
    }
    for (int i = body.readerIndex(), end = i + n; i < end; i += SETTINGS_ENTRY_SIZE) {
      int id = body.getUnsignedShort(i);
      int value = (int) Math.min(body.getUnsignedInt(i + 2), Integer.MAX_VALUE);
      switch (id) {
        case SETTING_MAX_CONCURRENT_CALLS -> peerMaxCalls = value;
        case SETTING_MAX_FRAME_SIZE -> peerMaxFrameSize = value;
        case SETTING_MAX_METADATA_SIZE -> peerMaxMetadataSize = value;
        default -> { } // a setting of a later version: ignored
      }
    }
    checkPeerMetadata = peerMaxMetadataSize < client.maxMetadataSize();
    log.debug("server {} allows {} calls in flight per connection, frames of {} bytes, metadata of {} bytes",
        authority, peerMaxCalls, peerMaxFrameSize, peerMaxMetadataSize);
    if (!waiting.isEmpty()) {
      releaseWaiting();
    }
  }

  private void onResponse(Frame frame) {
    PendingCall call = inFlight.remove(frame.requestId);
    if (!waiting.isEmpty()) {
      releaseWaiting(); // a place is free (flushed at the end of the read)
    }
    if (goaway) {
      closeIfDrained();
    }
    if (call == null || call.abandoned) {
      if (log.isDebugEnabled()) {
        log.debug("{}: dropped the response (status {}) for request {}{}, which is no longer waiting (its deadline"
            + " passed or it was cancelled)", channel, frame.status, Integer.toUnsignedString(frame.requestId),
            call == null ? "" : " of " + call.method().fullName());
      }
      return;
    }
    ByteBuf body = frame.body();
    if (frame.status != 0 && (frame.flags & FLAG_REFUSED) != 0) {
      // Refused before any handler saw it (a limit, or a shutdown): the core may send it to another endpoint.
      call.closed(Status.fromCodeValue(frame.status).withDescription(body.toString(StandardCharsets.UTF_8)),
          AttemptProgress.REFUSED);
      return;
    }
    if (frame.status != 0) {
      call.answered(frame.metadata, Status.fromCodeValue(frame.status).withDescription(
          body.toString(StandardCharsets.UTF_8)));
      return;
    }
    call.responded(frame.metadata, body); // a unary response: one message that ends the call with OK
    posted = true;
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
    // Bytes came (the decoder passes this on even when no frame is whole yet): the core's keepalive and liveness
    // checks look at it. Once per read batch: a clock reading and a field write.
    listener.received();
    if (pongCount > 0 && channel.isWritable()) {
      sendPongs();
    }
    if (flushNeeded) {
      flushNeeded = false;
      ctx.flush();
    }
    if (posted) {
      posted = false;
      wakeChain.flush();
    }
    super.channelReadComplete(ctx);
  }

  /** Event loop: a PING to answer; the same id twice, or more than {@link #MAX_PONGS} ids, are answered once. */
  private void notePing(int id) {
    for (int i = 0; i < pongCount; i++) {
      if (pongIds[i] == id) {
        return;
      }
    }
    if (pongCount < MAX_PONGS) {
      pongIds[pongCount++] = id;
    } else {
      log.debug("{}: more than {} distinct PINGs unanswered (the server is not reading); PING {} not answered",
          authority, MAX_PONGS, Integer.toUnsignedString(id));
    }
  }

  /** Event loop: answers the PINGs noted. */
  private void sendPongs() {
    for (int i = 0; i < pongCount; i++) {
      writeQueue.enqueue(FrameEncoder.encodeControl(channel.alloc(), TYPE_PONG, pongIds[i]));
    }
    pongCount = 0;
  }

  /**
   * Sends a PING as soon as the connection opens (with TLS: once the handshake is done, so that nothing waits
   * in the TLS handler meanwhile): its PONG shows the server is really there (see {@link #answered()}), which is
   * what resets the reconnect backoff.
   */
  @Override
  public void channelActive(ChannelHandlerContext ctx) throws Exception {
    if (ctx.pipeline().get(SslHandler.class) == null) {
      sendFirstPing(ctx);
    }
    super.channelActive(ctx);
  }

  private void sendFirstPing(ChannelHandlerContext ctx) {
    if (client.metrics() != null) {
      client.metrics().bytesSent.increment(HEADER_SIZE);
    }
    // The server's answer is its first frame; the core closes the connection if none comes in time.
    ctx.writeAndFlush(FrameEncoder.encodeControl(channel.alloc(), TYPE_PING, 0), ctx.voidPromise());
  }

  /** Event loop: whether a frame has been received on this connection. */
  boolean answered() {
    return answered;
  }

  /** Event loop: makes sure a sweep runs within {@link #SWEEP_PERIOD_MILLIS}. */
  private void scheduleSweep() {
    if (sweepScheduled || closed) {
      return;
    }
    sweepScheduled = true;
    channel.eventLoop().schedule(this::sweep, SWEEP_PERIOD_MILLIS, TimeUnit.MILLISECONDS);
  }

  /**
   * Event loop: fails the calls whose (far) deadline has passed, and drops held calls that have ended. Runs
   * every {@link #SWEEP_PERIOD_MILLIS} while calls are in flight, and walks them only when the earliest swept
   * deadline is due.
   */
  private void sweep() {
    sweepScheduled = false;
    if (!wakeChain.isEmpty()) {
      wakeChain.flush(); // a safety net only: every read batch ends with a kick
    }
    if (closed) {
      return;
    }
    long now = System.nanoTime();
    if (now - earliestSwept >= 0 && (!inFlight.isEmpty() || !waiting.isEmpty())) {
      long earliest = Long.MAX_VALUE;
      List<PendingCall> expired = null;
      for (PendingCall c : inFlight.values()) {
        if (c.deadline() == null || c.abandoned) {
          continue;
        }
        long at = c.deadline().nanoTime();
        if (now - at >= 0) {
          if (expired == null) {
            expired = new ArrayList<>();
          }
          expired.add(c);
        } else if (at < earliest) {
          earliest = at;
        }
      }
      for (PendingCall c = waiting.first(); c != null; c = c.queueNext) {
        if (c.deadline() == null) {
          continue;
        }
        long at = c.deadline().nanoTime();
        if (now - at >= 0) {
          if (expired == null) {
            expired = new ArrayList<>();
          }
          expired.add(c);
        } else if (at < earliest) {
          earliest = at;
        }
      }
      earliestSwept = earliest;
      if (expired != null) {
        for (PendingCall c : expired) {
          // In flight: forgets the call, sends CANCEL; waiting: leaves the queue unsent. Then DEADLINE_EXCEEDED.
          c.run();
        }
      }
    }
    if (!waiting.isEmpty() && inFlight.size() >= peerMaxCalls && heldOnlyByStaleAbandonedCalls(now)) {
      // A server that never answers calls that were cancelled would keep its places, and every later call here
      // would wait for nothing: close, and the waiting calls go on a new connection.
      closeReason = "the server left all " + peerMaxCalls + " calls it allows in flight on this connection"
          + " unanswered for more than " + TimeUnit.NANOSECONDS.toMillis(abandonedPlaceTimeoutNanos) + " ms after"
          + " they were cancelled (handlers that ignore cancellation, or a server that lost them;"
          + " NettyOptions.ABANDONED_PLACE_TIMEOUT); closed so that the calls waiting for a place go on a new"
          + " connection";
      client.limitLog().warn("stale places " + authority, "closing connection to " + authority + ": "
          + closeReason);
      closedHere = true;
      channel.close();
      return;
    }
    if (!inFlight.isEmpty() || !waiting.isEmpty() || !wakeChain.isEmpty()) {
      scheduleSweep();
    } else {
      earliestSwept = Long.MAX_VALUE;
    }
  }

  /**
   * Event loop: every call in flight was given up on, the last of them more than
   * {@link NettyOptions#ABANDONED_PLACE_TIMEOUT} ago. A server answers a cancelled call when its handler returns
   * (a handler that ignores cancellation holds its place meanwhile); one that never answers would hold the places,
   * and the calls waiting for them, forever.
   */
  private boolean heldOnlyByStaleAbandonedCalls(long now) {
    if (inFlight.isEmpty()) {
      return false;
    }
    long stale = abandonedPlaceTimeoutNanos;
    for (PendingCall c : inFlight.values()) {
      if (!c.abandoned || now - c.abandonedAt < stale) {
        return false;
      }
    }
    return true;
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    closed = true;
    if (client.metrics() != null) {
      client.metrics().connectionsClosed.increment();
    }
    if (!answered && closeReason == null) {
      // Nothing came from the server: a server that stops closes the connections it has not yet accepted this way,
      // and so does one that refuses a client (over maxConnections, or a plaintext client of a TLS server).
      closeReason = "closed before the server's first frame: is a Petrel server listening there, with TLS on both"
          + " sides or neither? (a server also closes connections it refuses or has not accepted when it stops;"
          + " its log says why)";
    }
    if (closeReason == null && goawayReceived == 0 && answered && !closedHere) {
      int failing = 0; // calls still waiting for an answer: those given up on (deadline, cancel) have ended already
      for (PendingCall c : inFlight.values()) {
        if (!c.abandoned) {
          failing++;
        }
      }
      if (failing > 0) {
        // Nothing said why: the server closed or reset it (a crash, a kill, a proxy between) or the network did.
        client.limitLog().warn("lost " + authority, "connection to " + authority + " closed by the server or the"
            + " network, with no GOAWAY, while " + failing + " call(s) were in flight; they fail with UNAVAILABLE"
            + " (the server may have run them; only methods marked idempotent are sent again), and the next calls"
            + " connect again");
      }
    }
    if (goawayReceived != 0 && closeReason == null) {
      // A server closes a connection it sent GOAWAY on when its calls have ended, or when its grace period ends
      // with calls still running; or it was stopped at once (shutdownNow) or died meanwhile.
      closeReason = (goawayReceived == GOAWAY_SHUTDOWN
          ? "after the server's GOAWAY: it was shutting down"
          : "after the server's GOAWAY retiring this connection (its idleTimeout or maxConnectionAge)")
          + "; a call still running when its shutdown grace period ends (shutdownGracePeriod on the server's"
          + " builder) ends this way, as do calls of a server stopped at once or gone meanwhile";
    }
    // The core first: a caller that retries when its call fails below must find the endpoint reconnecting (or
    // backing off), not this dead connection's place still empty of any plan.
    listener.closed(closeReason, validFirstFrame);
    rerouteWaiting(); // never sent: another connection may take them
    failAll("connection to " + authority + " closed" + reasonSuffix());
    wakeChain.flush();
    super.channelInactive(ctx);
  }

  private void failAll(String why) {
    if (inFlight.isEmpty()) {
      return;
    }
    List<PendingCall> calls = new ArrayList<>(inFlight.values());
    inFlight.clear();
    for (PendingCall c : calls) {
      c.closed(Status.UNAVAILABLE.withDescription(why + " while " + c.method().fullName()
          + " was in flight; the server may or may not have run it"), AttemptProgress.PROCESSED);
    }
  }

  @Override
  public String toString() {
    return "ClientConnection{" + channel + ", closed=" + closed + ", goaway=" + goaway + ", inFlight="
        + inFlight.size() + ", waiting=" + waiting.size() + ", peerMaxCalls=" + peerMaxCalls + ", " + writeQueue
        + ", active=" + channel.isActive() + ", writable=" + channel.isWritable() + "}";
  }

  /** Event loop: calls written and not yet answered (including abandoned ones, see {@link #forget}). */
  int inFlightCount() {
    return inFlight.size();
  }

  /** Event loop: calls held back, not yet written. */
  int waitingCount() {
    return waiting.size();
  }

  /** Event loop: the server's announced limit of calls in flight (see {@link #peerMaxCalls}). */
  int peerMaxCalls() {
    return peerMaxCalls;
  }

  /** Event loop: why the connection failed (a TLS error, a keepalive unanswered, a protocol violation); else null. */
  @Nullable String closeReason() {
    return closeReason;
  }

  private String reasonSuffix() {
    return closeReason == null ? "" : " (" + closeReason + ")";
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    if (TlsErrors.isTls(cause)) {
      // E.g. TLS 1.3: the handshake is done for the client before the server has checked its certificate.
      if (closeReason == null) {
        closeReason = "TLS: " + TlsErrors.describe(cause, true, host, namedServer, client.hasOwnCertificate(),
            TlsErrors.sentCertificate(ctx.pipeline()));
      }
      log.debug("connection to {} failed: {}", authority, closeReason, cause);
      channel.close();
      return;
    }
    Throwable t = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
    if (t instanceof ProtocolException && closeReason == null) {
      closeReason = violation(String.valueOf(t.getMessage())); // the calls it fails say why
    }
    if (!(t instanceof java.io.IOException) && !(t instanceof ProtocolException)) {
      closedHere = true; // an error of this client's: it closes the connection and has said why (WARN)
    }
    ConnectionErrors.close(client.limitLog(), channel, cause, "to " + authority);
  }

  private void protocolViolation(String kind, String what) {
    if (closeReason == null) {
      closeReason = violation(what);
    }
    ConnectionErrors.protocolViolation(client.limitLog(), channel, kind, what, "to " + authority);
  }

  private static String violation(String what) {
    return "the server broke the protocol: " + what + "; is this address a Petrel server of a compatible version?";
  }
}
