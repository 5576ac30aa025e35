package io.petrel.rpc.benchmarks;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.petrel.rpc.transport.netty.IoMode;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.LongAdder;

/**
 * The "limit": a length-prefixed echo on plain Netty. Each frame (4-byte big-endian length, then the body) is
 * written back as it came, header included, with one flush per read burst. No parsing, no dispatch, and no copy
 * of a frame up to 64 KiB (larger ones are copied out once: see {@link EchoFrames}).
 */
final class RawNettyServer implements AutoCloseable {
  /** Largest body the echo accepts (the frame decoder rejects a longer frame before allocating for it). */
  static final int MAX_BODY = 16 * 1024 * 1024;

  private final Channel channel;

  private RawNettyServer(Channel channel) {
    this.channel = channel;
  }

  /** Binds on {@code address} with the given groups; the server does not take ownership of the groups. */
  static RawNettyServer start(InetSocketAddress address, EventLoopGroup boss, EventLoopGroup workers, IoMode mode,
      LongAdder calls) throws InterruptedException {
    ServerBootstrap b = new ServerBootstrap()
        .group(boss, workers)
        .channel(NettyIo.serverChannel(mode))
        .childOption(ChannelOption.TCP_NODELAY, true)
        .childHandler(new ChannelInitializer<SocketChannel>() {
          @Override
          protected void initChannel(SocketChannel ch) {
            ch.pipeline().addLast(new EchoFrames(), new Echo(calls));
          }
        });
    return new RawNettyServer(b.bind(address).sync().channel());
  }

  int port() {
    return ((InetSocketAddress) channel.localAddress()).getPort();
  }

  @Override
  public void close() {
    channel.close().syncUninterruptibly();
  }

  /**
   * Splits the stream into frames: a frame up to {@link #SLICE_MAX} bytes is a slice of the bytes read (no copy);
   * a larger one is copied out. Why: the echo writes each frame back as it came, so a slice stays referenced
   * until the socket has taken it, and while any slice of it is referenced Netty's decoder cannot append the next
   * read to its buffer in place: it copies everything it holds into a new one, at every read. With 16 callers
   * of 1 MiB bodies the echo's server spent 17.7 ms of CPU per call on those copies and made 61 calls/s, against
   * Petrel direct's 954 (2026-11-26). One copy of a large frame costs far less than the socket's own copies of it.
   */
  private static final class EchoFrames extends LengthFieldBasedFrameDecoder {
    /** Frames up to this size (the 64 KiB bodies of the payload table and smaller) are slices. */
    static final int SLICE_MAX = 64 * 1024 + 4;

    EchoFrames() {
      super(MAX_BODY + 4, 0, 4, 0, 0);
    }

    @Override
    protected ByteBuf extractFrame(ChannelHandlerContext ctx, ByteBuf buffer, int index, int length) {
      if (length <= SLICE_MAX) {
        return super.extractFrame(ctx, buffer, index, length);
      }
      ByteBuf copy = ctx.alloc().ioBuffer(length);
      copy.writeBytes(buffer, index, length);
      return copy;
    }
  }

  /** Writes each frame back unchanged (passing on ownership of the buffer); flushes once per read burst. */
  private static final class Echo extends ChannelInboundHandlerAdapter {
    private final LongAdder calls;

    Echo(LongAdder calls) {
      this.calls = calls;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      calls.increment();
      ctx.write((ByteBuf) msg, ctx.voidPromise());
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
      ctx.flush();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }
}
