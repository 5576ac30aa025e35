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
  public ClientTransport newClientTransport(ClientConfig config, ClientCallRuntime runtime) {
    return new Client(config, runtime);
  }

  /** A call as the recording client made it, with what the transport heard of its end, in order. */
  public static final class Call<Resp> extends ClientCall<Resp> {
    public final List<String> events = new CopyOnWriteArrayList<>();
    public @Nullable Object request;
    /** The endpoint the core picked for the attempt, null without endpoints. */
    public io.petrel.rpc.internal.@Nullable InternalSubchannel subchannel;
    /** The connection the core started the attempt on. */
    public @Nullable Conn connection;

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

  /**
   * A connection as the recording transport made it: the test completes or fails its connect
   * ({@link Client#manualConnects}), and plays what a real one would report (lost, GOAWAY).
   */
  public static final class Conn implements Connection {
    public final io.petrel.rpc.Endpoint endpoint;
    public final Connection.Listener listener;
    public final java.util.concurrent.CompletableFuture<Connection> future = new java.util.concurrent.CompletableFuture<>();
    /** When the core asked for it (nanoTime). */
    public final long askedAt = System.nanoTime();
    public volatile boolean usable = true;
    /** Why it was drained, or null. */
    public volatile @Nullable String drained;
    public final java.util.concurrent.CompletableFuture<Void> closed = new java.util.concurrent.CompletableFuture<>();

    Conn(io.petrel.rpc.Endpoint endpoint, Connection.Listener listener) {
      this.endpoint = endpoint;
      this.listener = listener;
    }

    /** The connect succeeded: the server answered at once. */
    public void succeed() {
      future.complete(this);
      listener.answered();
    }

    /** The connect failed with {@code why}. */
    public void fail(String why) {
      usable = false;
      future.completeExceptionally(io.petrel.rpc.Status.UNAVAILABLE.withDescription(why).asException());
    }

    /** The connection was lost ({@code answered}: after the server had said something). */
    public void lose(boolean answered) {
      usable = false;
      listener.closed("lost by the test", answered);
      closed.complete(null);
    }

    @Override
    public boolean isUsable() {
      return usable;
    }

    @Override
    public void drain(String why) {
      drained = why;
      lose(true);
    }

    @Override
    public void close() {
      lose(true);
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
    /** Every connection the core asked for, in order. */
    public final List<Conn> connects = new CopyOnWriteArrayList<>();
    /** The same, for a test to wait on. */
    public final BlockingQueue<Conn> asked = new LinkedBlockingQueue<>();
    /** Connects of these authorities ("host:port") fail at once. */
    public final java.util.Set<String> refused = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** When set, connects wait for the test ({@link Conn#succeed}, {@link Conn#fail}); else they succeed at once. */
    public volatile boolean manualConnects;
    private final java.util.concurrent.ScheduledExecutorService timers =
        java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
          Thread t = new Thread(r, "recording-timers");
          t.setDaemon(true);
          return t;
        });
    /** The core's endpoints of the client, seen as this transport's subchannels. */
    public final Endpoints endpoints = new Endpoints();
    public final ClientConfig config;
    public volatile int terminations;
    private final ClientCallRuntime runtime;
    /** The core's client this transport serves (set by {@link RecordingTransport#of}). */
    public volatile RpcClient rpc;

    Client(ClientConfig config, ClientCallRuntime runtime) {
      this.config = config;
      this.runtime = runtime;
    }

    /** The core's endpoints of this client, as the tests look at them. */
    public final class Endpoints {
      public List<io.petrel.rpc.internal.InternalSubchannel> subchannels() {
        var e = io.petrel.rpc.internal.ClientChannel.endpointsOf(rpc);
        return e == null ? List.of() : e.subchannels();
      }

      /** Plays the resolver. */
      public void onEndpoints(List<io.petrel.rpc.Endpoint> list) {
        java.util.Objects.requireNonNull(io.petrel.rpc.internal.ClientChannel.endpointsOf(rpc)).onEndpoints(list);
      }

      /** Plays the resolver failing. */
      public void onError(io.petrel.rpc.Status error) {
        java.util.Objects.requireNonNull(io.petrel.rpc.internal.ClientChannel.endpointsOf(rpc)).onError(error);
      }
    }

    @Override
    public java.util.concurrent.CompletableFuture<Connection> connect(io.petrel.rpc.Endpoint endpoint,
        Connection.Listener listener) {
      Conn c = new Conn(endpoint, listener);
      connects.add(c);
      asked.add(c);
      if (refused.contains(endpoint.authority())) {
        c.fail("refused by the test");
      } else if (!manualConnects) {
        c.succeed();
      }
      return c.future;
    }

    @Override
    public java.util.concurrent.ScheduledExecutorService scheduler() {
      return timers;
    }

    /** The open connections to {@code s}'s endpoint. */
    public List<Conn> connectionsTo(Subchannel s) {
      return connects.stream().filter(c -> c.endpoint.sameAddress(s.endpoint()) && c.usable && c.future.isDone()
          && !c.future.isCompletedExceptionally()).toList();
    }

    /** Plays an endpoint that goes down: its connections are lost before answering, and connects to it fail. */
    public void takeDown(Subchannel s) {
      refused.add(s.endpoint().authority());
      connectionsTo(s).forEach(c -> c.lose(false));
    }

    ClientCallRuntime runtime0() {
      return runtime;
    }

    @Override
    public <Resp> ClientCall<Resp> newCall(MethodDescriptor<?, Resp> method, @Nullable Deadline deadline,
        @Nullable Consumer<Metadata> responseMetadata, @Nullable Executor executor) {
      return new Call<>(this, method, deadline, responseMetadata, executor);
    }

    @Override
    public <Req> void startAttempt(ClientCall<?> call, Connection connection, MethodDescriptor<Req, ?> method,
        Req request, CallOptions options) {
      if (request instanceof byte[] b && new String(b, java.nio.charset.StandardCharsets.UTF_8).equals("boom")) {
        throw new IllegalArgumentException("the marshaller refused it");
      }
      Call<?> c = (Call<?>) call;
      c.request = request;
      c.subchannel = (io.petrel.rpc.internal.InternalSubchannel) call.picked();
      c.connection = (Conn) connection;
      started.add(c);
    }

    @Override
    public void terminate(Runnable done) {
      terminations++;
      timers.shutdownNow();
      done.run();
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
