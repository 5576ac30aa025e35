package io.petrel.rpc.benchmarks;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.petrel.rpc.transport.netty.IoMode;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The client of the raw Netty echo. The echo answers in order, so each connection matches replies to calls
 * first in, first out: no request ids, no headers beyond the length. Callers hand requests to a queue that one
 * event-loop task drains with a single flush (the same write batching Petrel and gRPC-java do). A reply
 * completes its future with the reply's length; nothing is parsed. This is the least work a framed
 * request/response over Netty can do, hence the "limit" the frameworks are compared with.
 */
final class RawNettyClient implements BenchClient {
  private final Payload payload;
  private final byte[] body;
  private final EventLoopGroup group;
  private final Connection[] connections;
  private final AtomicInteger next = new AtomicInteger();

  RawNettyClient(String host, int port, Payload payload, int connections, IoMode io)
      throws IOException, InterruptedException {
    this.payload = payload;
    this.body = payload.body();
    this.group = new MultiThreadIoEventLoopGroup(Math.min(Runtime.getRuntime().availableProcessors(), connections),
        new DefaultThreadFactory("bench-netty-client", true), NettyIo.handlerFactory(io));
    this.connections = new Connection[connections];
    try {
      Bootstrap b = new Bootstrap()
          .group(group)
          .channel(NettyIo.channel(io))
          .option(ChannelOption.TCP_NODELAY, true)
          .handler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
              ch.pipeline().addLast(new LengthFieldBasedFrameDecoder(RawNettyServer.MAX_BODY + 4, 0, 4, 0, 4),
                  new Connection(ch, body));
            }
          });
      for (int i = 0; i < connections; i++) {
        Channel ch = b.connect(host, port).sync().channel();
        this.connections[i] = ch.pipeline().get(Connection.class);
      }
    } catch (Exception e) {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
      throw e;
    }
  }

  @Override
  public Object call() throws Exception {
    try {
      return callAsync().get();
    } catch (ExecutionException e) {
      throw e.getCause() instanceof Exception ex ? ex : e;
    }
  }

  @Override
  public CompletableFuture<Integer> callAsync() {
    Connection c = connections.length == 1 ? connections[0]
        : connections[Math.floorMod(next.getAndIncrement(), connections.length)];
    CompletableFuture<Integer> f = new CompletableFuture<>();
    c.send(f);
    return f;
  }

  @Override
  public void verify(Object reply) {
    BenchClient.verifyLength(body.length, reply);
  }

  @Override
  public void close() {
    for (Connection c : connections) {
      if (c != null) {
        c.channel.close().syncUninterruptibly();
      }
    }
    group.shutdownGracefully(0, 5, TimeUnit.SECONDS).syncUninterruptibly();
  }

  /** One connection: the caller-side write queue and the in-order list of calls awaiting a reply. */
  private static final class Connection extends ChannelInboundHandlerAdapter {
    private final Channel channel;
    private final byte[] body;
    private final Queue<CompletableFuture<Integer>> toWrite = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean drainScheduled = new AtomicBoolean();
    private final Runnable drain = this::drain;
    /** Event loop only. */
    private final ArrayDeque<CompletableFuture<Integer>> awaiting = new ArrayDeque<>();
    private boolean closed;

    Connection(Channel channel, byte[] body) {
      this.channel = channel;
      this.body = body;
    }

    void send(CompletableFuture<Integer> f) {
      toWrite.add(f);
      if (drainScheduled.compareAndSet(false, true)) {
        channel.eventLoop().execute(drain);
      }
    }

    private void drain() {
      drainScheduled.set(false);
      CompletableFuture<Integer> f;
      boolean wrote = false;
      while ((f = toWrite.poll()) != null) {
        if (closed) {
          f.completeExceptionally(new ClosedChannelException());
          continue;
        }
        ByteBuf frame = channel.alloc().buffer(4 + body.length);
        frame.writeInt(body.length).writeBytes(body);
        awaiting.add(f);
        channel.write(frame, channel.voidPromise());
        wrote = true;
      }
      if (wrote) {
        channel.flush();
      }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      ByteBuf frame = (ByteBuf) msg;
      int length;
      try {
        length = frame.readableBytes();
      } finally {
        frame.release();
      }
      CompletableFuture<Integer> f = awaiting.poll();
      if (f != null) {
        f.complete(length);
      }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      closed = true;
      ClosedChannelException e = new ClosedChannelException();
      CompletableFuture<Integer> f;
      while ((f = awaiting.poll()) != null) {
        f.completeExceptionally(e);
      }
      drain();
      ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }
}
