package io.petrel.rpc.internal;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.jvm.ExecutorServiceMetrics;
import io.petrel.rpc.MethodDescriptor;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.function.ToDoubleFunction;

/**
 * The server's call meters, kept by the core whatever the transport (names in docs/observability.md): calls by
 * method and status, request and response sizes, calls refused by a full executor, the executor's gauges.
 * The transport keeps its own (bytes, connections, event loops).
 */
public final class ServerMetrics implements io.petrel.rpc.spi.ServerRecorder {
  private final MeterRegistry registry;
  private final Tags tags;
  private final boolean histograms;
  private final Map<String, Counter> rejectedByService = new ConcurrentHashMap<>();

  public ServerMetrics(MeterRegistry registry, Tags tags, boolean histograms) {
    this.registry = registry;
    this.tags = tags;
    this.histograms = histograms;
  }

  @Override
  public CallMetrics forMethod(MethodDescriptor<?, ?> m) {
    return new CallMetrics(registry, "server", tags, m, histograms);
  }

  @Override
  public void rejected(String service) {
    rejectedByService.computeIfAbsent(service, s -> Counter.builder("rpc.server.executor.rejected")
        .description("Calls refused because the business executor was full").tags(tags).tag("service", s)
        .register(registry)).increment();
  }

  public <T> void gauge(String name, T obj, ToDoubleFunction<T> f) {
    Gauge.builder(name, obj, f).tags(tags).register(registry);
  }

  /**
   * The built-in pool's meters, by Micrometer's own binder ({@link ExecutorServiceMetrics}) under the prefix
   * {@code rpc.server}: {@code rpc.server.executor.active}, {@code .queued}, {@code .completed},
   * {@code .pool.size} / {@code .pool.core} / {@code .pool.max}, {@code .queue.remaining}, tagged with the server's
   * tags and {@code name} = the pool's thread name prefix.
   */
  public void executor(ThreadPoolExecutor pool, String poolName) {
    new ExecutorServiceMetrics(pool, poolName, "rpc.server", tags).bindTo(registry);
  }

  /** The virtual thread executor's meters: calls running now, calls run, and the limit (as the pool's names). */
  public void virtualThreads(VirtualThreadExecutor executor) {
    String p = "rpc.server.executor";
    Gauge.builder(p + ".active", executor, VirtualThreadExecutor::active).tags(tags).register(registry);
    FunctionCounter.builder(p + ".completed", executor, VirtualThreadExecutor::completed).tags(tags)
        .register(registry);
  }
}
