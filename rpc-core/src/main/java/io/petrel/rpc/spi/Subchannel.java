package io.petrel.rpc.spi;

import io.petrel.rpc.Endpoint;

/**
 * A client's connections to one endpoint, as a {@link LoadBalancer} sees them: the transport owns the
 * connections, their reconnect backoff and their health.
 */
public interface Subchannel {
  Endpoint endpoint();

  /** Calls sent through this subchannel and not yet ended: the load a least-pending balancer compares. */
  int pendingCalls();

  /**
   * False while the subchannel backs off after failing to connect: a call sent there would fail at once, so a
   * balancer sends it elsewhere when it can.
   */
  boolean isAvailable();
}
