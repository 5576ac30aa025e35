package io.petrel.rpc;

import org.jspecify.annotations.Nullable;

/**
 * A client's connections to one endpoint, as a {@link LoadBalancer} sees them: the transport owns the
 * connections, their reconnect backoff and their health, and reports their {@link #state()}.
 */
public interface Subchannel {
  /** The endpoint, with the weight and attributes its resolver gave last. */
  Endpoint endpoint();

  /** Calls sent through this subchannel and not yet ended: the load a least-pending balancer compares. */
  int pendingCalls();

  /**
   * False while the subchannel backs off after failing to connect, or while a connect attempt is under way and it
   * has no usable connection: a call sent there would wait for a connection or fail, so a balancer sends it
   * elsewhere when it can.
   */
  boolean isAvailable();

  /**
   * True for a short pause after the endpoint's server refused a call for a limit (its business pool full): 10 ms,
   * doubling while it goes on refusing, up to 1 s. Such a server answers at once, so by calls pending it looks
   * the least loaded; a balancer should prefer an endpoint that is available and not refusing, then one that is
   * available. It says nothing about the connection: {@link #isAvailable()} may still be true.
   */
  default boolean isRefusing() {
    return false;
  }

  /** The connections' state now; {@code READY} when the transport does not say. */
  default ConnectivityState state() {
    return ConnectivityState.READY;
  }

  /** Why the subchannel is {@code BACKING_OFF} (the last attempt's failure), or null. */
  default @Nullable Status stateCause() {
    return null;
  }
}
