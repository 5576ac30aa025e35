package io.petrel.rpc.transport.netty;

import io.petrel.rpc.spi.FrameSizes;
import static io.petrel.rpc.transport.netty.Protocol.TYPE_ONEWAY;
import static io.petrel.rpc.transport.netty.Protocol.TYPE_REQUEST;

import io.micrometer.core.instrument.Tags;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.Deadline;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.internal.ClientRuntime;
import io.petrel.rpc.internal.RateLimitedLog;
import io.petrel.rpc.spi.AttemptProgress;
import io.petrel.rpc.spi.ClientCall;
import io.petrel.rpc.spi.ClientConfig;
import io.petrel.rpc.spi.ClientEndpoints;
import io.petrel.rpc.spi.ClientTransport;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Netty client: a channel over the endpoints its name resolver yields. The core's load balancer picks a
 * {@link NettySubchannel} (one endpoint's connections) per call; requests are encoded on the caller's thread and
 * sent through per-connection write queues. Event loops are the JVM's shared ones unless {@code ioThreads} is
 * set.
 */
final class NettyRpcClient implements ClientTransport {
  private static final Logger log = LoggerFactory.getLogger(NettyRpcClient.class);

  private final ClientConfig config;
  private final String target;
  private final IoSupport io;
  private final EventLoopGroup group;
  /** The shared event loops in use, or null when the client has its own group or the caller's. */
  private final @Nullable SharedEventLoops shared;
  /** The client made {@link #group} and shuts it down when it terminates. */
  private final boolean ownGroup;
  private final String loopsDescribed;
  /** The endpoints (the core's resolver listener and load balancer) and their subchannels. */
  private final ClientEndpoints<NettySubchannel> endpoints;
  /** Requests are encoded on the callers' threads: see {@link IoSupport#CALLER_ALLOCATOR}. */
  private final ByteBufAllocator alloc = IoSupport.CALLER_ALLOCATOR;
  private final @Nullable TransportMetrics metrics;
  private final RateLimitedLog limitLog = new RateLimitedLog(log);
  /** The event loops this client's connections run on, to refuse blocking calls made on them. */
  private final EventExecutor[] loops;
  /** The TLS contexts of new connections, or null for plaintext. */
  private final @Nullable TlsSource tls;
  private final LoopRelease loopRelease;
  /** The core client's runtime: its calls are made with it. */
  private final ClientRuntime runtime;

  NettyRpcClient(ClientConfig config, ClientRuntime runtime) {
    this.runtime = runtime;
    this.config = config;
    this.target = config.target();
    if (config.tls() != null) {
      try {
        this.tls = new TlsSource(config.tls(), false, "client '" + config.name() + "'", limitLog);
      } catch (java.io.IOException e) {
        throw new IllegalArgumentException("client '" + config.name() + "' for " + target + ": " + e.getMessage(),
            e);
      }
    } else {
      this.tls = null;
    }
    io.netty.channel.IoEventLoopGroup supplied = config.option(NettyOptions.EVENT_LOOP_GROUP);
    int ioThreads = config.option(NettyOptions.IO_THREADS);
    if (supplied != null) {
      this.io = IoSupport.of(supplied); // channels of the group's own I/O type
      this.shared = null;
      this.ownGroup = false;
      this.group = supplied;
      this.loopsDescribed = "the caller's event loops";
    } else {
      this.io = IoSupport.select(config.option(NettyOptions.IO_MODE));
      if (ioThreads > 0) {
        this.shared = null;
        this.ownGroup = true;
        this.group = io.newGroup(ioThreads, config.name() + "-io");
        this.loopsDescribed = ioThreads + " io threads of its own";
      } else {
        this.shared = SharedEventLoops.acquire(io);
        this.ownGroup = false;
        this.group = shared.group();
        this.loopsDescribed = "shared event loops";
      }
    }
    this.loopRelease = new LoopRelease(shared, ownGroup ? group : null);
    CLEANER.register(this, loopRelease);
    this.endpoints = new ClientEndpoints<>(config, e -> new NettySubchannel(this, e, group, io, config), limitLog);
    this.metrics = config.meterRegistry() == null ? null
        : new TransportMetrics(config.meterRegistry(), "client",
            Tags.of("client", config.name(), "target", target));
    List<EventExecutor> executors = new ArrayList<>();
    group.forEach(executors::add);
    this.loops = executors.toArray(new EventExecutor[0]);
    if (metrics != null) {
      metrics.gauge("rpc.client.connections", this, c -> {
        int n = 0;
        for (NettySubchannel s : c.endpoints.subchannels()) {
          n += s.connected();
        }
        return n;
      });
      metrics.eventLoops(group);
    }
    log.debug("Petrel client '{}' for {} (io {}, {} connections per endpoint, {}, load balancer {}, {})",
        config.name(), target, io.name, config.connectionsPerEndpoint(), loopsDescribed, config.loadBalancer().name(),
        tls == null ? "plaintext" : tls.describe());
    endpoints.start(); // last: a static resolver answers at once, on this thread
  }

  /** The TLS contexts of new connections, or null for plaintext. */
  @Nullable TlsSource tls() {
    return tls;
  }

  @Override
  public void reloadTls() throws java.io.IOException {
    if (tls == null) {
      ClientTransport.super.reloadTls(); // throws: no TLS
      return;
    }
    tls.reload();
  }

  String target() {
    return target;
  }

  /** The client's own metadata limit; requests never exceed it. */
  int maxMetadataSize() {
    return config.maxMetadataSize();
  }

  RateLimitedLog limitLog() {
    return limitLog;
  }

  /**
   * Why nothing can be sent when an event loop of this client refuses work: the client is shut down, or, on the
   * caller's own event loops ({@link NettyOptions#EVENT_LOOP_GROUP}), the caller shut them down while the client
   * was still in use.
   */
  String whyStopped() {
    if (runtime.isShutdown() || shared != null || ownGroup) {
      return "client '" + config.name() + "' is shut down";
    }
    return "the event loops of client '" + config.name() + "' are shut down: the EventLoopGroup given with"
        + " NettyOptions.EVENT_LOOP_GROUP was shut down while the client was in use (shut the client down first)";
  }

  @Override
  public boolean isTransportThread() {
    for (io.netty.util.concurrent.EventExecutor e : loops) {
      if (e.inEventLoop()) {
        return true;
      }
    }
    return false;
  }

  /** The client's meters, or null when no registry was given. */
  @Nullable TransportMetrics metrics() {
    return metrics;
  }

  /**
   * Connects to every endpoint now and waits up to the connect timeout. Succeeds when at least one endpoint is
   * reachable; otherwise throws UNAVAILABLE naming each failure. Either way the client stays usable: an
   * endpoint that failed is in its backoff, as after any failed attempt, and later calls reach it once it is up.
   * A client dropped after a failed {@code build().start()} holds no connection and, once its backoff has
   * passed, no timer; its share of the event loops is released when it is garbage collected.
   */
  @Override
  public void connect() {
    List<NettySubchannel> subs = endpoints.subchannels();
    if (subs.isEmpty()) {
      throw endpoints.noEndpoint("").asException();
    }
    List<Future<ClientConnection>> attempts = new ArrayList<>();
    List<NettySubchannel> owners = new ArrayList<>();
    for (NettySubchannel sub : subs) {
      for (ClientSlot s : sub.slots()) {
        attempts.add(s.acquire(null, false));
        owners.add(sub);
      }
    }
    long waitMs = TimeUnit.NANOSECONDS.toMillis(config.connectTimeoutNanos()) + 1000;
    long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
    StatusException first = null;
    List<String> failures = new ArrayList<>();
    int ok = 0;
    for (int i = 0; i < attempts.size(); i++) {
      Future<ClientConnection> f = attempts.get(i);
      long left = Math.max(0, TimeUnit.NANOSECONDS.toMillis(until - System.nanoTime()));
      StatusException failure = null;
      if (!f.awaitUninterruptibly(left)) {
        failure = Status.UNAVAILABLE.withDescription("cannot connect to " + owners.get(i).authority() + " within "
            + waitMs + " ms").asException();
      } else if (!f.isSuccess()) {
        failure = f.cause() instanceof StatusException se ? new StatusException(se.status()) // described; our stack
            : Status.UNAVAILABLE.withDescription("cannot connect to " + owners.get(i).authority() + ": "
                + f.cause()).withCause(f.cause()).asException();
      } else {
        ok++;
      }
      if (failure != null) {
        first = first == null ? failure : first;
        failures.add(failure.status().description());
      }
    }
    if (ok > 0) {
      if (!failures.isEmpty()) {
        log.warn("client '{}' for {}: {} of {} connections failed at start, calls go to the others: {}",
            config.name(), target, failures.size(), attempts.size(), summarize(failures));
      }
      return;
    }
    if (attempts.size() == 1) {
      throw first;
    }
    throw Status.UNAVAILABLE.withDescription("cannot connect to any endpoint of " + target + ": "
        + summarize(failures)).asException();
  }

  /**
   * The distinct failures, each once with how often it happened ("3 x cannot connect to h:7000 ...; ..."), at most
   * five of them: a client with thousands of connections must not write thousands of lines' worth into one.
   */
  static String summarize(List<String> failures) {
    java.util.Map<String, Integer> counts = new java.util.LinkedHashMap<>();
    for (String f : failures) {
      counts.merge(f, 1, Integer::sum);
    }
    StringBuilder sb = new StringBuilder();
    int shown = 0;
    for (java.util.Map.Entry<String, Integer> e : counts.entrySet()) {
      if (shown == 5) {
        sb.append("; and ").append(counts.size() - shown).append(" other failures");
        break;
      }
      sb.append(shown == 0 ? "" : "; ").append(e.getValue() > 1 ? e.getValue() + " x " : "").append(e.getKey());
      shown++;
    }
    return sb.toString();
  }

  /** The core's runtime of this client, for its calls. */
  ClientRuntime callRuntime() {
    return runtime;
  }

  @Override
  public <Resp> ClientCall<Resp> newCall(MethodDescriptor<?, Resp> method, @Nullable Deadline deadline,
      @Nullable Consumer<Metadata> responseMetadata, @Nullable Executor executor) {
    return new PendingCall<>(this, method, deadline, responseMetadata, executor);
  }

  /** Encodes the request on the caller's thread, picks the endpoint, and hands the call to a connection. */
  @Override
  public <Req> void startCall(ClientCall<?> c, MethodDescriptor<Req, ?> method, Req request,
      CallOptions options) throws Exception {
    PendingCall<?> call = (PendingCall<?>) c;
    ByteBuf frame = FrameEncoder.encodeMessage(alloc, call.isOneway() ? TYPE_ONEWAY : TYPE_REQUEST, 0, method.id(),
        0, options.metadata(), method.requestMarshaller(), request, config.maxFrameSize(), config.maxMetadataSize(),
        "RpcClient.builder()"); // over a limit: FrameSizes.TooLarge, which the core turns into the call's status
    call.frame = frame;
    call.failFast = options.isFailFast();
    call.requestSize(frame.getInt(Protocol.OFF_BODY_LENGTH));
    NettySubchannel sub = endpoints.pick(call, call.subchannel); // another endpoint than a failed attempt's
    if (sub == null) {
      call.releaseFrame();
      call.fail(endpoints.noPick(call, "; " + method.fullName() + " not sent"));
      return;
    }
    call.subchannel = sub;
    route(call, sub.nextSlot());
  }

  /**
   * Hands an encoded, unsent call to a usable connection of {@code slot}, or waits for one connection attempt
   * (bounded by the call's deadline): the one under way, or, while the slot backs off after a failed attempt,
   * the next one when that comes before the call's deadline; otherwise, or when the call is fail-fast, the
   * attempt ends NOT_SENT at once (no connection attempt per call: see ClientSlot), and the core may send the
   * call again on another endpoint. Also used for a call whose connection closed or received GOAWAY before the
   * call could be written (in its write queue, or held back waiting for the server to take more calls): it was
   * not sent, so sending it on another connection of the slot is safe.
   */
  @SuppressWarnings("unchecked")
  void route(PendingCall<?> call, ClientSlot slot) {
    ClientConnection c = slot.current();
    if (c != null) {
      c.send(call);
      return;
    }
    Future<ClientConnection> attempt = slot.acquire(call.deadline(), !call.failFast);
    if (attempt.isDone()) {
      onConnection(call, slot, attempt, false);
      return;
    }
    if (!call.armTimer(slot.loop())) {
      return; // the client's event loop is gone: the call has failed with UNAVAILABLE
    }
    attempt.addListener(f -> onConnection(call, slot, (Future<ClientConnection>) f, true));
  }

  /** The attempt the call was routed to has ended ({@code waited}: the call waited for it). */
  private void onConnection(PendingCall<?> call, ClientSlot slot, Future<ClientConnection> f, boolean waited) {
    if (f.isSuccess()) {
      f.getNow().send(call);
      return;
    }
    if (call.isFinished()) {
      call.releaseFrame(); // its deadline passed (or it was cancelled) while it waited
      return;
    }
    call.releaseFrame();
    Throwable cause = f.cause();
    Status failure = cause instanceof StatusException se ? se.status()
        : Status.UNAVAILABLE.withDescription("cannot connect to " + slot.authority() + ": " + cause).withCause(cause);
    if (waited) {
      // The attempt it waited for failed (a call waits for one attempt at most): say when the next one is due.
      String next = slot.nextAttemptDescribed();
      if (next != null) {
        failure = failure.withDescription(failure.description() + next);
      }
    }
    call.onClose(failure, AttemptProgress.NOT_SENT); // the core may send it again, to another endpoint

  }

  /** The {@code i}-th connection slot of the first endpoint (tests). */
  ClientSlot slot(int i) {
    return endpoints.subchannels().get(0).slots()[i];
  }

  /** Closes every endpoint's connections, then releases the event loops (or this client's share of them). */
  @Override
  public void terminate(Runnable done) {
    endpoints.shutdown().whenComplete((v, t) -> {
      Future<?> stopped = loopRelease.release();
      if (stopped == null) {
        done.run(); // the caller's event loops: never shut down here
        return;
      }
      stopped.addListener(g -> done.run());
    });
  }

  /**
   * Releases the client's event loops once: at termination, or when the client is garbage collected without
   * having been shut down (a {@code build().start()} that threw leaves nobody to shut it down). It holds no
   * reference to the client, so that the client can become unreachable.
   */
  private static final class LoopRelease implements Runnable {
    private final @Nullable SharedEventLoops shared;
    private final @Nullable EventLoopGroup own;
    private final java.util.concurrent.atomic.AtomicBoolean released = new java.util.concurrent.atomic.AtomicBoolean();

    LoopRelease(@Nullable SharedEventLoops shared, @Nullable EventLoopGroup own) {
      this.shared = shared;
      this.own = own;
    }

    /** Stops or releases the loops, the first time; null when there is nothing to wait for. */
    @Nullable Future<?> release() {
      if ((shared == null && own == null) || !released.compareAndSet(false, true)) {
        return null;
      }
      return shared != null ? shared.release() : own.shutdownGracefully(0, 2, TimeUnit.SECONDS);
    }

    @Override
    public void run() {
      release();
    }
  }

  private static final java.lang.ref.Cleaner CLEANER = java.lang.ref.Cleaner.create();

  @Override
  public String toString() {
    return "NettyRpcClient{" + target + ", pending=" + runtime.pendingCalls() + ", subchannels="
        + endpoints.subchannels() + "}";
  }
}
