package io.petrel.rpc.internal.lb;

import io.petrel.rpc.spi.LoadBalancer;
import java.util.Locale;

/** The built-in load-balancing policies, by name. */
public final class LoadBalancers {
  public static final String ROUND_ROBIN = "round_robin";
  public static final String LEAST_PENDING = "least_pending";

  private LoadBalancers() {}

  public static final LoadBalancer.Factory ROUND_ROBIN_FACTORY = factory(ROUND_ROBIN);
  public static final LoadBalancer.Factory LEAST_PENDING_FACTORY = factory(LEAST_PENDING);

  /** The built-in policy called {@code name}; throws naming the known ones. */
  public static LoadBalancer.Factory forName(String name) {
    return switch (name.toLowerCase(Locale.ROOT)) {
      case ROUND_ROBIN -> ROUND_ROBIN_FACTORY;
      case LEAST_PENDING -> LEAST_PENDING_FACTORY;
      default -> throw new IllegalArgumentException("unknown load balancer '" + name + "'; built in: "
          + ROUND_ROBIN + ", " + LEAST_PENDING + " (or give a LoadBalancer.Factory)");
    };
  }

  private static LoadBalancer.Factory factory(String name) {
    return new LoadBalancer.Factory() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public LoadBalancer newLoadBalancer() {
        return name.equals(ROUND_ROBIN) ? new RoundRobin() : new LeastPending();
      }

      @Override
      public String toString() {
        return name;
      }
    };
  }
}
