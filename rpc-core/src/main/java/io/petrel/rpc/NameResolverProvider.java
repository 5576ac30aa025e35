package io.petrel.rpc;

/**
 * Makes {@link NameResolver}s for one target scheme, e.g. {@code zookeeper} for
 * {@code RpcClient.builder().target("zookeeper://zk1:2181/services/orders")}. Found with
 * {@link java.util.ServiceLoader} through {@code META-INF/services/io.petrel.rpc.NameResolverProvider}; the
 * {@code static} scheme is built in.
 */
public interface NameResolverProvider {
  /** The scheme it serves, lower case, without "://". */
  String scheme();

  /**
   * A resolver for {@code target} (the part after "scheme://").
   *
   * @throws IllegalArgumentException naming what is wrong with the target
   */
  NameResolver newResolver(String target);
}
