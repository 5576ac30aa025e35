package io.petrel.rpc.transport.netty;

import static io.petrel.rpc.transport.netty.Protocol.*;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import io.petrel.rpc.Status;
import io.petrel.rpc.internal.WakeChain;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client side of one connection: one instance per channel. Calls are queued from any thread into the
 * {@link WriteQueue}; on the event loop each gets a request id and enters {@link #inFlight}, which only the
 * event loop touches. A response, the deadline timer, or the connection closing ends it.
 */
final class ClientConnection extends ChannelInboundHandlerAdapter implements WriteQueue.Sink {
  private static final Logger log = LoggerFactory.getLogger(ClientConnection.class);

  private final NettyRpcClient client;
  private final ClientSlot slot;
  private final Channel channel;
  private final WriteQueue writeQueue;
  private final CallTable<PendingCall<?>> inFlight = new CallTable<>();
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
   * Event loop only: calls held back while the channel is above its high water mark (the server is not
   * reading). They keep their request in heap memory; they are written in order once the channel drains, and
   * the sweep ends those whose deadline passes meanwhile. Bounded by maxPendingCalls.
   */
  private final java.util.ArrayDeque<PendingCall<?>> waiting = new java.util.ArrayDeque<>();
  /** Event loop only: a frame has been received on this connection. */
  private boolean answered;
  private int nextRequestId = 1;
  private volatile boolean goaway;
  /** A keepalive PING is unanswered; event loop only. */
  private boolean pingOutstanding;
  private volatile boolean closed;
  /** Wakes the blocking callers whose responses this connection read; see {@link WakeChain}. */
  private final WakeChain wakeChain = new WakeChain();
  /** Event loop only: a response was posted to a blocking caller since the last kick. */
  private boolean posted;
  /** Event loop only: why the connection failed, when it was TLS (e.g. the server refused the client's certificate). */
  private String closeReason;

  ClientConnection(NettyRpcClient client, ClientSlot slot, Channel channel) {
    this.client = client;
    this.slot = slot;
    this.channel = channel;
    this.writeQueue = new WriteQueue(channel, this);
  }

  Channel channel() {
    return channel;
  }

  /** True while new calls may be sent here. */
  boolean isUsable() {
    return !goaway && !closed && channel.isActive();
  }

  void send(PendingCall<?> call) {
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
    PendingCall<?> call = (PendingCall<?>) item;
    if (call.isFinished()) {
      call.releaseFrame(); // cancelled, or its deadline passed, while queued
      return;
    }
    if (goaway || closed || !channel.isActive()) {
      // Not sent: the slot finds it another connection (or fails it if there is none to be had).
      client.route(call, slot);
      return;
    }
    if (!channel.isWritable() || !waiting.isEmpty()) {
      hold(call);
      return;
    }
    writeCall(call);
  }

  /** Event loop: the server is not reading; keep the call (and its heap-encoded request) until it does. */
  private void hold(PendingCall<?> call) {
    waiting.add(call);
    if (call.deadline != null) {
      long at = call.deadline.nanoTime();
      if (at - System.nanoTime() < SWEPT_DEADLINE_NANOS) {
        call.armTimer(channel.eventLoop());
      } else if (at < earliestSwept) {
        earliestSwept = at;
      }
    }
    scheduleSweep();
  }

  /** Event loop: writes held calls while the channel takes them. */
  private void releaseWaiting() {
    PendingCall<?> call;
    boolean wrote = false;
    while (channel.isWritable() && (call = waiting.poll()) != null) {
      if (call.isFinished()) {
        call.releaseFrame();
      } else {
        writeCall(call);
        wrote = true;
      }
    }
    if (wrote) {
      channel.flush();
    }
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
    if (channel.isWritable() && !waiting.isEmpty()) {
      releaseWaiting();
    }
    super.channelWritabilityChanged(ctx);
  }

  /** Event loop: registers the call under a new request id and writes its request (not flushed). */
  private void writeCall(PendingCall<?> call) {
    TransportMetrics metrics = client.metrics();
    ByteBuf frame = call.frame;
    call.frame = null;
    if (call.oneway) {
      FrameEncoder.patchRequest(frame, 0, 0);
      channel.write(frame).addListener(f -> {
        if (f.isSuccess()) {
          call.succeed(null);
        } else {
          call.fail(Status.UNAVAILABLE.withDescription("oneway " + call.method.fullName() + " to "
              + slot.authority() + " could not be written: " + f.cause()).withCause(f.cause()));
        }
      });
      return;
    }
    int id = nextRequestId();
    long timeoutMillis = 0;
    long remainingNanos = Long.MAX_VALUE;
    if (call.deadline != null) {
      remainingNanos = call.deadline.remainingNanos();
      timeoutMillis = Math.max(1, (remainingNanos + 999_999) / 1_000_000);
    }
    FrameEncoder.patchRequest(frame, id, timeoutMillis);
    call.requestId = id;
    call.connection = this;
    inFlight.put(id, call);
    if (remainingNanos < SWEPT_DEADLINE_NANOS) {
      call.armTimer(channel.eventLoop());
    } else if (remainingNanos != Long.MAX_VALUE) {
      long at = call.deadline.nanoTime();
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
    PendingCall<?> call = (PendingCall<?>) item;
    call.releaseFrame();
    call.fail(Status.UNAVAILABLE.withDescription("client is shut down; " + call.method.fullName() + " not sent"));
  }

  /** Event loop (deadline timer): the call has ended locally; a late response is dropped. */
  void forget(PendingCall<?> call) {
    if (inFlight.get(call.requestId) == call) {
      inFlight.remove(call.requestId);
      if (channel.isActive()) {
        // Tell the server it may stop working on it.
        writeQueue.enqueue(FrameEncoder.encodeControl(channel.alloc(), TYPE_CANCEL, call.requestId));
      }
      if (goaway) {
        closeIfDrained();
      }
    }
  }

  /**
   * Event loop: after GOAWAY the connection takes no new calls; once its last call has ended the client closes
   * it (the server would too, but a server that went away mid-shutdown might not).
   */
  private void closeIfDrained() {
    if (inFlight.isEmpty() && waiting.isEmpty() && !closed) {
      log.debug("closing connection to {} after GOAWAY: no call left on it", slot.authority());
      channel.writeAndFlush(io.netty.buffer.Unpooled.EMPTY_BUFFER).addListener(
          io.netty.channel.ChannelFutureListener.CLOSE);
    }
  }

  /** Any thread: the caller cancelled or completed the future itself. */
  void cancelled(PendingCall<?> call) {
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
    if (evt instanceof IdleStateEvent) {
      if (pingOutstanding) {
        log.warn("closing connection to {}: silent for two keepalive periods, a PING went unanswered; {} calls"
            + " in flight fail with UNAVAILABLE, reconnecting", slot.authority(), inFlight.size());
        closed = true; // no new calls here while it closes
        failAll("connection to " + slot.authority() + " closed: no answer to keepalive PING");
        ctx.close();
      } else {
        pingOutstanding = true;
        writeQueue.enqueue(FrameEncoder.encodeControl(channel.alloc(), TYPE_PING, 0));
      }
      return;
    }
    super.userEventTriggered(ctx, evt);
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    pingOutstanding = false;
    if (!answered) {
      answered = true;
      slot.onAnswered();
    }
    if (msg instanceof Frame frame) {
      try {
        onFrame(frame);
      } finally {
        frame.release();
      }
    } else if (msg instanceof OversizeFrame big) {
      PendingCall<?> call = big.type() == TYPE_RESPONSE ? inFlight.remove(big.requestId()) : null;
      Status s = Status.RESOURCE_EXHAUSTED.withDescription("response of " + big.frameSize() + " bytes exceeds the"
          + " client's max" + ("frame".equals(big.what()) ? "FrameSize " : "MetadataSize ") + big.limit()
          + " (raise RpcClient.builder().max" + ("frame".equals(big.what()) ? "FrameSize" : "MetadataSize") + ")");
      log.warn("{} from {}: skipped", s.description(), slot.authority());
      if (call != null) {
        call.fail(s);
      }
    } else {
      ReferenceCountUtil.release(msg);
    }
  }

  private void onFrame(Frame frame) {
    switch (frame.type) {
      case TYPE_RESPONSE:
        onResponse(frame);
        return;
      case TYPE_PING:
        writeQueue.enqueue(FrameEncoder.encodeControl(channel.alloc(), TYPE_PONG, frame.requestId));
        return;
      case TYPE_PONG:
        return;
      case TYPE_GOAWAY:
        goaway = true;
        log.debug("server {} sent GOAWAY; {} calls still in flight on this connection", slot.authority(),
            inFlight.size());
        slot.onGoaway(this);
        closeIfDrained();
        return;
      default:
        protocolViolation("the server sent a " + typeName(frame.type) + " frame, which only clients send");
    }
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private void onResponse(Frame frame) {
    PendingCall call = inFlight.remove(frame.requestId);
    if (goaway) {
      closeIfDrained();
    }
    if (call == null) {
      log.debug("response for request {} that is no longer waiting (deadline passed or cancelled)",
          Integer.toUnsignedString(frame.requestId));
      return;
    }
    ByteBuf body = frame.body();
    call.responseSize = body.readableBytes();
    call.responseMetadata(frame.metadata);
    if (frame.status != 0) {
      Status s = Status.fromCodeValue(frame.status).withDescription(body.toString(StandardCharsets.UTF_8));
      if (s.code() == Status.Code.UNIMPLEMENTED) {
        s = s.withDescription(call.method.fullName() + " is not implemented by " + slot.authority() + ": "
            + s.description());
      }
      call.fail(s);
      return;
    }
    call.onResponseBody(body, wakeChain);
    posted = true;
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
    if (posted) {
      posted = false;
      wakeChain.kick();
    }
    super.channelReadComplete(ctx);
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
      wakeChain.kick(); // a safety net only: every read batch ends with a kick
    }
    if (closed) {
      return;
    }
    long now = System.nanoTime();
    if (!waiting.isEmpty()) {
      sweepWaiting(now);
    }
    if (now - earliestSwept >= 0 && !inFlight.isEmpty()) {
      long earliest = Long.MAX_VALUE;
      List<PendingCall<?>> expired = null;
      for (PendingCall<?> c : inFlight.values()) {
        if (c.deadline == null) {
          continue;
        }
        long at = c.deadline.nanoTime();
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
        for (PendingCall<?> c : expired) {
          c.run(); // forgets the call, sends CANCEL, fails it with DEADLINE_EXCEEDED
        }
      }
    }
    if (!inFlight.isEmpty() || !waiting.isEmpty() || !wakeChain.isEmpty()) {
      scheduleSweep();
    } else {
      earliestSwept = Long.MAX_VALUE;
    }
  }

  /** Event loop: held calls that ended (deadline, cancel) give back their memory; due ones are failed. */
  private void sweepWaiting(long now) {
    java.util.Iterator<PendingCall<?>> it = waiting.iterator();
    while (it.hasNext()) {
      PendingCall<?> c = it.next();
      if (!c.isFinished() && c.deadline != null && now - c.deadline.nanoTime() >= 0) {
        c.run(); // not sent: fails with DEADLINE_EXCEEDED "(the request was not sent yet)"
      }
      if (c.isFinished()) {
        it.remove();
        c.releaseFrame();
      }
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    closed = true;
    // The slot first: a caller that retries when its call fails below must find the slot reconnecting (or
    // backing off), not this dead connection's place still empty of any plan.
    slot.onClosed(this);
    PendingCall<?> held;
    while ((held = waiting.poll()) != null) {
      held.releaseFrame();
      held.fail(Status.UNAVAILABLE.withDescription("connection to " + slot.authority() + " closed before "
          + held.method.fullName() + " could be sent (the server was not reading); retry"));
    }
    failAll("connection to " + slot.authority() + " closed" + reasonSuffix());
    wakeChain.kick();
    super.channelInactive(ctx);
  }

  private void failAll(String why) {
    if (inFlight.isEmpty()) {
      return;
    }
    List<PendingCall<?>> calls = new ArrayList<>(inFlight.values());
    inFlight.clear();
    for (PendingCall<?> c : calls) {
      c.fail(Status.UNAVAILABLE.withDescription(why + " while " + c.method.fullName()
          + " was in flight; the server may or may not have run it"));
    }
  }

  @Override
  public String toString() {
    return "ClientConnection{" + channel + ", closed=" + closed + ", goaway=" + goaway + ", inFlight="
        + inFlight.size() + ", waiting=" + waiting.size() + ", " + writeQueue + ", active=" + channel.isActive()
        + ", writable=" + channel.isWritable() + "}";
  }

  int inFlightCount() {
    return inFlight.size();
  }

  /** Event loop: why the connection failed, if it was a TLS error; else null. */
  String closeReason() {
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
        closeReason = "TLS: " + TlsErrors.describe(cause, true, slot.host(), slot.hasOwnCertificate(),
            TlsErrors.sentCertificate(ctx.pipeline()));
      }
      log.debug("connection to {} failed: {}", slot.authority(), closeReason, cause);
      channel.close();
      return;
    }
    ConnectionErrors.close(client.limitLog(), channel, cause, "to " + slot.authority());
  }

  private void protocolViolation(String what) {
    ConnectionErrors.protocolViolation(client.limitLog(), channel, what, "to " + slot.authority());
  }
}
