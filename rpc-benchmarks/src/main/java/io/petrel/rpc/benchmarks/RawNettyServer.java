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
 * written back as it came, header included, with one flush per read burst. No parsing, no dispatch, no copy.
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
            ch.pipeline().addLast(new LengthFieldBasedFrameDecoder(MAX_BODY + 4, 0, 4, 0, 0), new Echo(calls));
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
