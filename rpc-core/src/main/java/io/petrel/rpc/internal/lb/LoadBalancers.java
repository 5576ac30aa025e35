package io.petrel.rpc.internal.lb;

import io.petrel.rpc.LoadBalancer;
import java.util.Locale;

/** The built-in load-balancing policies, by name. */
public final class LoadBalancers {
  public static final String ROUND_ROBIN = "round_robin";
  public static final String LEAST_PENDING = "least_pending";
  public static final String CONSISTENT_HASH = "consistent_hash";

  private LoadBalancers() {}

  public static final LoadBalancer.Factory ROUND_ROBIN_FACTORY = factory(ROUND_ROBIN);
  public static final LoadBalancer.Factory LEAST_PENDING_FACTORY = factory(LEAST_PENDING);
  public static final LoadBalancer.Factory CONSISTENT_HASH_FACTORY = factory(CONSISTENT_HASH);

  /** The built-in policy called {@code name}; throws naming the known ones. */
  public static LoadBalancer.Factory forName(String name) {
    return switch (name.toLowerCase(Locale.ROOT)) {
      case ROUND_ROBIN -> ROUND_ROBIN_FACTORY;
      case LEAST_PENDING -> LEAST_PENDING_FACTORY;
      case CONSISTENT_HASH -> CONSISTENT_HASH_FACTORY;
      default -> throw new IllegalArgumentException("unknown load balancer '" + name + "'; built in: "
          + ROUND_ROBIN + ", " + LEAST_PENDING + ", " + CONSISTENT_HASH + " (or give a LoadBalancer.Factory)");
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
        return switch (name) {
          case ROUND_ROBIN -> new RoundRobin();
          case CONSISTENT_HASH -> new ConsistentHash();
          default -> new LeastPending();
        };
      }

      @Override
      public String toString() {
        return name;
      }
    };
  }
}
