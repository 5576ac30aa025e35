package io.petrel.rpc.spi;

import io.petrel.rpc.Endpoint;
import io.petrel.rpc.Status;
import java.util.List;

/**
 * Turns a client's target into the endpoints to call, now and as they change: a static list, DNS, a registry
 * such as ZooKeeper. The client starts it once and is told of every change; its load balancer then spreads the
 * calls over the endpoints. Made by a {@link NameResolverProvider} for the target's scheme.
 */
public interface NameResolver {

  /** Begins resolving; the listener gets the first list (or an error) soon after, from any thread. */
  void start(Listener listener);

  /** Stops resolving and releases what it holds; the listener is not called afterwards. */
  void shutdown();

  /** What a resolver tells its client. Calls are never concurrent with each other. */
  interface Listener {
    /** The full current list of endpoints, never empty; replaces the previous one. */
    void onEndpoints(List<Endpoint> endpoints);

    /**
     * Resolution failed (the registry is unreachable, the name unknown): the client keeps the endpoints it had;
     * if it has none, its calls fail with this status.
     */
    void onError(Status error);
  }
}
