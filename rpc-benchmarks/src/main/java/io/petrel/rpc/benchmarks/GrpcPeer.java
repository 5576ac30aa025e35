package io.petrel.rpc.benchmarks;

import io.grpc.Attributes;
import io.grpc.BindableService;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServerTransportFilter;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
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
import io.grpc.netty.shaded.io.netty.handler.ssl.OpenSsl;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.petrel.rpc.transport.netty.IoMode;
import io.petrel.rpc.benchmarks.proto.BenchmarkGrpc;
import io.petrel.rpc.benchmarks.proto.BenchmarkMessage;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSession;
import org.jspecify.annotations.Nullable;

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
  /** The TLS version both TLS frameworks negotiate (Petrel offers 1.3 and 1.2, and gets 1.3 from itself). */
  static final String TLS_PROTOCOL = "TLSv1.3";

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
   * cached thread pool) runs them. The server does not own the groups. With {@code tls} (else null: plaintext)
   * it serves TLS, and tells {@code sessions} the protocol and cipher suite each new connection negotiated (once
   * per connection, off the call path).
   */
  static Server start(InetSocketAddress address, EventLoopGroup boss, EventLoopGroup workers, IoMode mode,
      boolean direct, LongAdder calls, @Nullable SslContext tls, Consumer<String> sessions) throws IOException {
    NettyServerBuilder b = NettyServerBuilder.forAddress(address)
        .bossEventLoopGroup(boss)
        .workerEventLoopGroup(workers)
        .channelType(epoll(mode) ? EpollServerSocketChannel.class : NioServerSocketChannel.class)
        .addService(new Service(calls))
        .addService(bytesService(calls));
    if (direct) {
      b.directExecutor();
    }
    if (tls != null) {
      b.sslContext(tls);
      b.addTransportFilter(new ServerTransportFilter() {
        @Override
        public Attributes transportReady(Attributes attributes) {
          sessions.accept("TLS connection from " + attributes.get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR) + ": "
              + describe(attributes.get(Grpc.TRANSPORT_ATTR_SSL_SESSION)));
          return attributes;
        }
      });
    }
    return b.build().start();
  }

  /** A channel on its own group ({@code group} is owned by the caller): TLS with {@code tls}, else plaintext. */
  static ManagedChannel channel(String host, int port, EventLoopGroup group, IoMode mode, boolean direct,
      @Nullable SslContext tls) {
    NettyChannelBuilder b = NettyChannelBuilder.forAddress(host, port)
        .eventLoopGroup(group)
        .channelType(epoll(mode) ? EpollSocketChannel.class : NioSocketChannel.class);
    if (tls != null) {
      b.sslContext(tls); // hostname verification stays on: the certificate must name host
    } else {
      b.usePlaintext();
    }
    if (direct) {
      b.directExecutor();
    }
    return b.build();
  }

  /**
   * gRPC's server TLS context: the certificate and key (PEM files), TLS 1.3 only, gRPC's own choice of provider
   * and cipher suites ({@link GrpcSslContexts}: OpenSSL, the BoringSSL grpc-netty-shaded bundles, when it loads).
   */
  static SslContext serverTls(Path certificate, Path key) throws SSLException {
    return GrpcSslContexts.forServer(certificate.toFile(), key.toFile()).protocols(TLS_PROTOCOL).build();
  }

  /** gRPC's client TLS context: trusts only {@code ca}; TLS 1.3 only. */
  static SslContext clientTls(X509Certificate ca) throws SSLException {
    return GrpcSslContexts.forClient().trustManager(ca).protocols(TLS_PROTOCOL).build();
  }

  /** "OpenSSL (BoringSSL)" or "JDK": the provider behind a gRPC TLS context. */
  static String provider(SslContext context) {
    return context.getClass().getSimpleName().contains("OpenSsl") ? "OpenSSL (" + OpenSsl.versionString() + ")"
        : "JDK (" + context.getClass().getSimpleName() + ")";
  }

  /** "TLSv1.3 TLS_AES_128_GCM_SHA256". */
  static String describe(SSLSession session) {
    return session == null ? "no TLS session" : session.getProtocol() + " " + session.getCipherSuite();
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
