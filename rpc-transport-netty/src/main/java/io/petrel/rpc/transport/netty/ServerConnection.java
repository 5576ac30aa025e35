package io.petrel.rpc.transport.netty;

import static io.petrel.rpc.transport.netty.Protocol.*;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import io.petrel.rpc.Marshaller;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.ServerMethodDefinition;
import io.petrel.rpc.Status;
import java.net.SocketAddress;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server side of one connection: one instance per channel. Consumes every {@link Frame} it reads
 * (releases it, or hands it to a {@link ServerCall} that does). Dispatch happens on the event loop; handlers
 * run on the business executor; responses come back through the {@link WriteQueue}.
 */
final class ServerConnection extends ChannelInboundHandlerAdapter
    implements WriteQueue.Sink, FrameEncoder.Output {
  private static final Logger log = LoggerFactory.getLogger(ServerConnection.class);

  private final NettyRpcServer server;
  private final Channel channel;
  private final WriteQueue writeQueue;
  /** Calls admitted and not yet ended (response queued); for draining and metrics. */
  private final AtomicInteger inFlight = new AtomicInteger();
  /** Oneway calls admitted and not yet ended; with {@link #calls}, what maxConcurrentCallsPerConnection counts. */
  private final AtomicInteger onewaysRunning = new AtomicInteger();
  /** Unary calls awaiting their response, for CANCEL; event loop only. */
  private final CallTable<ServerCall> calls = new CallTable<>();
  private final TransportMetrics metrics;
  private volatile boolean goawaySent;
  /** Event loop only: inside a read batch, where writes are flushed once, at channelReadComplete. */
  private boolean reading;
  private boolean flushPending;
  /**
   * Event loop only: the responses encoded on the event loop during this read batch (direct mode), one after
   * the other in one buffer that is written at the end of the batch: one allocation, one pipeline pass and
   * one iovec for all of them instead of one each.
   */
  private ByteBuf batch;
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

  ServerConnection(NettyRpcServer server, Channel channel) {
    this.server = server;
    this.channel = channel;
    this.writeQueue = new WriteQueue(channel, this);
    this.metrics = server.metrics();
  }

  NettyRpcServer server() {
    return server;
  }

  SocketAddress remoteAddress() {
    return channel.remoteAddress();
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
    log.debug("connection from {} opened", channel.remoteAddress());
    super.channelActive(ctx);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    releaseBatch();
    server.connectionClosed(this);
    if (!calls.isEmpty()) {
      for (ServerCall c : calls.values()) {
        c.context.cancel(); // nobody is waiting any more
      }
      calls.clear();
    }
    log.debug("connection from {} closed with {} calls in flight", channel.remoteAddress(), inFlight.get());
    super.channelInactive(ctx);
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    reading = true;
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
      write(frame);
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
        ServerCall c = calls.get(frame.requestId);
        if (c != null) {
          c.context.cancel();
        }
        return;
      }
      case TYPE_PONG:
      case TYPE_GOAWAY:
        frame.release();
        return;
      default:
        frame.release();
        protocolViolation("a client sent a " + typeName(frame.type) + " frame, which only servers send");
    }
  }

  private void dispatch(Frame frame) {
    boolean oneway = frame.type == TYPE_ONEWAY;
    ServerMethodDefinition<?, ?> def = server.lookup(frame.methodId);
    if (def == null) {
      frame.release();
      reject(oneway, frame.requestId, Status.UNIMPLEMENTED.withDescription("no method with id 0x"
          + Integer.toHexString(frame.methodId) + " on server '" + server.name() + "' (it serves "
          + server.serviceNames() + ")"));
      return;
    }
    if (server.isShutdown()) {
      frame.release();
      reject(oneway, frame.requestId, Status.UNAVAILABLE.withDescription("server '" + server.name()
          + "' is shutting down and takes no new calls; retry on another server"));
      return;
    }
    // The limit counts unary calls until their response is written (on this event loop, so a client that
    // sends its next call on receiving a response always finds the slot free) and oneways until they end.
    int limit = server.config().maxConcurrentCallsPerConnection();
    if (calls.size() + onewaysRunning.get() >= limit) {
      frame.release();
      reject(oneway, frame.requestId, Status.RESOURCE_EXHAUSTED.withDescription("this connection already has "
          + limit + " calls in flight, the server's maxConcurrentCallsPerConnection (raise it with"
          + " RpcServer.builder().maxConcurrentCallsPerConnection, or spread calls over more connections)"));
      return;
    }
    if ((def.method().type() == io.petrel.rpc.MethodType.ONEWAY) != oneway) {
      frame.release();
      reject(oneway, frame.requestId, Status.INVALID_ARGUMENT.withDescription(def.method().fullName() + " is a "
          + def.method().type() + " method but was called as " + (oneway ? "ONEWAY" : "UNARY")));
      return;
    }
    long start = System.nanoTime();
    ServerCall call = new ServerCall(this, def, server.callMetrics(frame.methodId), frame, start);
    inFlight.incrementAndGet();
    if (oneway) {
      onewaysRunning.incrementAndGet();
    } else {
      calls.put(frame.requestId, call);
    }
    Executor executor = server.executor();
    if (executor == null) {
      call.run();
      return;
    }
    try {
      executor.execute(call);
    } catch (RejectedExecutionException e) {
      if (oneway) {
        onewaysRunning.decrementAndGet();
      } else {
        calls.remove(frame.requestId);
      }
      call.discard();
      callDone();
      server.recordRejected(def.method());
      server.callMetrics(frame.methodId).record(Status.Code.RESOURCE_EXHAUSTED, System.nanoTime() - start,
          call.context.requestSize(), -1);
      reject(oneway, frame.requestId, Status.RESOURCE_EXHAUSTED.withDescription(server.rejectionMessage(e)));
    }
  }

  private void reject(boolean oneway, int requestId, Status status) {
    if (oneway) {
      log.debug("dropping oneway call from {}: {}", channel.remoteAddress(), status);
    } else {
      writeError(requestId, status);
    }
  }

  private void onOversize(OversizeFrame big) {
    String side = "the server's";
    Status status = Status.RESOURCE_EXHAUSTED.withDescription(("frame".equals(big.what()) ? "request" : "metadata")
        + " of " + big.frameSize() + " bytes exceeds " + side + " max" + ("frame".equals(big.what())
        ? "FrameSize " : "MetadataSize ") + big.limit() + " (raise RpcServer.builder().max"
        + ("frame".equals(big.what()) ? "FrameSize" : "MetadataSize") + ")");
    log.warn("{} from {}: refused without reading it", status.description(), channel.remoteAddress());
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
    server.callDone();
  }

  void writeError(int requestId, Status status) {
    writeError(requestId, status, Metadata.EMPTY);
  }

  void writeError(int requestId, Status status, Metadata metadata) {
    send(FrameEncoder.encodeError(channel.alloc(), requestId, status, metadata, server.config().maxFrameSize()));
  }

  /** Queues the response; returns its body size, or -1 if it could not be encoded (an error was sent). */
  int writeResponse(ServerCall call, Marshaller<Object> marshaller, Object response, MethodDescriptor<?, ?> m) {
    if (reading && channel.eventLoop().inEventLoop()) {
      return appendResponse(call, marshaller, response, m);
    }
    ByteBuf buf;
    Metadata md = call.context.responseMetadata();
    try {
      buf = FrameEncoder.encodeMessage(channel.alloc(), TYPE_RESPONSE, call.requestId, 0, 0, md,
          marshaller, response, server.config().maxFrameSize(), server.config().maxMetadataSize(),
          "RpcServer.builder()");
    } catch (Throwable t) {
      encodeFailed(call.requestId, m, t);
      return -1;
    }
    int bodySize = buf.getInt(OFF_BODY_LENGTH);
    send(buf);
    return bodySize;
  }

  /** Answers with an error status in place of a response that could not be encoded. */
  private void encodeFailed(int requestId, MethodDescriptor<?, ?> m, Throwable t) {
    if (t instanceof FrameEncoder.FrameTooLargeException e) {
      log.warn("{}: {}", m.fullName(), e.status.description());
      writeError(requestId, e.status);
      return;
    }
    Status s = Status.INTERNAL.withDescription("server could not encode the response of " + m.fullName() + ": "
        + Status.describe(t));
    log.warn("{}", s.description(), t);
    writeError(requestId, s);
  }

  /** Event loop, in a read batch: encodes the response into {@link #batch}. Same contract as writeResponse. */
  private int appendResponse(ServerCall call, Marshaller<Object> marshaller, Object response,
      MethodDescriptor<?, ?> m) {
    int bodySize;
    try {
      bodySize = FrameEncoder.appendMessage(this, TYPE_RESPONSE, call.requestId, 0, 0,
          call.context.responseMetadata(), marshaller, response, server.config().maxFrameSize(),
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

  /** Tells the client to send no new calls on this connection (graceful shutdown). */
  void sendGoaway() {
    if (!goawaySent) {
      goawaySent = true;
      writeQueue.enqueue(FrameEncoder.encodeControl(channel.alloc(), TYPE_GOAWAY, 0));
    }
  }

  /** Closes once everything queued so far has been written. */
  void closeAfterWrites() {
    channel.eventLoop().execute(() -> {
      writeQueue.run();
      channel.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
    });
  }

  @Override
  public void write(Object item) {
    ByteBuf buf = (ByteBuf) item;
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
    ReferenceCountUtil.release(item);
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
    // Back-pressure: a peer that does not read its responses stops being read from.
    boolean writable = channel.isWritable();
    channel.config().setAutoRead(writable);
    if (!writable) {
      log.debug("pausing reads from {}: write buffer above high water mark", channel.remoteAddress());
    }
    super.channelWritabilityChanged(ctx);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    ConnectionErrors.close(log, channel, cause, "from " + channel.remoteAddress());
  }

  private void protocolViolation(String what) {
    ConnectionErrors.protocolViolation(log, channel, what, "from " + channel.remoteAddress());
  }
}
