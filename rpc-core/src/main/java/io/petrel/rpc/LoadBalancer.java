package io.petrel.rpc;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Picks, for each call, the subchannel (one endpoint's connections) it goes to, and hears how calls and
 * endpoints fare. The client tells it the current subchannels whenever the endpoints change; {@link #pick} runs
 * on every call, on the caller's thread, so it must be thread-safe and cheap (no lock, no allocation). Built-in
 * policies: {@code round_robin} and {@code least_pending} (power of two choices), both weighted by
 * {@link io.petrel.rpc.Endpoint#weight()}. With a single endpoint the client skips the balancer altogether: no
 * pick, no events.
 */
public interface LoadBalancer {

  /**
   * The call a pick is for. The core's call object is the argument itself, so picking allocates nothing; read
   * it during {@link #pick} only.
   */
  interface PickArgs {
    MethodDescriptor<?, ?> method();

    /** The metadata the call sends (after the interceptors). */
    Metadata metadata();

    /** The call's {@link io.petrel.rpc.CallOptions#withHashKey hash key}, or null. */
    @Nullable String hashKey();
  }

  /** The subchannel for {@code call}, or null when there is none (no endpoint resolved yet). */
  @Nullable Subchannel pick(PickArgs call);

  /**
   * Whether this balancer sends calls by their {@link PickArgs#hashKey() hash key}: then the core keeps a call
   * with a key on the endpoint picked for it while that endpoint connects or cannot be reached, as the balancer
   * would (a key's calls stay together), instead of moving it to another endpoint. The default is true, for a
   * balancer of your own that may read the key; the built-in {@code least_pending} and {@code round_robin} say
   * false, so a key set for another reason changes nothing under them.
   */
  default boolean readsHashKey() {
    return true;
  }

  /**
   * The subchannels are now these; empty when the resolver lists no endpoint (then {@link #pick} is not called
   * until they come back). Not called concurrently with itself.
   */
  void update(List<? extends Subchannel> subchannels);

  /**
   * An attempt of a call picked for {@code subchannel} ended: with {@code status} (OK, the server's error, or
   * what the client decided: DEADLINE_EXCEEDED, CANCELLED, UNAVAILABLE ...), {@code latencyNanos} after the call
   * started. Called on the thread that ended the call, for every call when the client has several endpoints:
   * keep it cheap. A call retried after a failed attempt reports each failed attempt for the endpoint it was
   * picked for; a hedged call reports each of its attempts, the ones that lost with CANCELLED (a call the client
   * moves to another endpoint before sending it is reported once, for the endpoint first picked). The default
   * does nothing.
   */
  default void onAttemptEnded(Subchannel subchannel, Status status, long latencyNanos) {}

  /**
   * {@code subchannel}'s state changed ({@link Subchannel#state()}), with the failure that caused
   * {@code BACKING_OFF}, else null. Called on a transport thread; keep it short. States that follow each other
   * faster than they are reported may be reported as the last one only (a refused connect can go from IDLE to
   * BACKING_OFF), and {@link Subchannel#state()} is always the current one. The default does nothing
   * (the built-in balancers read {@link Subchannel#isAvailable()} at each pick instead).
   */
  default void onStateChange(Subchannel subchannel, ConnectivityState state, @Nullable Status cause) {}

  /** Makes load balancers of one policy; one per client. */
  interface Factory {
    /** The policy's name, e.g. "round_robin". */
    String name();

    LoadBalancer newLoadBalancer();
  }
}
