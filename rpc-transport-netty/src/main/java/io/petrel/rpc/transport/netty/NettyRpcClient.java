package io.petrel.rpc.transport.netty;

import static io.petrel.rpc.transport.netty.Protocol.TYPE_ONEWAY;
import static io.petrel.rpc.transport.netty.Protocol.TYPE_REQUEST;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.Future;
import io.micrometer.core.instrument.Tags;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.internal.CallMetrics;
import java.util.function.Consumer;
import io.petrel.rpc.Deadline;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.MethodType;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.spi.ClientConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The Netty client: encodes on the caller's thread, sends through per-connection write queues. */
final class NettyRpcClient extends RpcClient {
  private static final Logger log = LoggerFactory.getLogger(NettyRpcClient.class);

  private final ClientConfig config;
  private final String target;
  private final IoSupport io;
  private final EventLoopGroup group;
  private final ClientSlot[] slots;
  private final AtomicInteger pending = new AtomicInteger();
  private final CountDownLatch terminated = new CountDownLatch(1);
  private final AtomicBoolean terminating = new AtomicBoolean();
  /** Requests are encoded on the callers' threads: see {@link IoSupport#CALLER_ALLOCATOR}. */
  private final ByteBufAllocator alloc = IoSupport.CALLER_ALLOCATOR;
  private final TransportMetrics metrics;
  private volatile boolean shutdown;
  private int roundRobin;
  private final RateLimitedLog limitLog = new RateLimitedLog(log);
  /** The client's event loops, to refuse blocking calls made on them. */
  private final io.netty.util.concurrent.EventExecutor[] loops;
  /** The TLS contexts of new connections, or null for plaintext. */
  private final TlsSource tls;

  NettyRpcClient(ClientConfig config) {
    super(config);
    this.config = config;
    this.target = config.address().getHostString() + ":" + config.address().getPort();
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
    this.io = IoSupport.select(config.ioMode());
    int threads = config.ioThreads() == 0
        ? Math.min(Runtime.getRuntime().availableProcessors(), config.connectionsPerEndpoint())
        : config.ioThreads();
    this.group = io.newGroup(threads, config.name() + "-io");
    this.metrics = config.meterRegistry() == null ? null
        : new TransportMetrics(config.meterRegistry(), "client",
            Tags.of("client", config.name(), "target", target), config.percentileHistograms());
    List<io.netty.util.concurrent.EventExecutor> executors = new ArrayList<>();
    group.forEach(executors::add);
    this.loops = executors.toArray(new io.netty.util.concurrent.EventExecutor[0]);
    this.slots = new ClientSlot[config.connectionsPerEndpoint()];
    for (int i = 0; i < slots.length; i++) {
      slots[i] = new ClientSlot(this, group.next(), io, config);
    }
    if (metrics != null) {
      metrics.gauge("rpc.client.calls.pending", pending, AtomicInteger::get);
      metrics.gauge("rpc.client.connections", this, c -> {
        int n = 0;
        for (ClientSlot s : c.slots) {
          n += s.current() != null ? 1 : 0;
        }
        return n;
      });
      metrics.eventLoops(group);
    }
    log.debug("Petrel client '{}' for {} (io {}, {} connections, {} io threads, {})", config.name(), target, io.name,
        slots.length, threads, tls == null ? "plaintext" : tls.describe());
  }

  /** The TLS contexts of new connections, or null for plaintext. */
  TlsSource tls() {
    return tls;
  }

  @Override
  public void reloadTls() throws java.io.IOException {
    if (tls == null) {
      super.reloadTls(); // throws: no TLS
      return;
    }
    tls.reload();
  }

  String target() {
    return target;
  }

  String name() {
    return config.name();
  }

  /** The client's own metadata limit; requests never exceed it. */
  int maxMetadataSize() {
    return config.maxMetadataSize();
  }

  RateLimitedLog limitLog() {
    return limitLog;
  }

  @Override
  protected boolean isTransportThread() {
    for (io.netty.util.concurrent.EventExecutor e : loops) {
      if (e.inEventLoop()) {
        return true;
      }
    }
    return false;
  }

  /** The client's meters, or null when no registry was given. */
  TransportMetrics metrics() {
    return metrics;
  }

  @Override
  public RpcClient start() {
    List<Future<ClientConnection>> attempts = new ArrayList<>();
    for (ClientSlot s : slots) {
      attempts.add(s.acquire());
    }
    long waitMs = TimeUnit.NANOSECONDS.toMillis(config.connectTimeoutNanos()) + 1000;
    for (Future<ClientConnection> f : attempts) {
      if (!f.awaitUninterruptibly(waitMs)) {
        throw Status.UNAVAILABLE.withDescription("cannot connect to " + target + " within " + waitMs + " ms")
            .asException();
      }
      if (!f.isSuccess()) {
        if (f.cause() instanceof StatusException se) {
          throw new StatusException(se.status()); // e.g. a failed TLS handshake, described; the caller's stack
        }
        throw Status.UNAVAILABLE.withDescription("cannot connect to " + target + ": " + f.cause())
            .withCause(f.cause()).asException();
      }
    }
    return this;
  }

  @Override
  protected <Req, Resp> CompletableFuture<Resp> send(MethodDescriptor<Req, Resp> method, Req request,
      CallOptions options, Deadline deadline, Consumer<Metadata> responseMetadata) {
    boolean oneway = method.type() == MethodType.ONEWAY;
    CallMetrics cm = metrics == null ? CallMetrics.NOOP : metrics.forMethod(method);
    Executor executor = options.executor() != null ? options.executor() : config.callbackExecutor();
    PendingCall<Resp> call = new PendingCall<>(this, method, deadline, oneway, responseMetadata, cm, executor);
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
    try {
      call.frame = FrameEncoder.encodeMessage(alloc, oneway ? TYPE_ONEWAY : TYPE_REQUEST, 0, method.id(), 0,
          options.metadata(), method.requestMarshaller(), request, config.maxFrameSize(), config.maxMetadataSize(),
          "RpcClient.builder()");
      call.requestSize = call.frame.getInt(Protocol.OFF_BODY_LENGTH);
    } catch (FrameEncoder.FrameTooLargeException e) {
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
    route(call, nextSlot());
    return call;
  }

  /**
   * Hands an encoded, unsent call to a usable connection of {@code slot}, or waits for the slot's connection
   * attempt (bounded by the call's deadline); while the slot backs off after a failed attempt, the call fails at
   * once (no attempt per call: see ClientSlot). Also used for a call whose connection closed or received GOAWAY
   * before the call could be written (in its write queue, or held back waiting for the server to take more
   * calls): it was not sent, so sending it elsewhere is safe.
   */
  @SuppressWarnings("unchecked")
  void route(PendingCall<?> call, ClientSlot slot) {
    ClientConnection c = slot.current();
    if (c != null) {
      c.send(call);
      return;
    }
    Future<ClientConnection> attempt = slot.acquire();
    if (attempt.isDone()) {
      onConnection(call, attempt);
      return;
    }
    if (!call.armTimer(slot.loop())) {
      return; // the client's event loop is gone: the call has failed with UNAVAILABLE
    }
    attempt.addListener(f -> onConnection(call, (Future<ClientConnection>) f));
  }

  private void onConnection(PendingCall<?> call, Future<ClientConnection> f) {
    if (f.isSuccess()) {
      f.getNow().send(call);
      return;
    }
    call.releaseFrame();
    Throwable cause = f.cause();
    if (cause instanceof StatusException se) {
      call.fail(se.status());
    } else {
      call.fail(Status.UNAVAILABLE.withDescription("cannot connect to " + target + ": " + cause).withCause(cause));
    }
  }

  /** The {@code i}-th connection slot (tests). */
  ClientSlot slot(int i) {
    return slots[i];
  }

  private ClientSlot nextSlot() {
    if (slots.length == 1) {
      return slots[0];
    }
    int i = roundRobin++; // racy on purpose: any spread is fine, no contention
    return slots[Math.floorMod(i, slots.length)];
  }

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

  private void terminate() {
    if (!terminating.compareAndSet(false, true)) {
      return;
    }
    AtomicInteger remaining = new AtomicInteger(slots.length);
    for (ClientSlot s : slots) {
      s.close().addListener(f -> {
        if (remaining.decrementAndGet() == 0) {
          group.shutdownGracefully(0, 2, TimeUnit.SECONDS).addListener(g -> terminated.countDown());
        }
      });
    }
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
    return "NettyRpcClient{" + target + ", pending=" + pending.get() + ", slots="
        + java.util.Arrays.toString(slots) + "}";
  }
}
