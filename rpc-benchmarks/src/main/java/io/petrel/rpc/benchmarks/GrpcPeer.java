package io.petrel.rpc.benchmarks;

import io.grpc.BindableService;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.petrel.rpc.IoMode;
import io.petrel.rpc.benchmarks.proto.BenchmarkGrpc;
import io.petrel.rpc.benchmarks.proto.BenchmarkMessage;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * The gRPC-java peer: the same service on grpc-netty (the shaded artifact, with the Netty gRPC ships and tests
 * with), with the same payloads, event loop count and I/O flavour as Petrel.
 */
final class GrpcPeer {
  /** Opaque bodies: a byte[] marshaller, so gRPC does no protobuf work for them (neither does Petrel). */
  static final MethodDescriptor<byte[], byte[]> ECHO_BYTES = MethodDescriptor.<byte[], byte[]>newBuilder()
      .setType(MethodDescriptor.MethodType.UNARY)
      .setFullMethodName(MethodDescriptor.generateFullMethodName("bench.Raw", "EchoBytes"))
      .setRequestMarshaller(BytesMarshaller.INSTANCE)
      .setResponseMarshaller(BytesMarshaller.INSTANCE)
      .build();

  private static final boolean EPOLL = Epoll.isAvailable();

  private GrpcPeer() {}

  static boolean epoll(IoMode mode) {
    return mode != IoMode.NIO && EPOLL;
  }

  /** An event loop group of gRPC's (shaded) Netty. */
  static EventLoopGroup group(int threads, IoMode mode, String name) {
    var factory = new io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory(name, true);
    return epoll(mode) ? new EpollEventLoopGroup(threads, factory) : new NioEventLoopGroup(threads, factory);
  }

  /**
   * Starts a gRPC server. {@code direct} runs handlers on the event loop; otherwise gRPC's default executor (a
   * cached thread pool) runs them. The server does not own the groups.
   */
  static Server start(InetSocketAddress address, EventLoopGroup boss, EventLoopGroup workers, IoMode mode,
      boolean direct, LongAdder calls) throws IOException {
    NettyServerBuilder b = NettyServerBuilder.forAddress(address)
        .bossEventLoopGroup(boss)
        .workerEventLoopGroup(workers)
        .channelType(epoll(mode) ? EpollServerSocketChannel.class : NioServerSocketChannel.class)
        .addService(new Service(calls))
        .addService(bytesService(calls));
    if (direct) {
      b.directExecutor();
    }
    return b.build().start();
  }

  /** A plaintext channel on its own group ({@code group} is owned by the caller). */
  static ManagedChannel channel(String host, int port, EventLoopGroup group, IoMode mode, boolean direct) {
    NettyChannelBuilder b = NettyChannelBuilder.forAddress(host, port)
        .usePlaintext()
        .eventLoopGroup(group)
        .channelType(epoll(mode) ? EpollSocketChannel.class : NioSocketChannel.class);
    if (direct) {
      b.directExecutor();
    }
    return b.build();
  }

  static void shutdown(ManagedChannel channel) {
    channel.shutdown();
    try {
      if (!channel.awaitTermination(5, TimeUnit.SECONDS)) {
        channel.shutdownNow();
      }
    } catch (InterruptedException e) {
      channel.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }

  private static ServerServiceDefinition bytesService(LongAdder calls) {
    return ServerServiceDefinition.builder("bench.Raw")
        .addMethod(ECHO_BYTES, ServerCalls.asyncUnaryCall((byte[] request, StreamObserver<byte[]> response) -> {
          calls.increment();
          response.onNext(request);
          response.onCompleted();
        }))
        .build();
  }

  /** The generated service, answering as the rpcx server does. */
  private static final class Service extends BenchmarkGrpc.BenchmarkImplBase implements BindableService {
    private final LongAdder calls;

    Service(LongAdder calls) {
      this.calls = calls;
    }

    @Override
    public void echo(BenchmarkMessage request, StreamObserver<BenchmarkMessage> response) {
      calls.increment();
      response.onNext(Messages.reply(request));
      response.onCompleted();
    }
  }

  private enum BytesMarshaller implements MethodDescriptor.Marshaller<byte[]> {
    INSTANCE;

    @Override
    public InputStream stream(byte[] value) {
      return new ByteArrayInputStream(value);
    }

    @Override
    public byte[] parse(InputStream stream) {
      try {
        return stream.readAllBytes();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
