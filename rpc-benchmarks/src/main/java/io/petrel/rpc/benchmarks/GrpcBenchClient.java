package io.petrel.rpc.benchmarks;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.petrel.rpc.transport.netty.IoMode;
import io.petrel.rpc.benchmarks.proto.BenchmarkGrpc;
import io.petrel.rpc.benchmarks.proto.BenchmarkMessage;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * gRPC-java through its generated stubs (BenchmarkMessage) or {@link ClientCalls} (opaque bodies), over
 * {@code connections} channels used round robin, on one event loop group of min(processors, connections)
 * threads (as Petrel's client sizes its own); plaintext, or TLS with the given context.
 */
final class GrpcBenchClient implements BenchClient {
  private final Payload payload;
  private final BenchmarkMessage message = Messages.request();
  private final byte[] body;
  private final io.grpc.netty.shaded.io.netty.channel.EventLoopGroup group;
  private final ManagedChannel[] channels;
  private final BenchmarkGrpc.BenchmarkBlockingStub[] blocking;
  private final BenchmarkGrpc.BenchmarkStub[] async;
  private final AtomicInteger next = new AtomicInteger();

  /** {@code tls}: gRPC's client TLS context ({@link GrpcPeer#clientTls}), or null for plaintext. */
  GrpcBenchClient(String host, int port, Payload payload, int connections, IoMode io, boolean direct,
      io.grpc.netty.shaded.io.netty.handler.ssl.@Nullable SslContext tls) {
    this.payload = payload;
    this.body = payload.body();
    this.group = GrpcPeer.group(Math.min(Runtime.getRuntime().availableProcessors(), connections), io,
        "bench-grpc-client");
    this.channels = new ManagedChannel[connections];
    this.blocking = new BenchmarkGrpc.BenchmarkBlockingStub[connections];
    this.async = new BenchmarkGrpc.BenchmarkStub[connections];
    for (int i = 0; i < connections; i++) {
      channels[i] = GrpcPeer.channel(host, port, group, io, direct, tls);
      blocking[i] = BenchmarkGrpc.newBlockingStub(channels[i]);
      async[i] = BenchmarkGrpc.newStub(channels[i]);
    }
    // Connect every channel now (as Petrel's start() does) rather than on the first measured call.
    for (int i = 0; i < connections; i++) {
      channels[i].getState(true);
    }
  }

  private int index() {
    return channels.length == 1 ? 0 : Math.floorMod(next.getAndIncrement(), channels.length);
  }

  @Override
  public Object call() {
    int i = index();
    if (payload == Payload.MESSAGE) {
      return blocking[i].echo(message);
    }
    return ClientCalls.blockingUnaryCall(channels[i], GrpcPeer.ECHO_BYTES, CallOptions.DEFAULT, body);
  }

  @Override
  public CompletableFuture<?> callAsync() {
    int i = index();
    if (payload == Payload.MESSAGE) {
      Reply<BenchmarkMessage> r = new Reply<>();
      async[i].echo(message, r);
      return r;
    }
    Reply<byte[]> r = new Reply<>();
    ClientCalls.asyncUnaryCall(channels[i].newCall(GrpcPeer.ECHO_BYTES, CallOptions.DEFAULT), body, r);
    return r;
  }

  @Override
  public void verify(Object reply) {
    BenchClient.verifyReply(payload, body.length, reply);
  }

  @Override
  public void close() {
    for (ManagedChannel c : channels) {
      GrpcPeer.shutdown(c);
    }
    group.shutdownGracefully(0, 5, TimeUnit.SECONDS).syncUninterruptibly();
  }

  /** A unary response observer that is its own future. */
  private static final class Reply<T> extends CompletableFuture<T> implements StreamObserver<T> {
    private @Nullable T value;

    @Override
    public void onNext(T v) {
      value = v;
    }

    @Override
    public void onError(Throwable t) {
      completeExceptionally(t);
    }

    @Override
    public void onCompleted() {
      complete(value);
    }
  }
}
