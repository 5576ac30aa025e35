package io.petrel.rpc.spi;

import io.petrel.rpc.Endpoint;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A transport's connections to one endpoint, as the core's {@link ClientEndpoints} keeps them: made when the
 * resolver names the endpoint, closed when it no longer does. The core counts the calls sent through it (when
 * the client has several endpoints), which is what a least-pending balancer compares; the transport says
 * whether it can take calls now ({@link #isAvailable()}) and owns its connections, reconnect backoff and health.
 */
public abstract class ClientSubchannel implements Subchannel {
  private volatile Endpoint endpoint;
  private final AtomicInteger pending = new AtomicInteger();

  protected ClientSubchannel(Endpoint endpoint) {
    this.endpoint = endpoint;
  }

  @Override
  public final Endpoint endpoint() {
    return endpoint;
  }

  /** The same address with new attributes (a weight), as the resolver said. */
  final void updateEndpoint(Endpoint e) {
    this.endpoint = e;
  }

  /** Calls sent through here and not yet ended; counted only when the client has several endpoints. */
  @Override
  public final int pendingCalls() {
    return pending.get();
  }

  final void callStarted() {
    pending.incrementAndGet();
  }

  final void callEnded() {
    pending.decrementAndGet();
  }

  /**
   * Closes every connection to the endpoint: calls still in flight there fail with UNAVAILABLE. Completes when
   * all are closed. Called once.
   */
  protected abstract CompletionStage<Void> close();

  /**
   * The endpoint is gone from the resolver's list: take no new call (calls not yet sent go to another endpoint),
   * let the calls in flight finish, and close each connection once it has none (by their deadlines at the
   * latest). Completes when all are closed. {@link #close()} may still follow (the client is shut down now).
   * The default closes at once.
   */
  protected CompletionStage<Void> drain() {
    return close();
  }
}
