package io.petrel.rpc.spi;

import io.petrel.rpc.CallOptions;
import io.petrel.rpc.Deadline;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.RpcClient;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * A transport for the core's own tests, selected with {@code transport("recording")}: its client sends nothing;
 * it keeps every started call for the test, which then plays the server's side through {@link ClientCall}'s
 * events and checks what the core did. Servers are not supported.
 */
public final class RecordingTransport implements TransportProvider {
  @Override
  public String name() {
    return "recording";
  }

  @Override
  public int priority() {
    return -100;
  }

  @Override
  public ServerTransport newServerTransport(ServerConfig config) {
    throw new UnsupportedOperationException("the recording transport has no server");
  }

  @Override
  public ClientTransport newClientTransport(ClientConfig config, io.petrel.rpc.internal.ClientRuntime runtime) {
    return new Client(config, runtime);
  }

  /** A call as the recording client made it, with what the transport heard of its end, in order. */
  public static final class Call<Resp> extends ClientCall<Resp> {
    public final List<String> events = new CopyOnWriteArrayList<>();
    public @Nullable Object request;
    public @Nullable Sub subchannel;

    Call(Client client, MethodDescriptor<?, Resp> method, @Nullable Deadline deadline,
        @Nullable Consumer<Metadata> responseMetadata, @Nullable Executor executor) {
      super(client.runtime0(), method, deadline, responseMetadata, executor);
    }

    @Override
    protected void onEnded() {
      events.add("ended");
    }

    @Override
    protected void onCancelledByCaller() {
      events.add("cancelledByCaller");
    }

    @Override
    protected void onDeadlineExceeded() {
      events.add("deadline:" + (isDone() ? "after completion" : "before completion"));
    }

    @Override
    protected void onNextAttempt() {
      events.add("nextAttempt");
    }
  }

  /** An endpoint's "connections": it records whether it was closed. */
  public static final class Sub extends ClientSubchannel {
    public volatile boolean available = true;
    public final java.util.concurrent.CompletableFuture<Void> closed = new java.util.concurrent.CompletableFuture<>();

    Sub(io.petrel.rpc.Endpoint endpoint) {
      super(endpoint);
    }

    @Override
    public boolean isAvailable() {
      return available;
    }

    /** Plays the transport reporting its connections' state. */
    public void report(ConnectivityState state, io.petrel.rpc.@Nullable Status cause) {
      stateChanged(state, cause);
    }

    @Override
    protected java.util.concurrent.CompletionStage<Void> close() {
      closed.complete(null);
      return closed;
    }
  }

  /** The recording transport of a client built with {@code transport("recording")}. */
  public static Client of(RpcClient built) {
    Client c = (Client) io.petrel.rpc.internal.ClientChannel.transportOf(built);
    c.rpc = built;
    return c;
  }

  /**
   * The recording client's transport: started calls go to {@link #started}, each with the subchannel the core's
   * endpoints picked for it; a request "boom" makes encoding throw. For the tests' convenience it also forwards
   * the client methods they use to the core's client ({@link #rpc}).
   */
  public static final class Client implements ClientTransport {
    public final BlockingQueue<Call<?>> started = new LinkedBlockingQueue<>();
    public final ClientEndpoints<Sub> endpoints;
    public final ClientConfig config;
    public volatile int terminations;
    private final io.petrel.rpc.internal.ClientRuntime runtime;
    /** The core's client this transport serves (set by {@link RecordingTransport#of}). */
    public volatile RpcClient rpc;

    Client(ClientConfig config, io.petrel.rpc.internal.ClientRuntime runtime) {
      this.config = config;
      this.runtime = runtime;
      endpoints = new ClientEndpoints<>(config, Sub::new, new io.petrel.rpc.internal.RateLimitedLog(
          org.slf4j.LoggerFactory.getLogger(RecordingTransport.class)));
      endpoints.start();
    }

    io.petrel.rpc.internal.ClientRuntime runtime0() {
      return runtime;
    }

    @Override
    public void connect() {}

    @Override
    public <Resp> ClientCall<Resp> newCall(MethodDescriptor<?, Resp> method, @Nullable Deadline deadline,
        @Nullable Consumer<Metadata> responseMetadata, @Nullable Executor executor) {
      return new Call<>(this, method, deadline, responseMetadata, executor);
    }

    @Override
    public <Req> void startCall(ClientCall<?> call, MethodDescriptor<Req, ?> method, Req request,
        CallOptions options) {
      if (request instanceof byte[] b && new String(b, java.nio.charset.StandardCharsets.UTF_8).equals("boom")) {
        throw new IllegalArgumentException("the marshaller refused it");
      }
      Call<?> c = (Call<?>) call;
      c.request = request;
      c.subchannel = endpoints.pick(call, c.subchannel);
      if (c.subchannel == null) {
        call.fail(endpoints.noPick(call, "; " + method.fullName() + " not sent"));
        return;
      }
      started.add(c);
    }

    @Override
    public void terminate(Runnable done) {
      terminations++;
      endpoints.shutdown().thenRun(done);
    }

    // ---- the core client's methods, forwarded ----

    public <Req, Resp> java.util.concurrent.CompletableFuture<Resp> unaryCallAsync(MethodDescriptor<Req, Resp> m,
        Req request, CallOptions options) {
      return rpc.unaryCallAsync(m, request, options);
    }

    public <Req> java.util.concurrent.CompletableFuture<Void> oneway(MethodDescriptor<Req, ?> m, Req request,
        CallOptions options) {
      return rpc.oneway(m, request, options);
    }

    public <Req, Resp> Resp unaryCall(MethodDescriptor<Req, Resp> m, Req request) {
      return rpc.unaryCall(m, request);
    }

    public int pendingCalls() {
      return rpc.pendingCalls();
    }

    public RpcClient shutdown() {
      return rpc.shutdown();
    }

    public RpcClient shutdownNow() {
      return rpc.shutdownNow();
    }

    public boolean isShutdown() {
      return rpc.isShutdown();
    }

    public boolean isTerminated() {
      return rpc.isTerminated();
    }

    public boolean awaitTermination(long timeout, java.util.concurrent.TimeUnit unit) throws InterruptedException {
      return rpc.awaitTermination(timeout, unit);
    }
  }
}
