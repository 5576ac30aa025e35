package io.petrel.rpc.spi;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Picks, for each call, the subchannel (one endpoint's connections) it goes to. The client tells it the current
 * subchannels whenever the endpoints change; {@link #pick()} runs on every call, on the caller's thread, so it
 * must be thread-safe and cheap (no lock, no allocation). Built-in policies: {@code round_robin} and
 * {@code least_pending} (power of two choices), both weighted by {@link io.petrel.rpc.Endpoint#weight()}.
 */
public interface LoadBalancer {

  /** The subchannel for the next call, or null when there is none (no endpoint resolved yet). */
  @Nullable Subchannel pick();

  /** The subchannels are now these (never empty); not called concurrently with itself. */
  void update(List<? extends Subchannel> subchannels);

  /** Makes load balancers of one policy; one per client. */
  interface Factory {
    /** The policy's name, e.g. "round_robin". */
    String name();

    LoadBalancer newLoadBalancer();
  }
}
