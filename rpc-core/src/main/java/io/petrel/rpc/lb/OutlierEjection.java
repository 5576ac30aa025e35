package io.petrel.rpc.lb;

import io.petrel.rpc.internal.lb.EjectingBalancer;
import io.petrel.rpc.internal.lb.LoadBalancers;
import io.petrel.rpc.LoadBalancer;
import java.time.Duration;
import java.util.Objects;

/**
 * Outlier ejection around a load-balancing policy: an endpoint whose calls keep failing leaves the policy's
 * choice for a while, then is probed with one call before it returns.
 *
 * <pre>{@code
 * RpcClient client = RpcClient.builder()
 *     .target("static://h1:7000,h2:7000,h3:7000")
 *     .loadBalancer(OutlierEjection.around("least_pending").consecutiveFailures(5).build())
 *     .build();
 * }</pre>
 *
 * An endpoint is ejected when {@link Builder#consecutiveFailures} calls in a row failed with UNAVAILABLE,
 * DEADLINE_EXCEEDED, INTERNAL or UNKNOWN (a failed connect counts as one), or when, over an
 * {@link Builder#interval} in which it ended at least {@link Builder#minCalls} calls, at least
 * {@link Builder#failureShare} of them failed and at least twice the share of the other endpoints' calls
 * (when every endpoint fails alike none is ejected for its share). It stays out for
 * {@link Builder#baseEjectionTime}, doubled at each ejection up to {@link Builder#maxEjectionTime}; then the next
 * call goes to it as a probe: if the probe succeeds the endpoint is back, if it fails it is ejected again for
 * longer. At most {@link Builder#maxEjectedShare} of the endpoints are out at once (one may always be, when
 * there are two or more). The application's errors and CANCELLED are answers, not failures. With a single
 * endpoint the client uses no balancer, so nothing is ejected.
 */
public final class OutlierEjection implements LoadBalancer.Factory {
  private final LoadBalancer.Factory policy;
  private final EjectingBalancer.Options options;

  private OutlierEjection(Builder b) {
    this.policy = b.policy;
    this.options = new EjectingBalancer.Options(b.consecutiveFailures, b.failureShare, b.minCalls,
        b.interval.toNanos(), b.baseEjectionTime.toNanos(), b.maxEjectionTime.toNanos(), b.maxEjectedShare);
  }

  /** Ejection around a built-in policy: {@code round_robin}, {@code least_pending} or {@code consistent_hash}. */
  public static Builder around(String policy) {
    return new Builder(LoadBalancers.forName(Objects.requireNonNull(policy, "policy")));
  }

  /** Ejection around a policy of your own. */
  public static Builder around(LoadBalancer.Factory policy) {
    return new Builder(Objects.requireNonNull(policy, "policy"));
  }

  @Override
  public String name() {
    return "outlier_ejection(" + policy.name() + ")";
  }

  @Override
  public LoadBalancer newLoadBalancer() {
    return new EjectingBalancer(policy.newLoadBalancer(), options, System::nanoTime);
  }

  @Override
  public String toString() {
    return name();
  }

  /** The thresholds of an {@link OutlierEjection}. */
  public static final class Builder {
    private final LoadBalancer.Factory policy;
    private int consecutiveFailures = 5;
    private double failureShare = 0.5;
    private int minCalls = 10;
    private Duration interval = Duration.ofSeconds(10);
    private Duration baseEjectionTime = Duration.ofSeconds(30);
    private Duration maxEjectionTime = Duration.ofMinutes(5);
    private double maxEjectedShare = 0.5;

    private Builder(LoadBalancer.Factory policy) {
      this.policy = policy;
    }

    /** Failed calls in a row that eject an endpoint (default 5, at least 1). */
    public Builder consecutiveFailures(int n) {
      if (n < 1) {
        throw new IllegalArgumentException("consecutiveFailures must be >= 1: " + n);
      }
      this.consecutiveFailures = n;
      return this;
    }

    /** The share of failed calls over an interval that ejects an endpoint (default 0.5; 0 &lt; share &lt;= 1). */
    public Builder failureShare(double share) {
      if (!(share > 0 && share <= 1)) {
        throw new IllegalArgumentException("failureShare must be in (0, 1]: " + share);
      }
      this.failureShare = share;
      return this;
    }

    /** The calls an endpoint must end in an interval for its failure share to count (default 10, at least 1). */
    public Builder minCalls(int n) {
      if (n < 1) {
        throw new IllegalArgumentException("minCalls must be >= 1: " + n);
      }
      this.minCalls = n;
      return this;
    }

    /** The interval over which failure shares are counted (default 10 s, at least 10 ms). */
    public Builder interval(Duration interval) {
      this.interval = atLeast10ms("interval", interval);
      return this;
    }

    /** How long a first ejection lasts (default 30 s, at least 10 ms); each next one doubles it. */
    public Builder baseEjectionTime(Duration time) {
      this.baseEjectionTime = atLeast10ms("baseEjectionTime", time);
      return this;
    }

    /** The longest ejection (default 5 min, at least 10 ms). */
    public Builder maxEjectionTime(Duration time) {
      this.maxEjectionTime = atLeast10ms("maxEjectionTime", time);
      return this;
    }

    /** The largest share of the endpoints ejected at once (default 0.5; 0 &lt; share &lt;= 1). */
    public Builder maxEjectedShare(double share) {
      if (!(share > 0 && share <= 1)) {
        throw new IllegalArgumentException("maxEjectedShare must be in (0, 1]: " + share);
      }
      this.maxEjectedShare = share;
      return this;
    }

    public OutlierEjection build() {
      if (maxEjectionTime.compareTo(baseEjectionTime) < 0) {
        throw new IllegalArgumentException("maxEjectionTime " + maxEjectionTime + " is less than baseEjectionTime "
            + baseEjectionTime);
      }
      return new OutlierEjection(this);
    }

    private static Duration atLeast10ms(String name, Duration d) {
      Objects.requireNonNull(d, name);
      if (d.toMillis() < 10) {
        throw new IllegalArgumentException(name + " must be at least 10 ms: " + d);
      }
      return d;
    }
  }
}
