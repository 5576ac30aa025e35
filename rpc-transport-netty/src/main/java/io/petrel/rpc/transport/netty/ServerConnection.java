package io.petrel.rpc.transport.netty;

import io.petrel.rpc.spi.FrameSizes;
import static io.petrel.rpc.transport.netty.Protocol.*;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.DecoderException;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import io.petrel.rpc.Marshaller;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.ServerMethodDefinition;
import io.petrel.rpc.Status;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.SocketAddress;
import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.jspecify.annotations.Nullable;

/**
 * The server side of one connection: one instance per channel. Consumes every {@link Frame} it reads
 * (releases it, or hands it to a {@link NettyServerCall} that does). Dispatch happens on the event loop; handlers
 * run on the business executor; responses come back through the {@link WriteQueue}.
 */
final class ServerConnection extends ChannelInboundHandlerAdapter
    implements WriteQueue.Sink, FrameEncoder.Output {
  private static final Logger log = LoggerFactory.getLogger(ServerConnection.class);

  private final NettyServerTransport server;
  private final Channel channel;
  private final WriteQueue writeQueue;
  /** Calls admitted and not yet ended (response queued); for draining and metrics. */
  private final AtomicInteger inFlight = new AtomicInteger();
  /** Oneway calls admitted and not yet ended; with {@link #calls}, what maxConcurrentCallsPerConnection counts. */
  private final AtomicInteger onewaysRunning = new AtomicInteger();
  /** Unary calls awaiting their response, for CANCEL; event loop only. */
  private final CallTable<NettyServerCall> calls = new CallTable<>();
  private final @Nullable TransportMetrics metrics;
  private final FrameDecoder decoder;
  private final BufferBudget budget;
  private volatile boolean goawaySent;
  /** A GOAWAY that refuses later requests (graceful shutdown) was sent; event loop only. */
  private boolean refusingGoawaySent;
  /** The id of the last REQUEST admitted for its handler, in arrival order (GOAWAY's last id); event loop only. */
  private int lastTakenRequestId;
  /**
   * Event loop only: responses that waited because the peer was not reading (the channel above its high water
   * mark). They hold no encoded bytes and no thread; they are encoded and written, in order, once the channel
   * drains, dropped when their deadline has passed by then, and released when the connection closes.
   */
  private final ArrayDeque<Deferred> parked = new ArrayDeque<>();
  /** Event loop only: the housekeeping task enforcing the server's timeouts on this connection. */
  private @Nullable ScheduledFuture<?> housekeeping;
  private final long openedAt = System.nanoTime();
  /** Event loop only: state of the timeouts, see {@link #tick()}. */
  private boolean framesSeen;
  private boolean readSinceTick;
  private boolean activeSinceTick;
  private long lastRead = openedAt;
  private long lastActive = openedAt;
  private boolean pingOutstanding;
  private long pingSentAt;
  private long unwritableSince;
  /** Event loop only: when this connection began to drain (idleTimeout, maxConnectionAge), or 0. */
  private long drainStartedAt;
  private String drainReason = "";
  /**
   * The id of the PING sent right after an idleTimeout or maxConnectionAge GOAWAY. The client answers it after it has read the
   * GOAWAY, and every call it sent before that arrives before the PONG: once the PONG is in and no call is in
   * flight, closing cuts no call the client sent in the meantime.
   */
  static final int DRAIN_PING_ID = 0x60A7;
  /** Event loop only: the PONG to {@link #DRAIN_PING_ID} has arrived. */
  private boolean drainPingAnswered;
  /**
   * The id of the PING sent when the connection goes over its share: a client that reads answers it once it has
   * read what was sent before it; one that does not is closed ({@link #checkOverShare}).
   */
  static final int OVER_SHARE_PING_ID = 0x0B5E;
  /** Event loop only: the PONG to {@link #OVER_SHARE_PING_ID} has arrived since it was sent. */
  private boolean overSharePongSeen;
  private final long maxAgeNanos;
  /**
   * Bytes of responses encoded by business threads and queued for the event loop, not yet in the channel's
   * outbound buffer: with that buffer's own count (Netty's writability), what a business thread checks before
   * encoding another response. Without it a burst of calls could all find the channel writable and encode
   * their responses before the event loop wrote the first.
   */
  private final java.util.concurrent.atomic.LongAdder queuedBytes = new java.util.concurrent.atomic.LongAdder();
  /** Event loop only: inside a read batch, where writes are flushed once, at channelReadComplete. */
  private boolean reading;
  private boolean flushPending;
  /**
   * Event loop only: the responses encoded on the event loop during this read batch (direct mode), one after
   * the other in one buffer that is written at the end of the batch: one allocation, one pipeline pass and
   * one iovec for all of them instead of one each.
   */
  private @Nullable ByteBuf batch;
  /**
   * Largest size a {@link #batch} is allocated with (within the event loop's pooled cache). A frame that does
   * not fit in what is left starts a new batch, of its own size if larger; a batch that reaches this size is
   * written out (not flushed).
   */
  static final int BATCH_BYTES = 16 * 1024;
  /** Smallest size a {@link #batch} is allocated with. */
  static final int MIN_BATCH_BYTES = 512;
  /**
   * Event loop only: the size the next batch is allocated with, two to four times what the last one held
   * (a power of two, within the bounds above). Sized by what batches actually hold, a batch's capacity stays within
   * a few times its content: the outbound buffer's high water mark counts content, so a client that does not
   * read cannot make the server hold 16 KiB per tiny reply.
   */
  private int batchHint = MIN_BATCH_BYTES;
  /**
   * Heap allocator for responses that wait for a peer that does not read: encoded at once (so their size is
   * known and counted, and the handler's objects are let go), on the heap (the channel copies them into direct
   * memory when it writes them).
   */
  private static final io.netty.buffer.ByteBufAllocator PARK_ALLOC = new io.netty.buffer.UnpooledByteBufAllocator(false);
  /** How long a connection over its share may go on not reading before it is closed (or unwritableTimeout). */
  static final long OVER_SHARE_GRACE_NANOS = TimeUnit.SECONDS.toNanos(2);
  /** This connection's share of the server's buffer budget (maxBufferedBytesPerConnection). */
  private final long shareBytes;
  /**
   * Bytes of encoded responses waiting for the peer to read (in {@link #parked} or on their way there through
   * the write queue); each also holds its size in the server's {@link BufferBudget}.
   */
  private final java.util.concurrent.atomic.AtomicLong parkedBytes = new java.util.concurrent.atomic.AtomicLong();
  /** Bytes of requests of at least {@link FrameDecoder#RESERVE_THRESHOLD} admitted and not yet let go by their call. */
  private final java.util.concurrent.atomic.AtomicLong requestBytes = new java.util.concurrent.atomic.AtomicLong();
  /** When this connection went over its share (a response was dropped for lack of room), or 0. */
  private final java.util.concurrent.atomic.AtomicLong overSince = new java.util.concurrent.atomic.AtomicLong();
  /**
   * When the channel last went above its high water mark, or 0 while it is writable; written on the event loop,
   * read by business threads ({@link #park}).
   */
  private volatile long unwritableAt;
  /** Reading is paused because requests waiting for the pool hold the connection's share. */
  private volatile boolean readsPausedForRequests;

  ServerConnection(NettyServerTransport server, Channel channel, FrameDecoder decoder) {
    this.server = server;
    this.channel = channel;
    this.decoder = decoder;
    this.writeQueue = new WriteQueue(channel, this);
    this.metrics = server.metrics();
    this.budget = server.budget();
    long age = server.config().limits().maxConnectionAgeNanos();
    this.maxAgeNanos = age <= 0 ? 0 : (long) (age * (0.9 + 0.2 * ThreadLocalRandom.current().nextDouble()));
    this.shareBytes = server.config().limits().maxBufferedBytesPerConnection();
  }

  /**
   * A response that waits for the peer to read (see {@link #parked}): its frame, encoded on the heap, counted in
   * {@link #parkedBytes} and the server's budget until it is written or dropped ({@link #unpark}).
   */
  private record Deferred(NettyServerCall call, ByteBuf frame) {}

  /** What {@link #writeResponse} returns when the response waits for the peer to read; the call is not over. */
  static final int DEFERRED = io.petrel.rpc.spi.ServerCall.DEFERRED;

  NettyServerTransport server() {
    return server;
  }

  io.petrel.rpc.spi.ServerDispatcher dispatcher() {
    return server.dispatcher();
  }

  SocketAddress remoteAddress() {
    return channel.remoteAddress();
  }

  /** The peer's IP address, or null if it has none (not a TCP connection). */
  java.net.@Nullable InetAddress remoteIp() {
    return channel.remoteAddress() instanceof java.net.InetSocketAddress a ? a.getAddress() : null;
  }

  int inFlight() {
    return inFlight.get();
  }

  Channel channel() {
    return channel;
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) throws Exception {
    if (!server.connectionOpened(this)) {
      ctx.close();
      return;
    }
    if (!server.isTls()) {
      sendSettings(ctx); // the server's first frame; with TLS, the first after the handshake (userEventTriggered)
    }
    long tick = server.housekeepingPeriodNanos();
    if (tick > 0) {
      housekeeping = channel.eventLoop().scheduleAtFixedRate(this::tick, tick, tick, TimeUnit.NANOSECONDS);
    }
    log.debug("connection from {} opened", channel.remoteAddress());
    super.channelActive(ctx);
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
    if (evt instanceof io.netty.handler.ssl.SslHandshakeCompletionEvent done && done.isSuccess()
        && channel.isActive()) {
      sendSettings(ctx);
    }
    super.userEventTriggered(ctx, evt);
  }

  /**
   * Announces the server's limits (docs/protocol.md, SETTINGS): a client keeps its calls in flight on this
   * connection within maxConcurrentCallsPerConnection instead of having the excess refused.
   */
  private void sendSettings(ChannelHandlerContext ctx) {
    io.petrel.rpc.spi.ServerConfig c = server.config();
    ByteBuf settings = FrameEncoder.encodeSettings(channel.alloc(),
        SETTING_MAX_CONCURRENT_CALLS, c.maxConcurrentCallsPerConnection(),
        SETTING_MAX_FRAME_SIZE, c.maxFrameSize(),
        SETTING_MAX_METADATA_SIZE, c.maxMetadataSize());
    if (metrics != null) {
      metrics.bytesSent.increment(settings.readableBytes());
    }
    ctx.writeAndFlush(settings, ctx.voidPromise());
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    releaseBatch();
    if (housekeeping != null) {
      housekeeping.cancel(false);
    }
    Deferred d;
    while ((d = parked.poll()) != null) {
      dropDeferred(d); // the peer is gone: nobody to answer
    }
    server.connectionClosed(this);
    if (!calls.isEmpty()) {
      String how = closedHow;
      Status why = Status.CANCELLED.withDescription(how == null ? "the connection from " + channel.remoteAddress()
          + " closed" : "the server closed the connection from " + channel.remoteAddress() + ": " + how);
      for (NettyServerCall c : calls.values()) {
        c.context().cancel(why); // nobody is waiting any more
      }
      calls.clear();
    }
    log.debug("connection from {} closed with {} calls in flight", channel.remoteAddress(), inFlight.get());
    super.channelInactive(ctx);
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    reading = true;
    framesSeen = true;
    readSinceTick = true;
    pingOutstanding = false;
    if (msg instanceof Frame frame) {
      onFrame(frame);
    } else if (msg instanceof OversizeFrame big) {
      onOversize(big);
    } else {
      ReferenceCountUtil.release(msg);
    }
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) throws Exception {
    releaseBatch();
    super.handlerRemoved(ctx);
  }

  private void releaseBatch() {
    ByteBuf b = batch;
    batch = null;
    if (b != null) {
      b.release();
    }
  }

  /** Event loop: writes (without flushing) the responses batched so far. */
  private void writeBatch() {
    ByteBuf b = batch;
    batch = null;
    if (b == null) {
      return;
    }
    if (!b.isReadable() || !channel.isActive()) {
      b.release();
      return;
    }
    int n = b.readableBytes();
    batchHint = Math.min(BATCH_BYTES, Math.max(MIN_BATCH_BYTES, Integer.highestOneBit(n) << 2));
    if (metrics != null) {
      metrics.bytesSent.increment(n);
    }
    channel.write(b, channel.voidPromise());
    flushPending = true;
    activeSinceTick = true;
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
    reading = false;
    writeBatch();
    if (flushPending) {
      flushPending = false;
      ctx.flush();
    }
    super.channelReadComplete(ctx);
  }

  /**
   * Sends a frame. A response produced while this event loop reads (direct mode, or an error found on the
   * loop) is written at once and flushed with the rest of the batch; from any other thread, or outside a
   * read, it goes through the {@link WriteQueue}.
   */
  private void send(ByteBuf frame) {
    if (reading && channel.eventLoop().inEventLoop()) {
      writeBatch(); // keeps the order of frames
      writeFrame(frame);
      flushPending = true;
    } else {
      writeQueue.enqueue(frame);
    }
  }

  private void onFrame(Frame frame) {
    switch (frame.type) {
      case TYPE_REQUEST:
      case TYPE_ONEWAY:
        dispatch(frame);
        return;
      case TYPE_PING:
        frame.release();
        send(FrameEncoder.encodeControl(channel.alloc(), TYPE_PONG, frame.requestId));
        return;
      case TYPE_CANCEL: {
        frame.release();
        NettyServerCall c = calls.get(frame.requestId);
        if (c != null) {
          // Why, as the client says: its deadline passed (DEADLINE_EXCEEDED), else cancelled.
          c.context().cancel(frame.status == Status.Code.DEADLINE_EXCEEDED.value() ? Status.Code.DEADLINE_EXCEEDED
              : Status.Code.CANCELLED);
        }
        return;
      }
      case TYPE_PONG: // an answer to our keepalive PING: reading it was enough; or to the drain PING after GOAWAY
        if (frame.requestId == DRAIN_PING_ID) {
          drainPingAnswered = true;
        } else if (frame.requestId == OVER_SHARE_PING_ID) {
          overSharePongSeen = true;
        }
        frame.release();
        return;
      case TYPE_GOAWAY:
      case TYPE_SETTINGS: // reserved for clients of a later version; nothing to apply in this one
        frame.release();
        return;
      default:
        frame.release();
        protocolViolation("wrong-side frame", "a client sent a " + typeName(frame.type) + " frame, which only servers send");
    }
  }

  private void dispatch(Frame frame) {
    boolean oneway = frame.type == TYPE_ONEWAY;
    io.petrel.rpc.spi.ServerDispatcher dispatcher = server.dispatcher();
    io.petrel.rpc.spi.ServerDispatcher.Method def = dispatcher.lookup(frame.methodId);
    if (def == null) {
      frame.release();
      reject(oneway, frame.requestId,
          dispatcher.unknownMethod(frame.methodId, String.valueOf(channel.remoteAddress())));
      return;
    }
    // Each refusal below is counted for its method (rpc.server.calls), as the business pool's are.
    int bodyBytes = frame.body().readableBytes();
    if (dispatcher.isShutdown()) {
      frame.release();
      // The shutdown refuses calls before its GOAWAY reaches this event loop: the GOAWAY goes first (unless it
      // went already), so that the client reads it before the refusal and sends this call elsewhere.
      sendGoaway(true);
      Status refusal = dispatcher.shuttingDown();
      dispatcher.refused(def, refusal.code(), bodyBytes);
      refuse(oneway, frame.requestId, refusal);
      return;
    }
    if (overSince.get() != 0) {
      frame.release();
      dispatcher.refused(def, Status.Code.RESOURCE_EXHAUSTED, bodyBytes);
      refuse(oneway, frame.requestId, Status.RESOURCE_EXHAUSTED.withDescription("call refused without running: the"
          + " client of this connection is not reading its responses, and they took its share of the server's"
          + " buffers (" + shareBytes + " bytes, RpcServer.builder().maxBufferedBytesPerConnection); read the"
          + " responses, or raise the limit"));
      return;
    }
    // The limit counts unary calls until their response is written (on this event loop, so a client that
    // sends its next call on receiving a response always finds the slot free) and oneways until they end.
    int limit = server.config().maxConcurrentCallsPerConnection();
    if (calls.size() + onewaysRunning.get() >= limit) {
      frame.release();
      dispatcher.refused(def, Status.Code.RESOURCE_EXHAUSTED, bodyBytes);
      refuse(oneway, frame.requestId, Status.RESOURCE_EXHAUSTED.withDescription("this connection already has "
          + limit + " calls in flight, the server's maxConcurrentCallsPerConnection (raise it with"
          + " RpcServer.builder().maxConcurrentCallsPerConnection, or spread calls over more connections)"));
      return;
    }
    Status wrongType = io.petrel.rpc.spi.ServerDispatcher.checkType(def, oneway);
    if (wrongType != null) {
      frame.release();
      dispatcher.refused(def, wrongType.code(), bodyBytes);
      reject(oneway, frame.requestId, wrongType);
      return;
    }
    long start = System.nanoTime();
    io.petrel.rpc.Deadline deadline = frame.timeoutMillis == 0 ? null
        : io.petrel.rpc.Deadline.afterNanos(frame.timeoutMillis * 1_000_000L, start);
    io.petrel.rpc.ServerContext context = new io.petrel.rpc.ServerContext(def.method(),
        frame.metadata, deadline, channel.remoteAddress(), bodyBytes, start,
        server.isTls() ? ServerTlsHandler.peerCertificates(channel) : java.util.List.of());
    // What the request holds while it waits for the business pool: its body, and its metadata as decoded (many
    // small entries hold far more on the heap than their bytes on the wire).
    int requestSize = (int) Math.min(Integer.MAX_VALUE, (long) bodyBytes + frame.metadataHeapBytes);
    if (requestSize >= FrameDecoder.RESERVE_THRESHOLD && !budget.tryReserve(requestSize)) {
      frame.release();
      dispatcher.refused(def, Status.Code.RESOURCE_EXHAUSTED, bodyBytes);
      refuse(oneway, frame.requestId, Status.RESOURCE_EXHAUSTED.withDescription("request of " + requestSize
          + " bytes (its body and decoded metadata) refused without running: the server holds " + budget.used()
          + " bytes of requests waiting for its business pool, unsent responses and partly received frames, and"
          + " this one would take it over its maxBufferedBytes of " + budget.max()
          + " (retry later, or raise RpcServer.builder().maxBufferedBytes)"));
      return;
    }
    NettyServerCall call = new NettyServerCall(this, def, context, frame);
    if (requestSize >= FrameDecoder.RESERVE_THRESHOLD) {
      call.holdRequestBytes(requestSize);
      if (requestBytes.addAndGet(requestSize) >= shareBytes && !readsPausedForRequests) {
        readsPausedForRequests = true; // requests waiting for the pool hold this connection's share
        channel.config().setAutoRead(false);
      }
    }
    if (!oneway) {
      NettyServerCall previous = calls.put(frame.requestId, call);
      if (previous != null) {
        calls.put(frame.requestId, previous);
        call.discard();
        protocolViolation("request id in flight", "request id " + Integer.toUnsignedString(frame.requestId) + " is already in flight on"
            + " this connection (a client must not reuse the id of a call that has not been answered)");
        return;
      }
    }
    inFlight.incrementAndGet();
    activeSinceTick = true;
    if (oneway) {
      onewaysRunning.incrementAndGet();
    }
    if (!oneway) {
      lastTakenRequestId = frame.requestId;
    }
    Status refused = dispatcher.execute(call.call());
    if (refused != null) {
      if (oneway) {
        onewaysRunning.decrementAndGet();
      } else {
        calls.remove(frame.requestId);
      }
      call.discard();
      inFlight.decrementAndGet();
      dispatcher.callEnded();
      if (dispatcher.isShutdown()) {
        sendGoaway(true); // shut down meanwhile: as above, the GOAWAY goes before the refusal
      }
      refuse(oneway, frame.requestId, refused); // the executor is full (or shut down): the call never ran
    }
  }

  /** Answers a request with an error status (a oneway is dropped): what it asks for cannot be served. */
  private void reject(boolean oneway, int requestId, Status status) {
    if (oneway) {
      log.debug("dropping oneway call from {}: {}", channel.remoteAddress(), status);
    } else {
      writeError(requestId, status);
    }
  }

  /**
   * Answers a request refused before any handler saw it, because of a limit or the server's shutdown, with the
   * REFUSED flag (docs/protocol.md, "Refusals"): the client may send it to another server, where it runs once.
   * Only for refusals that another server may not make; a oneway is dropped.
   */
  private void refuse(boolean oneway, int requestId, Status status) {
    if (oneway) {
      log.debug("dropping oneway call from {}: {}", channel.remoteAddress(), status);
    } else {
      send(FrameEncoder.encodeRefusal(channel.alloc(), requestId, status, server.config().maxFrameSize()));
    }
  }

  private void onOversize(OversizeFrame big) {
    if ("buffer".equals(big.what())) {
      Status status = Status.RESOURCE_EXHAUSTED.withDescription("request of " + big.frameSize() + " bytes refused"
          + " unread: the server holds " + server.budget().used() + " bytes of partly received frames, unsent"
          + " responses and requests waiting for its business pool, and this one would take it over its"
          + " maxBufferedBytes of " + big.limit() + " (retry later, or raise RpcServer.builder().maxBufferedBytes)");
      server.limitLog().warn("maxBufferedBytes", status.description() + " from " + channel.remoteAddress());
      if (big.type() == TYPE_REQUEST) {
        refuse(false, big.requestId(), status); // unread: the server's buffers were full, not the request too large
      }
      return;
    }
    String side = "the server's";
    Status status = Status.RESOURCE_EXHAUSTED.withDescription(("frame".equals(big.what()) ? "request" : "metadata")
        + " of " + big.frameSize() + " bytes exceeds " + side + " max" + ("frame".equals(big.what())
        ? "FrameSize " : "MetadataSize ") + big.limit() + " (raise RpcServer.builder().max"
        + ("frame".equals(big.what()) ? "FrameSize" : "MetadataSize") + ")");
    server.limitLog().warn("max" + big.what(), status.description() + " from " + channel.remoteAddress()
        + ": refused without reading it");
    if (big.type() == TYPE_REQUEST) {
      writeError(big.requestId(), status);
    }
  }

  /** Called from any thread when a oneway call has ended. */
  void onewayDone() {
    onewaysRunning.decrementAndGet();
  }

  /** Called from any thread when a call has ended (response queued or dropped). */
  void callDone() {
    inFlight.decrementAndGet();
  }

  void writeError(int requestId, Status status) {
    writeError(requestId, status, Metadata.EMPTY);
  }

  /** An error status in place of a response ({@code ServerStream.sendStatus}): a RESPONSE with that status. */
  void writeError(int requestId, Status status, Metadata metadata) {
    send(FrameEncoder.encodeError(channel.alloc(), requestId, status, metadata, server.config().maxFrameSize()));
  }

  /**
   * A call's one message with the end marker ({@code ServerStream.sendMessage(..., true)}): its one RESPONSE frame,
   * status 0, flags 0, the call's headers as metadata. Queues it (or appends it to the read batch); returns its
   * body size, -1 if it could not be encoded (an error was sent), or {@link #DEFERRED} if it waits for the peer
   * to read, in which case the call ends later, through {@link io.petrel.rpc.spi.ServerCall#deferredDone}.
   */
  int writeResponse(NettyServerCall call, Marshaller<Object> marshaller, Object response) {
    MethodDescriptor<?, ?> m = call.method();
    boolean onLoop = channel.eventLoop().inEventLoop();
    if (reading && onLoop) {
      if (!channel.isWritable() || !parked.isEmpty()) {
        return park(call, marshaller, response, true);
      }
      return appendResponse(call, marshaller, response, m);
    }
    if (!channel.isWritable() || queuedBytes.sum() >= channel.bytesBeforeUnwritable()) {
      // The peer is not reading: the response waits on the heap, counted, until the channel drains.
      return park(call, marshaller, response, false);
    }
    ByteBuf buf;
    Metadata md = call.headers();
    try {
      buf = FrameEncoder.encodeMessage(channel.alloc(), TYPE_RESPONSE, call.requestId, 0, 0, md,
          marshaller, response, server.config().maxFrameSize(), server.config().maxMetadataSize(),
          "RpcServer.builder()");
    } catch (Throwable t) {
      encodeFailed(call.requestId, m, t);
      return -1;
    }
    int bodySize = buf.getInt(OFF_BODY_LENGTH);
    int size = buf.readableBytes();
    if (size >= FrameDecoder.RESERVE_THRESHOLD && !budget.tryReserve(size)) {
      buf.release();
      String why = "response of " + m.fullName() + " (" + size
          + " bytes) dropped: the server holds " + budget.used() + " bytes of unsent responses, requests waiting"
          + " for its business pool and partly received frames, and this one would take it over its"
          + " maxBufferedBytes of " + budget.max() + " (raise RpcServer.builder().maxBufferedBytes, or add servers)";
      server.limitLog().warn("maxBufferedBytes", why);
      writeError(call.requestId, Status.RESOURCE_EXHAUSTED.withDescription(why));
      return -1;
    }
    queuedBytes.add(size);
    writeQueue.enqueue(buf);
    return bodySize;
  }

  /**
   * A response for a peer that is not reading: encoded on the heap and counted against this connection's share
   * and the server's budget, then parked until the channel drains. One that does not fit is replaced by
   * RESOURCE_EXHAUSTED, and the connection is over its share: it takes no new call, and is closed if its peer
   * still does not read after the grace period ({@link #checkOverShare}).
   */
  private int park(NettyServerCall call, Marshaller<Object> marshaller, Object response, boolean onLoop) {
    MethodDescriptor<?, ?> m = call.method();
    ByteBuf buf;
    try {
      buf = FrameEncoder.encodeMessage(PARK_ALLOC, TYPE_RESPONSE, call.requestId, 0, 0, call.headers(),
          marshaller, response, server.config().maxFrameSize(), server.config().maxMetadataSize(),
          "RpcServer.builder()");
    } catch (Throwable t) {
      encodeFailed(call.requestId, m, t);
      return -1;
    }
    int size = buf.readableBytes();
    String option = null;
    long held = parkedBytes.addAndGet(size) + requestBytes.get();
    if (held > shareBytes && !drainedLately()) {
      option = "maxBufferedBytesPerConnection";
    } else if (!budget.tryReserve(size)) {
      option = "maxBufferedBytes";
    }
    if (option != null) {
      parkedBytes.addAndGet(-size);
      buf.release();
      Status s = Status.RESOURCE_EXHAUSTED.withDescription("response of " + m.fullName() + " (" + size + " bytes)"
          + " dropped: the client is not reading its responses, and " + ("maxBufferedBytes".equals(option)
          ? "the server holds " + budget.used() + " bytes for its peers: this one would take it over its"
              + " maxBufferedBytes of " + budget.max()
          : "this connection already holds " + (held - size) + " bytes of them, its maxBufferedBytesPerConnection "
              + shareBytes) + " (read responses as they come, or raise RpcServer.builder()." + option + ")");
      server.limitLog().warn(option, s.description() + "; client " + channel.remoteAddress());
      overShare();
      if ("maxBufferedBytes".equals(option)) {
        server.buffersFull();
      }
      writeError(call.requestId, s);
      return -1;
    }
    if (held > shareBytes) {
      watchOverShare(); // a peer that reads lately may go over its share, but not stay over it without reading
    }
    Deferred d = new Deferred(call, buf);
    if (onLoop) {
      parked.add(d);
    } else {
      writeQueue.enqueue(d);
    }
    return DEFERRED;
  }

  /**
   * The peer has read lately: its write buffer was below the high water mark within the grace period. Such a
   * peer (a client pipelining many calls, reading as fast as the network allows) may go over its share, within
   * the server's budget; one that has not read for longer is held to it.
   */
  private boolean drainedLately() {
    long since = unwritableAt;
    return since == 0 || System.nanoTime() - since < overShareGraceNanos();
  }

  /** A parked response leaves (written or dropped): it stops counting. */
  private void unpark(ByteBuf frame) {
    int size = frame.readableBytes();
    parkedBytes.addAndGet(-size);
    budget.release(size);
  }

  /** A parked response that will not be written: the peer is gone or the server stops. */
  private void dropDeferred(Deferred d) {
    unpark(d.frame());
    d.frame().release();
    d.call().deferredDone(Status.Code.CANCELLED, -1);
  }

  /** How long a connection over its share may go on not reading: 2 s, or unwritableTimeout if shorter. */
  long overShareGraceNanos() {
    long unwritable = server.config().limits().unwritableTimeoutNanos();
    return unwritable > 0 ? Math.min(unwritable, OVER_SHARE_GRACE_NANOS) : OVER_SHARE_GRACE_NANOS;
  }

  /**
   * Event loop, when the server's buffers for its peers are full: a connection whose client has left responses
   * waiting and not read for longer than the grace period gives its room back to the others (it is closed).
   */
  void evictIfStale(long now) {
    long since = unwritableAt;
    if (!channel.isActive() || channel.isWritable() || since == 0 || parkedBytes.get() == 0
        || now - since <= overShareGraceNanos()) {
      return;
    }
    server.limitLog().warn("maxBufferedBytes", "closing connection from " + channel.remoteAddress() + ": the server"
        + " holds " + server.budget().used() + " bytes for its peers, its maxBufferedBytes is "
        + server.budget().max() + ", and this client has left "
        + parkedBytes.get() + " bytes of responses unread for " + ms(now - since) + " (raise RpcServer.builder()"
        + ".maxBufferedBytes, or lower maxBufferedBytesPerConnection)");
    closeFor("its client left responses unread while the server's buffers were full (maxBufferedBytes)");
  }

  /** A check of {@link #checkStillOver} is scheduled. */
  private final java.util.concurrent.atomic.AtomicBoolean overShareWatched =
      new java.util.concurrent.atomic.AtomicBoolean();

  /** Any thread: the connection holds more than its share for a peer that read lately; see {@link #park}. */
  private void watchOverShare() {
    if (overShareWatched.compareAndSet(false, true)) {
      try {
        channel.eventLoop().schedule(this::checkStillOver, overShareGraceNanos(), TimeUnit.NANOSECONDS);
      } catch (RejectedExecutionException e) {
        channel.close(); // the event loop is gone
      }
    }
  }

  /**
   * Event loop, a grace period after the connection went over its share: if it still holds more than its share
   * and its peer has not drained the write buffer since, it is closed; otherwise it is watched again if still
   * over.
   */
  private void checkStillOver() {
    overShareWatched.set(false);
    if (!channel.isActive()) {
      return;
    }
    long held = parkedBytes.get() + requestBytes.get();
    if (held <= shareBytes) {
      return;
    }
    long since = unwritableAt;
    if (since != 0 && System.nanoTime() - since >= overShareGraceNanos()) {
      server.limitLog().warn("maxBufferedBytesPerConnection", "closing connection from " + channel.remoteAddress()
          + ": it holds " + held + " bytes of responses its client has not read for " + ms(System.nanoTime() - since)
          + ", over its share maxBufferedBytesPerConnection " + shareBytes + " (see RpcServer.builder()"
          + ".maxBufferedBytesPerConnection)");
      closeFor("its client left more than its share of responses unread (maxBufferedBytesPerConnection)");
    } else {
      watchOverShare();
    }
  }

  /** Any thread: this connection's peer let a response be dropped for lack of room; see {@link #park}. */
  private void overShare() {
    if (overSince.compareAndSet(0, System.nanoTime())) {
      try {
        channel.eventLoop().execute(() -> {
          // Whether the client reads at all: it answers this PING once it has read what was sent before it.
          overSharePongSeen = false;
          channel.writeAndFlush(FrameEncoder.encodeControl(channel.alloc(), TYPE_PING, OVER_SHARE_PING_ID),
              channel.voidPromise());
        });
        channel.eventLoop().schedule(this::checkOverShare, overShareGraceNanos(), TimeUnit.NANOSECONDS);
      } catch (RejectedExecutionException e) {
        channel.close(); // the event loop is gone
      }
    }
  }

  /**
   * Event loop, a grace period after the connection went over its share (and was sent a PING): closes it if its
   * client has not answered the PING, that is has not read what was sent before it; otherwise it takes calls
   * again.
   */
  private void checkOverShare() {
    long since = overSince.get();
    if (since == 0 || !channel.isActive()) {
      return;
    }
    if (overSharePongSeen) {
      overSince.set(0);
      return;
    }
    server.limitLog().warn("maxBufferedBytesPerConnection", "closing connection from " + channel.remoteAddress()
        + ": its client has not read its responses for " + ms(System.nanoTime() - since) + " (no answer to a PING)"
        + " since they went over its share of the server's buffers (" + parkedBytes.get() + " bytes waiting, "
        + "maxBufferedBytesPerConnection " + shareBytes + "; see RpcServer.builder().maxBufferedBytesPerConnection)");
    closeFor("its client stopped reading its responses (maxBufferedBytesPerConnection)");
  }

  /** Any thread: a call let go of a request of {@code bytes} that counted against this connection's share. */
  void requestReleased(int bytes) {
    budget.release(bytes);
    long left = requestBytes.addAndGet(-bytes);
    if (readsPausedForRequests && left <= shareBytes / 2) {
      try {
        channel.eventLoop().execute(this::resumeReads);
      } catch (RejectedExecutionException e) {
        // the event loop is gone, and the channel with it
      }
    }
  }

  /** Event loop: reading goes on once the requests waiting for the pool are under half the share. */
  private void resumeReads() {
    if (readsPausedForRequests && requestBytes.get() <= shareBytes / 2) {
      readsPausedForRequests = false;
      channel.config().setAutoRead(channel.isWritable());
    }
  }

  /** Event loop: a deferred response whose turn has come (the channel drained) or that can go at once. */
  private void writeDeferred(Deferred d) {
    NettyServerCall call = d.call();
    ByteBuf buf = d.frame();
    unpark(buf);
    if (!channel.isActive()) {
      buf.release();
      call.deferredDone(Status.Code.CANCELLED, -1);
      return;
    }
    if (call.context().deadline() != null && call.context().deadline().isExpired()) {
      buf.release();
      // The caller has failed the call by now; sending the response would only fill the socket again. A short
      // error goes instead: every request gets its one RESPONSE, which is what frees the call's place in the
      // client's count of this connection's calls in flight (see SETTINGS in docs/protocol.md).
      writeFrame(FrameEncoder.encodeError(channel.alloc(), call.requestId, Status.DEADLINE_EXCEEDED.withDescription(
          "the deadline passed while the response waited for the client to read; response dropped"),
          server.config().maxFrameSize()));
      flushPending = true;
      call.deferredDone(Status.Code.DEADLINE_EXCEEDED, -1);
      return;
    }
    int bodySize = buf.getInt(OFF_BODY_LENGTH);
    writeFrame(buf);
    flushPending = true;
    call.deferredDone(Status.Code.OK, bodySize);
  }

  /** Event loop: writes parked responses while the channel takes them. */
  private void drainParked() {
    Deferred d;
    while (channel.isWritable() && (d = parked.poll()) != null) {
      writeDeferred(d);
    }
  }

  /** Answers with an error status in place of a response that could not be encoded. */
  private void encodeFailed(int requestId, MethodDescriptor<?, ?> m, Throwable t) {
    if (t instanceof FrameSizes.TooLarge e) {
      server.limitLog().warn("response too large: " + m.fullName(), m.fullName() + ": " + e.status.description());
      writeError(requestId, e.status);
      return;
    }
    if (t instanceof OutOfMemoryError) {
      // No memory for this response: shed this connection (its calls fail), not every connection of the loop.
      server.limitLog().warn("out of memory", "closing connection from " + channel.remoteAddress() + ": no memory"
          + " to encode the response of " + m.fullName() + " (" + t + ")");
      closeFor("the server ran out of memory encoding a response of " + m.fullName());
      server.dispatcher().fatal("encoding the response of " + m.fullName() + " (thread "
          + Thread.currentThread().getName() + ")", t);
      return;
    }
    Status s = dispatcher().responseEncodeFailed(m, t);
    writeError(requestId, s);
  }

  /** Event loop, in a read batch: encodes the response into {@link #batch}. Same contract as writeResponse. */
  private int appendResponse(NettyServerCall call, Marshaller<Object> marshaller, Object response,
      MethodDescriptor<?, ?> m) {
    int bodySize;
    try {
      bodySize = FrameEncoder.appendMessage(this, TYPE_RESPONSE, call.requestId, 0, 0,
          call.headers(), marshaller, response, server.config().maxFrameSize(),
          server.config().maxMetadataSize(), "RpcServer.builder()");
    } catch (Throwable t) {
      encodeFailed(call.requestId, m, t);
      return -1;
    }
    if (!calls.isEmpty()) {
      calls.remove(call.requestId);
    }
    ByteBuf b = batch;
    if (b != null && b.readableBytes() >= BATCH_BYTES) {
      writeBatch();
    }
    return bodySize;
  }

  /** Event loop: the batch to append a response of {@code frameSize} bytes (-1: not known) to. */
  @Override
  public ByteBuf reserve(int frameSize) {
    int need = frameSize < 0 ? 256 : frameSize;
    ByteBuf out = batch;
    if (out != null && out.writableBytes() < need) {
      writeBatch();
      out = null;
    }
    if (out == null) {
      out = batch = channel.alloc().directBuffer(Math.max(batchHint, need));
    }
    return out;
  }

  /**
   * Tells the client to send no new calls on this connection. {@code refusesLater}: a graceful shutdown, whose
   * dispatcher already refuses new calls; the GOAWAY names the last request taken (read on the event loop, after
   * every request admitted before the shutdown), so the client sends the later ones elsewhere. Otherwise a drain
   * that answers every call still arriving.
   */
  void sendGoaway(boolean refusesLater) {
    if (refusesLater && !channel.eventLoop().inEventLoop()) {
      try {
        channel.eventLoop().execute(() -> sendGoaway(true));
      } catch (RejectedExecutionException e) {
        // the event loop is gone: the connection closes with it
      }
      return;
    }
    if (refusesLater ? !refusingGoawaySent : !goawaySent) {
      goawaySent = true;
      refusingGoawaySent |= refusesLater;
      send(FrameEncoder.encodeGoaway(channel.alloc(), lastTakenRequestId, refusesLater)); // in order with answers
    }
  }

  /**
   * Why this server closed the connection, said to the handlers of the calls the close cuts (see
   * {@link #channelInactive}); null while it did not (or the peer closed it first).
   */
  private volatile @Nullable String closedHow;
  private static final java.util.concurrent.atomic.AtomicReferenceFieldUpdater<ServerConnection, String> CLOSED_HOW =
      java.util.concurrent.atomic.AtomicReferenceFieldUpdater.newUpdater(ServerConnection.class, String.class,
          "closedHow");

  /** Records why this server closes the connection, unless a reason was recorded first (any thread). */
  private void closing(String why) {
    CLOSED_HOW.compareAndSet(this, null, why);
  }

  /** Closes the connection, saying {@code why} to the calls it cuts. */
  void closeFor(String why) {
    closing(why);
    channel.close();
  }

  /** Closes once everything queued so far has been written, saying {@code why} to the calls it cuts. */
  void closeAfterWrites(String why) {
    closing(why);
    try {
      channel.eventLoop().execute(() -> {
        writeQueue.run();
        channel.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
      });
    } catch (RejectedExecutionException e) {
      channel.close(); // the event loop is gone; its end closes the channel anyway
    }
  }

  @Override
  public void write(Object item) {
    if (item instanceof Deferred d) {
      if (!channel.isActive()) {
        dropDeferred(d); // closed meanwhile: nobody to answer
      } else if (channel.isWritable() && parked.isEmpty()) {
        writeDeferred(d);
      } else {
        parked.add(d);
      }
      return;
    }
    ByteBuf buf = (ByteBuf) item;
    unqueued(buf);
    writeFrame(buf);
  }

  /**
   * A frame leaves the write queue: a response encoded by a business thread stops counting in
   * {@link #queuedBytes}, and in the server's budget if it was large enough to be counted there.
   */
  private void unqueued(ByteBuf buf) {
    if (buf.getByte(OFF_TYPE) == TYPE_RESPONSE && buf.getByte(OFF_STATUS) == 0) {
      int size = buf.readableBytes();
      queuedBytes.add(-size);
      if (size >= FrameDecoder.RESERVE_THRESHOLD) {
        budget.release(size);
      }
    }
  }

  /** Event loop: writes one frame (not flushed); a response's call stops counting against the call limit. */
  private void writeFrame(ByteBuf buf) {
    activeSinceTick = true;
    if (buf.getByte(OFF_TYPE) == TYPE_RESPONSE && !calls.isEmpty()) {
      calls.remove(buf.getInt(OFF_REQUEST_ID));
    }
    if (channel.isActive()) {
      if (metrics != null) {
        metrics.bytesSent.increment(buf.readableBytes());
      }
      channel.write(buf, channel.voidPromise());
    } else {
      buf.release();
    }
  }

  @Override
  public void drop(Object item) {
    if (item instanceof Deferred d) {
      dropDeferred(d);
      return;
    }
    ByteBuf buf = (ByteBuf) item;
    unqueued(buf);
    buf.release();
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
    // Back-pressure: a peer that does not read its responses stops being read from.
    boolean writable = channel.isWritable();
    channel.config().setAutoRead(writable && !readsPausedForRequests);
    if (!writable) {
      if (unwritableAt == 0) {
        unwritableAt = System.nanoTime();
      }
    } else {
      unwritableAt = 0;
    }
    if (!writable) {
      log.debug("pausing reads from {}: write buffer above high water mark", channel.remoteAddress());
    } else if (!parked.isEmpty()) {
      drainParked();
      if (flushPending && !reading) {
        flushPending = false;
        ctx.flush();
      }
    }
    super.channelWritabilityChanged(ctx);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    if (io.petrel.rpc.spi.ServerDispatcher.isFatal(cause)) {
      server.dispatcher().fatal("event loop " + Thread.currentThread().getName() + " (connection from "
          + channel.remoteAddress() + ")", cause);
    }
    Throwable t = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
    if (t instanceof ProtocolException) {
      closing("its client broke the protocol: " + t.getMessage());
    } else if (!(t instanceof java.io.IOException)) {
      closing("the server hit an unexpected error: " + t); // ConnectionErrors logs it (WARN) and closes
    }
    ConnectionErrors.close(server.limitLog(), channel, cause, "from " + channel.remoteAddress());
  }

  private void protocolViolation(String kind, String what) {
    closing("its client broke the protocol: " + what);
    ConnectionErrors.protocolViolation(server.limitLog(), channel, kind, what, "from " + channel.remoteAddress());
  }

  /**
   * Event loop, every {@link NettyServerTransport#housekeepingPeriodNanos()}: enforces the server's timeouts on this
   * connection (ServerLimits). Per-call work only sets flags; the clock is read here.
   */
  private void tick() {
    if (!channel.isActive()) {
      return;
    }
    long now = System.nanoTime();
    io.petrel.rpc.spi.ServerLimits l = server.config().limits();
    if (readSinceTick) {
      readSinceTick = false;
      lastRead = now;
    } else if (readsPausedForRequests) {
      // This server stopped reading the connection itself, because its requests wait for the business pool: the
      // peer's silence, and a PING it cannot get answered, say nothing of the peer. (Reads paused because the
      // peer does not read its responses still count: that peer is the one at fault.)
      lastRead = now;
      pingOutstanding = false;
    }
    if (activeSinceTick) {
      activeSinceTick = false;
      lastActive = now;
    }
    if (!framesSeen && l.handshakeTimeoutNanos() > 0 && now - openedAt > l.handshakeTimeoutNanos()) {
      timeout("handshakeTimeout", "it sent no complete frame within " + ms(l.handshakeTimeoutNanos()));
      return;
    }
    long partial = decoder.partialSince();
    if (partial != 0 && l.frameReceiveTimeoutNanos() > 0 && now - partial > l.frameReceiveTimeoutNanos()) {
      timeout("frameReceiveTimeout", "one frame took longer than " + ms(l.frameReceiveTimeoutNanos())
          + " to arrive");
      return;
    }
    if (channel.isWritable()) {
      unwritableSince = 0;
    } else if (unwritableSince == 0) {
      unwritableSince = now;
    } else if (l.unwritableTimeoutNanos() > 0 && now - unwritableSince > l.unwritableTimeoutNanos()) {
      timeout("unwritableTimeout", "it has not read its responses for " + ms(now - unwritableSince) + " ("
          + parked.size() + " more responses waiting, the write buffer above its high water mark of "
          + channel.config().getWriteBufferHighWaterMark() + " bytes)");
      return;
    }
    if (l.keepAliveTimeNanos() > 0) {
      if (pingOutstanding) {
        if (now - pingSentAt > l.keepAliveTimeoutNanos()) {
          timeout("keepAlive", "nothing received for " + ms(now - lastRead) + ", a keepalive PING went unanswered");
          return;
        }
      } else if (now - lastRead > l.keepAliveTimeNanos()) {
        pingOutstanding = true;
        pingSentAt = now;
        channel.writeAndFlush(FrameEncoder.encodeControl(channel.alloc(), TYPE_PING, 0), channel.voidPromise());
      }
    }
    if (goawaySent) {
      if (drainStartedAt != 0 && ((drainPingAnswered && inFlight.get() == 0)
          || now - drainStartedAt > server.config().shutdownGracePeriodNanos())) {
        log.debug("closing connection from {}: {}", channel.remoteAddress(), drainReason);
        closeAfterWrites("it was drained (" + drainReason + ") and its calls had the shutdown grace period to end");
        drainStartedAt = 0;
      }
      return;
    }
    if (l.idleTimeoutNanos() > 0 && inFlight.get() == 0 && parked.isEmpty() && now - lastActive > l.idleTimeoutNanos()) {
      drain(now, "no call for " + ms(now - lastActive) + " (idleTimeout)");
      return;
    }
    if (maxAgeNanos > 0 && now - openedAt > maxAgeNanos) {
      drain(now, "older than maxConnectionAge");
    }
  }

  /**
   * Event loop: GOAWAY, then a PING; the connection closes once the client's PONG is in and no call is in flight
   * (a call the client sent before it read the GOAWAY arrives before that PONG, and is answered), or after the
   * shutdown grace period if the client never answers.
   */
  private void drain(long now, String why) {
    drainStartedAt = now;
    drainReason = why;
    sendGoaway(false);
    writeQueue.enqueue(FrameEncoder.encodeControl(channel.alloc(), TYPE_PING, DRAIN_PING_ID));
  }

  private void timeout(String option, String why) {
    server.limitLog().warn(option, "closing connection from " + channel.remoteAddress() + ": " + why + " (the"
        + " server's " + option + "; see RpcServer.builder()." + option + ")");
    closeFor(why + " (" + option + ")");
  }

  private static String ms(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(nanos) + " ms";
  }
}
