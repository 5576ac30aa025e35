package io.petrel.rpc.internal;

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.Status;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The call meters of one method on one server or client: a timer per status (created on first use, then a
 * plain array read per call) and request/response size distributions. {@link #NOOP} records nothing.
 */
public class CallMetrics implements CallRecorder {
  /** Records nothing: used when no registry was given. */
  public static final CallMetrics NOOP = new CallMetrics();

  // Null in NOOP only.
  private final @Nullable MeterRegistry registry;
  private final String prefix;
  private final Tags tags;
  private final boolean histograms;
  private final Timer @Nullable [] timers;
  private final @Nullable DistributionSummary requestSize;
  private final @Nullable DistributionSummary responseSize;

  private CallMetrics() {
    registry = null;
    prefix = "";
    tags = Tags.empty();
    histograms = false;
    timers = null;
    requestSize = null;
    responseSize = null;
  }

  /**
   * @param side "server" or "client": meters are {@code rpc.<side>.calls}, {@code rpc.<side>.request.size},
   *     {@code rpc.<side>.response.size}
   */
  public CallMetrics(MeterRegistry registry, String side, Tags base, MethodDescriptor<?, ?> method,
      boolean histograms) {
    this.registry = registry;
    this.prefix = "rpc." + side;
    this.tags = base.and("service", method.serviceName(), "method", method.methodName());
    this.histograms = histograms;
    this.timers = new Timer[Status.Code.values().length];
    this.requestSize = DistributionSummary.builder(prefix + ".request.size").baseUnit("bytes")
        .description("Request body size").tags(tags).register(registry);
    this.responseSize = DistributionSummary.builder(prefix + ".response.size").baseUnit("bytes")
        .description("Response body size").tags(tags).register(registry);
  }

  /** Records one ended call. Sizes below 0 are not recorded (unknown, or no response). */
  @Override
  public void record(Status.Code code, long nanos, int requestBytes, int responseBytes) {
    MeterRegistry registry = this.registry;
    Timer[] timers = this.timers;
    DistributionSummary requestSize = this.requestSize;
    DistributionSummary responseSize = this.responseSize;
    if (registry == null || timers == null || requestSize == null || responseSize == null) {
      return; // NOOP
    }
    Timer t = timers[code.ordinal()];
    if (t == null) {
      t = Timer.builder(prefix + ".calls").description("Calls, by status")
          .tags(tags).tag("status", code.name()).publishPercentileHistogram(histograms).register(registry);
      timers[code.ordinal()] = t; // benign race: registration is idempotent
    }
    t.record(nanos, TimeUnit.NANOSECONDS);
    if (requestBytes >= 0) {
      requestSize.record(requestBytes);
    }
    if (responseBytes >= 0) {
      responseSize.record(responseBytes);
    }
  }
}
