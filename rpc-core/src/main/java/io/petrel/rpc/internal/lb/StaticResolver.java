package io.petrel.rpc.internal.lb;

import io.petrel.rpc.Endpoint;
import io.petrel.rpc.NameResolver;
import java.util.List;

/** A fixed list of endpoints: {@code static://h1:7000,h2:7000;weight=2}, or one {@code host:port}. */
public final class StaticResolver implements NameResolver {
  private final List<Endpoint> endpoints;

  public StaticResolver(List<Endpoint> endpoints) {
    if (endpoints.isEmpty()) {
      throw new IllegalArgumentException("a static target needs at least one endpoint");
    }
    this.endpoints = List.copyOf(endpoints);
  }

  @Override
  public void start(Listener listener) {
    listener.onEndpoints(endpoints);
  }

  @Override
  public void shutdown() {}

  public List<Endpoint> endpoints() {
    return endpoints;
  }

  @Override
  public String toString() {
    return "static" + endpoints;
  }
}
