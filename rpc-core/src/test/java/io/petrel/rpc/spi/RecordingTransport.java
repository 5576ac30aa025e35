package io.petrel.rpc.spi;

import io.petrel.rpc.Subchannel;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.Deadline;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.RpcClient;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import org.jspecify.annotations.Nullable;

/**
 * A transport for the core's own tests, selected with {@code transport("recording")}: its client sends nothing;
 * it keeps every started attempt (stream) for the test, which then plays the server's side through the core's
 * call (the stream's listener) and checks what the core did. Servers are not supported.
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
  public ClientTransport newClientTransport(ClientConfig config, ClientTransportContext context) {
    return new Client(config);
  }

  /**
   * One attempt as the recording client made it (its stream), with what the core did to it, in order
   * ("halfClose", "cancel:CODE"), and helpers that play the server's side through the core's call, its listener.
   */
  public static final class Call implements ClientStream {
    public final List<String> events = new CopyOnWriteArrayList<>();
    /** The core's call this attempt belongs to. */
    public final io.petrel.rpc.internal.ClientCall<?> call;
    public @Nullable Object request;
    /** The endpoint the core picked for the attempt, null without endpoints. */
    public final io.petrel.rpc.internal.@Nullable InternalSubchannel subchannel;
    /** The connection the core started the attempt on. */
    public final @Nullable Conn connection;
    private final Client client;

    Call(Client client, @Nullable Conn connection, ClientStreamListener listener) {
      this.client = client;
      this.call = (io.petrel.rpc.internal.ClientCall<?>) listener;
      this.subchannel = (io.petrel.rpc.internal.InternalSubchannel) call.picked();
      this.connection = connection;
    }

    @Override
    public int sendMessage(@Nullable Object message) {
      if (message instanceof byte[] b && new String(b, java.nio.charset.StandardCharsets.UTF_8).equals("boom")) {
        throw new IllegalArgumentException("the marshaller refused it");
      }
      request = message;
      return message instanceof byte[] b ? b.length : 0;
    }

    @Override
    public void halfClose() {
      events.add("halfClose");
      client.started.add(this);
    }

    @Override
    public void cancel(io.petrel.rpc.Status status) {
      events.add("cancel:" + status.code());
    }

    @Override
    public String peer() {
      return subchannel == null ? "recording" : subchannel.endpoint().authority();
    }

    // ---- the server's side, played by a test ----

    public void onResponseMetadata(Metadata md) {
      call.onHeaders(md);
    }

    /** A response message, then (if {@code end}) the close with OK. */
    public void onMessage(io.netty.buffer.ByteBuf message, boolean end) {
      call.onMessage(message);
      if (end) {
        call.onClose(io.petrel.rpc.Status.OK, Metadata.EMPTY, AttemptProgress.PROCESSED);
      }
    }

    /** The server's answer with a status (its handler may have run). */
    public void onStatus(io.petrel.rpc.Status status) {
      call.onClose(status, Metadata.EMPTY, AttemptProgress.PROCESSED);
    }

    /** The attempt ends without an answer, having got as far as {@code progress}. */
    public void onClose(io.petrel.rpc.Status status, AttemptProgress progress) {
      call.onClose(status, Metadata.EMPTY, progress);
    }

    /** A oneway's request was written. */
    public void onSent() {
      call.onClose(io.petrel.rpc.Status.OK, Metadata.EMPTY, AttemptProgress.PROCESSED);
    }

    /** The transport's deadline ends the attempt; true if that ended the call. */
    public boolean deadlineExceeded(String detail) {
      boolean was = call.isFinished();
      call.onDeadlineExceeded(detail);
      return !was && call.isFinished();
    }

    /** The core ends the call (as the client's own checks would). */
    public boolean fail(io.petrel.rpc.Status status) {
      return call.fail(status);
    }

    public int attempts() {
      return call.attempts();
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
    /** Why the core closed it ({@link #closeIfUnanswered}), or null. */
    public volatile @Nullable String closedBecause;
    /** Whether the server has answered ({@link #succeed}). */
    public volatile boolean answered;
    public final java.util.concurrent.CompletableFuture<Void> closed = new java.util.concurrent.CompletableFuture<>();

    Conn(io.petrel.rpc.Endpoint endpoint, Connection.Listener listener) {
      this.endpoint = endpoint;
      this.listener = listener;
    }

    /** The connect succeeded: the server answered at once. */
    public void succeed() {
      future.complete(this);
      answered = true;
      listener.answered();
    }

    /** The connect succeeded, and the server says nothing (a frozen process whose kernel still accepts). */
    public void connectSilently() {
      future.complete(this);
    }

    /** The connect failed with {@code why}. */
    public void fail(String why) {
      usable = false;
      future.completeExceptionally(io.petrel.rpc.Status.UNAVAILABLE.withDescription(why).asException());
    }

    /** The attempt failed with a local exception, as a refused connect does. */
    public void fail(Throwable cause) {
      usable = false;
      future.completeExceptionally(cause);
    }

    /** The connection was lost ({@code answered}: after the server had said something). */
    public void lose(boolean answered) {
      usable = false;
      String because = closedBecause;
      listener.closed(because != null ? because : "lost by the test", answered);
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
      lose(answered);
    }

    @Override
    public void closeIfUnanswered(String reason) {
      closedBecause = reason;
      close();
    }

    /** The thread this connection "reads" on, for the core's health checks; null: no PINGs (the default). */
    public volatile java.util.concurrent.@Nullable ScheduledExecutorService executor;
    /** What the core's health checks did here, in order: "ping", "dead: reason | warning | next". */
    public final BlockingQueue<String> health = new LinkedBlockingQueue<>();

    @Override
    public java.util.concurrent.@Nullable ScheduledExecutorService executor() {
      return executor;
    }

    @Override
    public void ping() {
      health.add("ping");
    }

    @Override
    public void closeDead(String reason, String warning, String next) {
      health.add("dead: " + reason + " | " + warning + " | " + next);
      closedBecause = reason;
      lose(true);
    }

    /** Plays a batch of bytes read, on {@link #executor}, as a transport reports it. */
    public void read() {
      java.util.Objects.requireNonNull(executor, "a connection with an executor").execute(listener::received);
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
    public final BlockingQueue<Call> started = new LinkedBlockingQueue<>();
    /** Every connection the core asked for, in order. */
    public final List<Conn> connects = new CopyOnWriteArrayList<>();
    /** The same, for a test to wait on. */
    public final BlockingQueue<Conn> asked = new LinkedBlockingQueue<>();
    /** Connects of these authorities ("host:port") fail at once. */
    public final java.util.Set<String> refused = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** When set, connects wait for the test ({@link Conn#succeed}, {@link Conn#fail}); else they succeed at once. */
    public volatile boolean manualConnects;
    /** When set, the connections made from now on have this executor: the core's keepalive and liveness apply. */
    public volatile java.util.concurrent.@Nullable ScheduledExecutorService connectionExecutor;
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
    /** The core's client this transport serves (set by {@link RecordingTransport#of}). */
    public volatile RpcClient rpc;

    Client(ClientConfig config) {
      this.config = config;
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
      c.executor = connectionExecutor;
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

    @Override
    public ClientStream newStream(@Nullable Connection connection, MethodDescriptor<?, ?> method,
        CallOptions options, @Nullable Deadline deadline, ClientStreamListener listener) {
      return new Call(this, (Conn) connection, listener);
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
