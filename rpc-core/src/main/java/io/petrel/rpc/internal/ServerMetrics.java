package io.petrel.rpc.internal;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.petrel.rpc.MethodDescriptor;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.ToDoubleFunction;

/**
 * The server's call meters, kept by the core whatever the transport (names in docs/observability.md): calls by
 * method and status, request and response sizes, calls refused by a full executor, the executor's gauges.
 * The transport keeps its own (bytes, connections, event loops).
 */
public final class ServerMetrics implements ServerRecorder {
  private final MeterRegistry registry;
  private final Tags tags;
  private final boolean histograms;
  private final Map<String, Counter> rejectedByService = new ConcurrentHashMap<>();
  /**
   * The meters bound to this server's objects (gauges, function counters), removed when it terminates: a server
   * started again under the same name in the same registry binds its own (Micrometer would otherwise hand back
   * the old ones, reading a server that is gone). Counters and timers stay: they go on counting.
   */
  private final List<Meter> bound = new CopyOnWriteArrayList<>();

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
    rejectedCounter(service).increment();
  }

  /**
   * Registers {@code rpc.server.executor.rejected} at 0 for each service, so that a dashboard or an alert on it
   * finds the meter before the first refusal (Prometheus shows no series for a meter never registered).
   */
  public void services(Iterable<String> names) {
    for (String name : names) {
      rejectedCounter(name);
    }
  }

  private Counter rejectedCounter(String service) {
    return rejectedByService.computeIfAbsent(service, s -> Counter.builder("rpc.server.executor.rejected")
        .description("Calls refused because the business executor was full").tags(tags).tag("service", s)
        .register(registry));
  }

  public <T> void gauge(String name, T obj, ToDoubleFunction<T> f) {
    bound.add(Gauge.builder(name, obj, f).tags(tags).register(registry));
  }

  /** The server has terminated: removes the meters bound to its objects (see {@link #bound}). */
  public void close() {
    for (Meter m : bound) {
      registry.remove(m);
    }
    bound.clear();
  }

  /**
   * The built-in pool's meters, with the names, units and descriptions of Micrometer's own executor binder
   * ({@code ExecutorServiceMetrics}) under the prefix {@code rpc.server}: {@code rpc.server.executor.active},
   * {@code .queued}, {@code .completed}, {@code .pool.size} / {@code .pool.core} / {@code .pool.max},
   * {@code .queue.remaining}, tagged with the server's tags and {@code name} = the pool's thread name prefix.
   */
  public void executor(BusinessPool pool, String poolName) {
    Tags t = tags.and("name", poolName);
    String p = "rpc.server.executor";
    bound.add(FunctionCounter.builder(p + ".completed", pool, BusinessPool::completedCount).tags(t).baseUnit("tasks")
        .description("The approximate total number of tasks that have completed execution").register(registry));
    bound.add(Gauge.builder(p + ".active", pool, BusinessPool::activeCount).tags(t).baseUnit("threads")
        .description("The approximate number of threads that are actively executing tasks").register(registry));
    bound.add(Gauge.builder(p + ".queued", pool, BusinessPool::queuedCount).tags(t).baseUnit("tasks")
        .description("The approximate number of tasks that are queued for execution").register(registry));
    bound.add(Gauge.builder(p + ".queue.remaining", pool, BusinessPool::queueRemaining).tags(t).baseUnit("tasks")
        .description("The number of additional elements that this queue can ideally accept without blocking")
        .register(registry));
    bound.add(Gauge.builder(p + ".pool.size", pool, BusinessPool::poolSize).tags(t).baseUnit("threads")
        .description("The current number of threads in the pool").register(registry));
    bound.add(Gauge.builder(p + ".pool.core", pool, BusinessPool::maxThreads).tags(t).baseUnit("threads")
        .description("The core number of threads for the pool").register(registry));
    bound.add(Gauge.builder(p + ".pool.max", pool, BusinessPool::maxThreads).tags(t).baseUnit("threads")
        .description("The maximum allowed number of threads in the pool").register(registry));
  }

  /** The virtual thread executor's meters: calls running now, calls run, and the limit (as the pool's names). */
  public void virtualThreads(VirtualThreadExecutor executor) {
    String p = "rpc.server.executor";
    bound.add(Gauge.builder(p + ".active", executor, VirtualThreadExecutor::active).tags(tags).register(registry));
    bound.add(FunctionCounter.builder(p + ".completed", executor, VirtualThreadExecutor::completed).tags(tags)
        .register(registry));
  }
}
