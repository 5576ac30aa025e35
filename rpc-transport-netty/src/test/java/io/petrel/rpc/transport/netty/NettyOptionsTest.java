package io.petrel.rpc.transport.netty;

import static io.petrel.rpc.testing.CallFailures.assertFails;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.StringValue;
import io.netty.channel.Channel;
import io.netty.channel.DefaultEventLoopGroup;
import io.netty.channel.EventLoop;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.local.LocalIoHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.Status;
import io.petrel.rpc.TransportOption;
import io.petrel.rpc.internal.ServerImpl;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The Netty transport's own options reach real sockets and event loops, and bad values fail at the builder. */
class NettyOptionsTest extends TransportFixture {

  private static Channel channelOf(RpcClient client) {
    ClientConnection c = transportOf(client).connection();
    assertThat(c).as("connected").isNotNull();
    return c.channel();
  }

  @Test
  void ioModeWorkerThreadsAndWaterMarksReachTheSockets() throws Exception {
    RpcServer server = startServer(b -> b.option(NettyOptions.IO_MODE, IoMode.NIO)
        .option(NettyOptions.WORKER_THREADS, 3));
    assertThat(((ServerImpl) server).transport().describe()).startsWith("io nio, 3 worker threads");
    RpcClient client = client(server.port(), b -> b.option(NettyOptions.IO_MODE, IoMode.NIO)
        .option(NettyOptions.WRITE_BUFFER_WATER_MARK, new NettyOptions.WaterMark(1024, 4096)));
    assertThat(client.unaryCall(TestService.ECHO, StringValue.of("x")).getValue()).isEqualTo("x");
    Channel ch = channelOf(client);
    assertThat(ch).isInstanceOf(NioSocketChannel.class);
    assertThat(ch.config().getWriteBufferLowWaterMark()).isEqualTo(1024);
    assertThat(ch.config().getWriteBufferHighWaterMark()).isEqualTo(4096);
  }

  @Test
  void aClientUsesTheCallersEventLoopsAndNeverShutsThemDown() throws Exception {
    RpcServer server = startServer();
    MultiThreadIoEventLoopGroup mine = new MultiThreadIoEventLoopGroup(1,
        new DefaultThreadFactory("callers-loops", true), NioIoHandler.newFactory());
    try {
      RpcClient client = RpcClient.builder().address("127.0.0.1", server.port())
          .option(NettyOptions.EVENT_LOOP_GROUP, mine).build();
      assertThat(client.unaryCall(TestService.ECHO, StringValue.of("y")).getValue()).isEqualTo("y");
      Channel ch = channelOf(client);
      assertThat(ch).as("the group's I/O type decides").isInstanceOf(NioSocketChannel.class);
      EventLoop loop = ch.eventLoop();
      assertThat(loop.parent()).isSameAs(mine);
      client.close();
      assertThat(client.isTerminated()).isTrue();
      assertThat(mine.isShuttingDown()).as("the caller's loops are left running").isFalse();
      assertThat(mine.submit(() -> "still serving").get(10, TimeUnit.SECONDS)).isEqualTo("still serving");
    } finally {
      mine.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
  }

  @Test
  void callsAfterTheCallerShutsItsEventLoopsDownSayWhyAndEndAtOnce() throws Exception {
    RpcServer server = startServer();
    MultiThreadIoEventLoopGroup mine = new MultiThreadIoEventLoopGroup(1,
        new DefaultThreadFactory("callers-loops", true), NioIoHandler.newFactory());
    RpcClient client = RpcClient.builder().address("127.0.0.1", server.port())
        .option(NettyOptions.EVENT_LOOP_GROUP, mine).build();
    try {
      assertThat(client.unaryCall(TestService.ECHO, StringValue.of("y")).getValue()).isEqualTo("y");
      mine.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
      // The client is not shut down: the message must not say it is, but name what was.
      for (int i = 0; i < 3; i++) { // the first call after the connection went, and the ones after it
        assertFails(() -> client.unaryCall(TestService.ECHO, StringValue.of("z"),
            CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(20))), Status.Code.UNAVAILABLE,
            "the event loops of client", "NettyOptions.EVENT_LOOP_GROUP was shut down while the client was in use",
            "shut the client down first");
      }
      assertThat(client.isShutdown()).isFalse();
    } finally {
      client.shutdownNow();
    }
    assertFails(() -> client.unaryCall(TestService.ECHO, StringValue.of("z")), Status.Code.UNAVAILABLE,
        "is shut down");
  }

  @Test
  void badValuesFailAtTheBuilderNamingTheOption() {
    assertThatThrownBy(() -> RpcServer.builder().option(NettyOptions.WORKER_THREADS, -1))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("netty.workerThreads must be >= 0: -1");
    assertThatThrownBy(() -> new NettyOptions.WaterMark(64, 32)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("netty.writeBufferWaterMark needs 0 < low <= high: low 64, high 32");
    DefaultEventLoopGroup notIo = new DefaultEventLoopGroup(1);
    try {
      @SuppressWarnings({"unchecked", "rawtypes"})
      TransportOption<Object> raw = (TransportOption) NettyOptions.EVENT_LOOP_GROUP;
      assertThatThrownBy(() -> RpcClient.builder().option(raw, notIo)).isInstanceOf(IllegalArgumentException.class)
          .hasMessage("netty.eventLoopGroup takes a IoEventLoopGroup, not a DefaultEventLoopGroup");
    } finally {
      notIo.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
    MultiThreadIoEventLoopGroup local = new MultiThreadIoEventLoopGroup(1, LocalIoHandler.newFactory());
    try {
      assertThatThrownBy(() -> RpcClient.builder().address("127.0.0.1", 1)
          .option(NettyOptions.EVENT_LOOP_GROUP, local).build()).isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("netty.eventLoopGroup: a group of NioIoHandler, EpollIoHandler or"
              + " IoUringIoHandler event loops is needed");
    } finally {
      local.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
  }

  private static NettyRpcClient transportOf(io.petrel.rpc.RpcClient client) {
    return (NettyRpcClient) io.petrel.rpc.internal.ClientChannel.transportOf(client);
  }
}
