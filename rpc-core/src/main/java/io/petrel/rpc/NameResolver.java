package io.petrel.rpc;

import java.util.List;

/**
 * Turns a client's target into the endpoints to call, now and as they change: a static list, DNS, a registry
 * such as ZooKeeper. The client starts it once and is told of every change; its load balancer then spreads the
 * calls over the endpoints. Made by a {@link NameResolverProvider} for the target's scheme.
 */
public interface NameResolver {

  /** Begins resolving; the listener gets the first list (or an error) soon after, from any thread. */
  void start(Listener listener);

  /**
   * A hint that the endpoints may have changed: the client lost a connection, or failed to connect to an
   * endpoint. A resolver that polls can look again now (rate-limiting itself); one that is told of changes
   * (a registry watch) can ignore it, which the default does. Called from a transport thread: do not block.
   */
  default void refresh() {}

  /** Stops resolving and releases what it holds; the listener is not called afterwards. */
  void shutdown();

  /** What a resolver tells its client. Calls are never concurrent with each other. */
  interface Listener {
    /**
     * The full current list of endpoints; replaces the previous one. An empty list means the name has no
     * endpoint now (a registry with no server registered): the client drops the ones it had (their calls in
     * flight finish) and fails new calls with UNAVAILABLE "... its resolver lists no endpoint" until a list
     * comes with some.
     */
    void onEndpoints(List<Endpoint> endpoints);

    /**
     * Resolution failed (the registry is unreachable, the name unknown): unlike an empty list, this says
     * nothing about the endpoints, so the client keeps the ones it had; if it has none, its calls fail with
     * this status.
     */
    void onError(Status error);
  }
}
