package io.petrel.rpc.transport.netty;

import static io.petrel.rpc.transport.netty.Protocol.*;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
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
   * Deadlines at least this far away are enforced by a periodic sweep of {@link #inFlight} instead of a
   * timer per call: a call with the default 30 s deadline then costs no scheduled task (a timer per call was
   * ~10% of client CPU in the benchmarks). Nearer deadlines get their own timer, to the millisecond.
   */
  static final long SWEPT_DEADLINE_NANOS = TimeUnit.SECONDS.toNanos(1);
  /** How often the sweep runs: a swept deadline fires at most this late. */
  static final long SWEEP_PERIOD_MILLIS = 50;
  private ScheduledFuture<?> sweeper;
  private int nextRequestId = 1;
  private volatile boolean goaway;
  /** A keepalive PING is unanswered; event loop only. */
  private boolean pingOutstanding;
  private volatile boolean closed;
  /** Wakes the blocking callers whose responses this connection read; see {@link WakeChain}. */
  private final WakeChain wakeChain = new WakeChain();
  /** Event loop only: a response was posted to a blocking caller since the last kick. */
  private boolean posted;

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
    TransportMetrics metrics = client.metrics();
    if (item instanceof ByteBuf control) { // ping, pong, cancel
      if (channel.isActive()) {
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
    if (closed || !channel.isActive()) {
      call.releaseFrame();
      call.fail(Status.UNAVAILABLE.withDescription("connection to " + client.target()
          + " closed before " + call.method.fullName() + " could be sent; retry"));
      return;
    }
    ByteBuf frame = call.frame;
    call.frame = null;
    if (call.oneway) {
      FrameEncoder.patchRequest(frame, 0, 0);
      channel.write(frame).addListener(f -> {
        if (f.isSuccess()) {
          call.succeed(null);
        } else {
          call.fail(Status.UNAVAILABLE.withDescription("oneway " + call.method.fullName() + " to "
              + client.target() + " could not be written: " + f.cause()).withCause(f.cause()));
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
    }
  }

  /** Any thread: the caller cancelled or completed the future itself. */
  void cancelled(PendingCall<?> call) {
    channel.eventLoop().execute(() -> forget(call));
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
    if (evt instanceof IdleStateEvent) {
      if (pingOutstanding) {
        log.warn("closing connection to {}: silent for two keepalive periods, a PING went unanswered; {} calls"
            + " in flight fail with UNAVAILABLE, reconnecting", client.target(), inFlight.size());
        failAll("connection to " + client.target() + " closed: no answer to keepalive PING");
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
      log.warn("{} from {}: skipped", s.description(), client.target());
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
        log.debug("server {} sent GOAWAY; {} calls still in flight on this connection", client.target(),
            inFlight.size());
        slot.onGoaway(this);
        return;
      default:
        protocolViolation("the server sent a " + typeName(frame.type) + " frame, which only clients send");
    }
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private void onResponse(Frame frame) {
    PendingCall call = inFlight.remove(frame.requestId);
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
        s = s.withDescription(call.method.fullName() + " is not implemented by " + client.target() + ": "
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

  @Override
  public void channelActive(ChannelHandlerContext ctx) throws Exception {
    sweeper = channel.eventLoop().scheduleAtFixedRate(this::sweepDeadlines, SWEEP_PERIOD_MILLIS,
        SWEEP_PERIOD_MILLIS, TimeUnit.MILLISECONDS);
    super.channelActive(ctx);
  }

  /** Event loop: fails the calls whose (far) deadline has passed. */
  private void sweepDeadlines() {
    if (!wakeChain.isEmpty()) {
      wakeChain.kick(); // a safety net only: every read batch ends with a kick
    }
    if (inFlight.isEmpty()) {
      return;
    }
    List<PendingCall<?>> expired = null;
    for (PendingCall<?> c : inFlight.values()) {
      if (c.deadline != null && c.deadline.remainingNanos() <= 0) {
        if (expired == null) {
          expired = new ArrayList<>();
        }
        expired.add(c);
      }
    }
    if (expired != null) {
      for (PendingCall<?> c : expired) {
        c.run(); // forgets the call, sends CANCEL, fails it with DEADLINE_EXCEEDED
      }
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    closed = true;
    if (sweeper != null) {
      sweeper.cancel(false);
    }
    failAll("connection to " + client.target() + " closed");
    wakeChain.kick();
    slot.onClosed(this);
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

  int inFlightCount() {
    return inFlight.size();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    ConnectionErrors.close(log, channel, cause, "to " + client.target());
  }

  private void protocolViolation(String what) {
    ConnectionErrors.protocolViolation(log, channel, what, "to " + client.target());
  }
}
