package io.petrel.rpc.internal;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.spi.ClientConfig;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The part of a client that is the same whatever the transport, shared by {@link io.petrel.rpc.RpcClient} and
 * its calls ({@link io.petrel.rpc.spi.ClientCall}): the count of calls pending against {@code maxPendingCalls},
 * the shutdown and termination state, the callback executor, and the call meters ({@code rpc.client.calls},
 * sizes, {@code rpc.client.calls.pending}; names in docs/observability.md). One per client.
 */
public final class ClientRuntime {
  private final String name;
  private final String target;
  private final int maxPendingCalls;
  private final @Nullable Executor callbackExecutor;
  private final AtomicInteger pending = new AtomicInteger();
  private final AtomicBoolean terminating = new AtomicBoolean();
  private final CountDownLatch terminated = new CountDownLatch(1);
  private volatile boolean shutdown;
  private final @Nullable MeterRegistry registry;
  private final Tags tags;
  private final boolean histograms;
  private final Map<MethodDescriptor<?, ?>, CallMetrics> byMethod = new ConcurrentHashMap<>();
  /** Closes the transport's connections and calls back with a Runnable when all is released. */
  private @Nullable Consumer<Runnable> terminator;

  public ClientRuntime(ClientConfig config) {
    this.name = config.name();
    this.target = config.target();
    this.maxPendingCalls = config.maxPendingCalls();
    this.callbackExecutor = config.callbackExecutor();
    this.registry = config.meterRegistry();
    this.histograms = config.percentileHistograms();
    if (registry != null) {
      tags = Tags.of("client", name, "target", target);
      Gauge.builder("rpc.client.calls.pending", pending, AtomicInteger::get).description("Calls not yet ended")
          .tags(tags).register(registry);
    } else {
      tags = Tags.empty();
    }
  }

  /** Set once by the client: how to close its transport when the client terminates. */
  public void terminator(Consumer<Runnable> terminator) {
    this.terminator = terminator;
  }

  public String name() {
    return name;
  }

  public String target() {
    return target;
  }

  public int maxPendingCalls() {
    return maxPendingCalls;
  }

  /** Where futures complete when a call gives no executor of its own; null for the thread that ends the call. */
  public @Nullable Executor callbackExecutor() {
    return callbackExecutor;
  }

  /** The client-side meters of {@code method}; {@link CallMetrics#NOOP} without a registry. */
  public CallMetrics metricsFor(MethodDescriptor<?, ?> method) {
    MeterRegistry r = registry;
    if (r == null) {
      return CallMetrics.NOOP;
    }
    CallMetrics m = byMethod.get(method);
    if (m == null) {
      m = byMethod.computeIfAbsent(method, k -> new CallMetrics(r, "client", tags, k, histograms));
    }
    return m;
  }

  /** A call starts: counted until it ends. Returns the number pending, this one included. */
  public int callStarted() {
    return pending.incrementAndGet();
  }

  /** A call ended (exactly once per started call). */
  public void callEnded() {
    if (pending.decrementAndGet() == 0 && shutdown) {
      terminate();
    }
  }

  public int pendingCalls() {
    return pending.get();
  }

  public boolean isShutdown() {
    return shutdown;
  }

  /** No new calls; the transport is closed once the pending calls have ended. */
  public void shutdown() {
    shutdown = true;
    if (pending.get() == 0) {
      terminate();
    }
  }

  /** No new calls, and the transport is closed now (its calls in flight fail with UNAVAILABLE). */
  public void shutdownNow() {
    shutdown = true;
    terminate();
  }

  private void terminate() {
    if (!terminating.compareAndSet(false, true)) {
      return;
    }
    Consumer<Runnable> t = terminator;
    if (t == null) {
      terminated.countDown();
      return;
    }
    t.accept(terminated::countDown);
  }

  public boolean isTerminated() {
    return terminated.getCount() == 0;
  }

  public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    return terminated.await(timeout, unit);
  }
}
