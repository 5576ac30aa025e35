package io.petrel.rpc.internal.inprocess;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Tags;
import io.netty.buffer.ByteBuf;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.Deadline;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.MethodType;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.internal.CallMetrics;
import io.petrel.rpc.spi.ClientConfig;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A client of an in-process server ({@code RpcClient.builder().inProcess("name")}): no socket, no event loop.
 * Each call marshals its request into a buffer of its own and hands it to the server of that name in this
 * JVM, found at the call (so a server started after the client, or restarted, is found); the server answers
 * with a marshalled response, decoded on the caller's side. The client is one connection to that server, which
 * enforces its per-connection limits on it.
 *
 * <p>This client duplicates what the Netty client does per call ({@code NettyRpcClient}, {@code PendingCall}):
 * the count of pending calls against {@code maxPendingCalls}, the deadline, the single completion (response,
 * error, deadline, cancellation, closed connection), the callback executor, the response metadata, the call
 * metrics. It stays that small copy until the client's per-call runtime moves into the core, when both
 * transports will share it.
 *
 * <p>Deadlines run on one daemon thread shared by every in-process client of the JVM. Without a callback
 * executor, a call's future completes on the thread that ends it: the server's thread that answered (the
 * caller's own in direct mode), or that shared deadline thread; callbacks must not block there.
 * {@link #isSecure()} is true: in-process calls never leave the process.
 */
public final class InProcessClient extends RpcClient {
  private static final Logger log = LoggerFactory.getLogger(InProcessClient.class);

  private final ClientConfig config;
  private final String serverName;
  private final String target;
  private final AtomicInteger pending = new AtomicInteger();
  private final CountDownLatch terminated = new CountDownLatch(1);
  private final AtomicBoolean terminating = new AtomicBoolean();
  private volatile boolean shutdown;
  /** This client's connection to the server of its name; replaced when that one closes. */
  private volatile @Nullable InProcessConnection connection;
  private final @Nullable Tags metricTags;
  private final Map<MethodDescriptor<?, ?>, CallMetrics> metrics = new ConcurrentHashMap<>();

  /** The one thread that fires the deadlines of every in-process client's calls. */
  private static final class Timer {
    static final ScheduledThreadPoolExecutor INSTANCE = create();

    private static ScheduledThreadPoolExecutor create() {
      ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, r -> {
        Thread thread = new Thread(r, "petrel-inprocess-deadlines");
        thread.setDaemon(true);
        return thread;
      });
      t.setRemoveOnCancelPolicy(true); // a call that ends in time leaves nothing behind in the queue
      return t;
    }
  }

  static ScheduledThreadPoolExecutor timer() {
    return Timer.INSTANCE;
  }

  /** Made by {@link io.petrel.rpc.RpcClientBuilder#build()} for {@code inProcess(serverName)}. */
  public InProcessClient(String serverName, ClientConfig config) {
    super(config, true);
    this.config = config;
    this.serverName = serverName;
    this.target = config.target();
    if (config.meterRegistry() != null) {
      metricTags = Tags.of("client", config.name(), "target", target);
      Gauge.builder("rpc.client.calls.pending", pending, AtomicInteger::get).tags(metricTags)
          .register(config.meterRegistry());
    } else {
      metricTags = null;
    }
    log.debug("Petrel client '{}' for {} (in-process)", config.name(), target);
  }

  String target() {
    return target;
  }

  String name() {
    return config.name();
  }

  int maxFrameSize() {
    return config.maxFrameSize();
  }

  int maxMetadataSize() {
    return config.maxMetadataSize();
  }

  /**
   * Checks that the server of this client's name is running and taking calls; if not, shuts the client down
   * and throws UNAVAILABLE saying so.
   */
  @Override
  public RpcClient start() {
    if (connection() == null) {
      Status s = unavailable(null);
      shutdownNow();
      throw s.asException();
    }
    return this;
  }

  /** Why there is no connection: no server of that name, or it is shutting down, or this client is. */
  private Status unavailable(@Nullable MethodDescriptor<?, ?> method) {
    String notSent = method == null ? "" : "; " + method.fullName() + " not sent";
    if (shutdown) {
      return Status.UNAVAILABLE.withDescription("client '" + config.name() + "' is shut down" + notSent);
    }
    if (InProcessRegistry.lookup(serverName) != null) {
      return Status.UNAVAILABLE.withDescription("in-process server '" + serverName + "' is shutting down and"
          + " takes no new calls" + notSent);
    }
    return Status.UNAVAILABLE.withDescription("no in-process server named '" + serverName + "' is running; start"
        + " one with RpcServer.builder().inProcess(\"" + serverName + "\")" + notSent);
  }

  /** The open connection to the server, or a new one; null if there is no server taking calls. */
  private @Nullable InProcessConnection connection() {
    InProcessConnection c = connection;
    if (c != null && c.isUsable()) {
      return c;
    }
    synchronized (this) {
      c = connection;
      if (c != null && c.isUsable()) {
        return c;
      }
      if (terminating.get()) {
        return null;
      }
      InProcessServerTransport server = InProcessRegistry.lookup(serverName);
      c = server == null ? null : server.connect(config.name());
      connection = c;
      return c;
    }
  }

  private CallMetrics metricsFor(MethodDescriptor<?, ?> method) {
    Tags tags = metricTags;
    if (tags == null) {
      return CallMetrics.NOOP;
    }
    CallMetrics m = metrics.get(method);
    if (m == null) {
      m = metrics.computeIfAbsent(method, k -> new CallMetrics(config.meterRegistry(), "client", tags, k,
          config.percentileHistograms()));
    }
    return m;
  }

  @Override
  protected <Req, Resp> CompletableFuture<Resp> send(MethodDescriptor<Req, Resp> method, Req request,
      CallOptions options, Deadline deadline, Consumer<Metadata> responseMetadata) {
    boolean oneway = method.type() == MethodType.ONEWAY;
    Executor executor = options.executor() != null ? options.executor() : config.callbackExecutor();
    InProcessCall<Resp> call = new InProcessCall<>(this, method, deadline, responseMetadata, metricsFor(method),
        executor);
    // Counted from here; every path below ends the call exactly once, which uncounts it.
    int n = pending.incrementAndGet();
    if (shutdown) {
      call.fail(Status.UNAVAILABLE.withDescription("client '" + config.name() + "' is shut down; "
          + method.fullName() + " not sent"));
      return call;
    }
    if (n > config.maxPendingCalls()) {
      call.fail(Status.RESOURCE_EXHAUSTED.withDescription("client has " + config.maxPendingCalls()
          + " calls pending (awaiting responses, or waiting for the server to take more calls), its"
          + " maxPendingCalls (raise RpcClient.builder().maxPendingCalls, or wait for responses before sending"
          + " more)"));
      return call;
    }
    if (deadline != null && deadline.isExpired()) {
      call.fail(Status.DEADLINE_EXCEEDED.withDescription("deadline already passed before " + method.fullName()
          + " was sent"));
      return call;
    }
    Metadata metadata = options.metadata();
    int metaLen;
    ByteBuf body;
    try {
      metaLen = Frames.checkMetadata(metadata, config.maxMetadataSize(), "RpcClient.builder()");
      body = Frames.encode("request", method.requestMarshaller(), request, metaLen, config.maxFrameSize(),
          "RpcClient.builder()");
    } catch (Frames.TooLarge e) {
      call.fail(e.status.augmentDescription("not sent"));
      return call;
    } catch (StatusException e) {
      call.fail(e.status());
      return call;
    } catch (Throwable t) {
      Status.Code code = t instanceof IllegalArgumentException || t instanceof NullPointerException
          ? Status.Code.INVALID_ARGUMENT : Status.Code.INTERNAL;
      call.fail(code.toStatus().withDescription("cannot encode the request of " + method.fullName() + ": "
          + Status.describe(t)).withCause(t));
      return call;
    }
    call.requestSize = body.readableBytes();
    InProcessConnection c = connection();
    if (c == null) {
      body.release();
      call.fail(unavailable(method));
      return call;
    }
    c.dispatch(call, metadata, metaLen, body, deadline, oneway); // owns the body from here
    if (oneway) {
      call.sent();
    } else {
      call.armTimer();
    }
    return call;
  }

  /** A call of this client has ended. */
  void callEnded() {
    if (pending.decrementAndGet() == 0 && shutdown) {
      terminate();
    }
  }

  @Override
  public int pendingCalls() {
    return pending.get();
  }

  @Override
  public RpcClient shutdown() {
    shutdown = true;
    if (pending.get() == 0) {
      terminate();
    }
    return this;
  }

  @Override
  public RpcClient shutdownNow() {
    shutdown = true;
    terminate();
    return this;
  }

  /** Closes the connection: calls still in flight fail with UNAVAILABLE and are cancelled on the server. */
  private void terminate() {
    if (!terminating.compareAndSet(false, true)) {
      return;
    }
    InProcessConnection c;
    synchronized (this) {
      c = connection;
      connection = null;
    }
    if (c != null) {
      c.close(true, "client '" + config.name() + "' was shut down");
    }
    terminated.countDown();
  }

  @Override
  public boolean isShutdown() {
    return shutdown;
  }

  @Override
  public boolean isTerminated() {
    return terminated.getCount() == 0;
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    return terminated.await(timeout, unit);
  }

  @Override
  public String toString() {
    return "InProcessClient{" + target + ", pending=" + pending.get() + "}";
  }
}
