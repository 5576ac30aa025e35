package io.petrel.rpc.internal;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.spi.OwnedMeters;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
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
  /** The meters bound to this server's objects (gauges, function counters), removed when it terminates. */
  private final OwnedMeters owned;

  public ServerMetrics(MeterRegistry registry, Tags tags, boolean histograms) {
    this.registry = registry;
    this.tags = tags;
    this.histograms = histograms;
    this.owned = new OwnedMeters(registry);
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

  public <T> void gauge(String name, String description, T obj, ToDoubleFunction<T> f) {
    owned.add(name, tags, () -> Gauge.builder(name, obj, f).description(description).tags(tags).register(registry));
  }

  /** The server has terminated: removes the meters bound to its objects (see {@link OwnedMeters}). */
  public void close() {
    owned.close();
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
    owned.add(p + ".completed", t, () -> FunctionCounter.builder(p + ".completed", pool,
        BusinessPool::completedCount).tags(t).baseUnit("tasks")
        .description("The approximate total number of tasks that have completed execution").register(registry));
    poolGauge(p + ".active", t, pool, BusinessPool::activeCount, "threads",
        "The approximate number of threads that are actively executing tasks");
    poolGauge(p + ".queued", t, pool, BusinessPool::queuedCount, "tasks",
        "The approximate number of tasks that are queued for execution");
    poolGauge(p + ".queue.remaining", t, pool, BusinessPool::queueRemaining, "tasks",
        "The number of additional elements that this queue can ideally accept without blocking");
    poolGauge(p + ".pool.size", t, pool, BusinessPool::poolSize, "threads",
        "The current number of threads in the pool");
    poolGauge(p + ".pool.core", t, pool, BusinessPool::maxThreads, "threads",
        "The core number of threads for the pool");
    poolGauge(p + ".pool.max", t, pool, BusinessPool::maxThreads, "threads",
        "The maximum allowed number of threads in the pool");
  }

  private void poolGauge(String name, Tags t, BusinessPool pool, ToDoubleFunction<BusinessPool> f, String unit,
      String description) {
    owned.add(name, t, () -> Gauge.builder(name, pool, f).tags(t).baseUnit(unit).description(description)
        .register(registry));
  }

  /** The virtual thread executor's meters: calls running now, calls run, and the limit (as the pool's names). */
  public void virtualThreads(VirtualThreadExecutor executor) {
    String p = "rpc.server.executor";
    owned.add(p + ".active", tags, () -> Gauge.builder(p + ".active", executor, VirtualThreadExecutor::active)
        .description("Calls running on virtual threads").tags(tags).register(registry));
    owned.add(p + ".completed", tags, () -> FunctionCounter.builder(p + ".completed", executor,
        VirtualThreadExecutor::completed).description("Calls run on virtual threads").tags(tags)
        .register(registry));
  }
}
