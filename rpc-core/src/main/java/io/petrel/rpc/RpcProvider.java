package io.petrel.rpc;

import java.util.ServiceLoader;

/**
 * Where the API finds its implementation: {@link RpcClient#builder()} and {@link RpcServer#builder()} return the
 * builders of the provider found with {@link ServiceLoader} ({@code META-INF/services/io.petrel.rpc.RpcProvider}),
 * rpc-core's own, as grpc-java's API finds its channel and server builders through {@code ManagedChannelProvider}
 * and {@code ServerProvider}. So the API names no class of the core's runtime, which implements it. Not for users:
 * rpc-core has the one implementation.
 */
public abstract class RpcProvider {
  protected RpcProvider() {}

  /** A new client builder, with every option at its default. */
  protected abstract RpcClientBuilder newClientBuilder();

  /** A new server builder, with every option at its default. */
  protected abstract RpcServerBuilder newServerBuilder();

  static RpcProvider get() {
    return Holder.INSTANCE;
  }

  /** Loaded once, at the first builder. */
  private static final class Holder {
    static final RpcProvider INSTANCE = load();

    private static RpcProvider load() {
      for (RpcProvider p : ServiceLoader.load(RpcProvider.class, RpcProvider.class.getClassLoader())) {
        return p;
      }
      throw new IllegalStateException("no implementation of the Petrel API found: rpc-core's"
          + " META-INF/services/io.petrel.rpc.RpcProvider is missing from the class path (a repackaged jar that"
          + " dropped its service files?)");
    }
  }
}
