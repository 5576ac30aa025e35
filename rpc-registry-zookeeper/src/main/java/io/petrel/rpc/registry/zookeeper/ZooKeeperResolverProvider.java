package io.petrel.rpc.registry.zookeeper;

import io.petrel.rpc.NameResolver;
import io.petrel.rpc.NameResolverProvider;

/**
 * The {@code zk} scheme: {@code RpcClient.builder().target("zk://127.0.0.1:2181/petrel/demo.Greeter")} follows the
 * servers registered under {@code /petrel/demo.Greeter} of that ensemble ({@code zk://h1:2181,h2:2181/...} for
 * several), with a ZooKeeper session of its own and the registry's defaults. For other options, or to share one
 * session between clients, use {@link ZooKeeperRegistry#resolver} with
 * {@link io.petrel.rpc.RpcClientBuilder#nameResolver}.
 */
public final class ZooKeeperResolverProvider implements NameResolverProvider {
  @Override
  public String scheme() {
    return "zk";
  }

  @Override
  public NameResolver newResolver(String target) {
    int slash = target.indexOf('/');
    if (slash <= 0 || slash == target.length() - 1) {
      throw new IllegalArgumentException("bad zk target 'zk://" + target + "'; expected"
          + " zk://host:port[,host:port...]/path/service, e.g. zk://127.0.0.1:2181/petrel/demo.Greeter");
    }
    String connect = target.substring(0, slash);
    String path = ZooKeeperRegistry.checkPath("the path of zk://" + target, target.substring(slash));
    int last = path.lastIndexOf('/');
    String base = last == 0 ? "/" : path.substring(0, last);
    String service = path.substring(last + 1);
    ZooKeeperRegistry.checkTargetService(service);
    ZooKeeperRegistry registry = ZooKeeperRegistry.builder().connectString(connect).basePath(base).build();
    return new ZooKeeperResolver(registry.curator(), registry.servicePath(service), "zk://" + target,
        registry.connectionTimeout(), ZooKeeperRegistry.DEFAULT_REMOVAL_DELAY,
        ZooKeeperRegistry.DEFAULT_RECONNECT_SETTLE, registry, null);
  }
}
