/**
 * Service discovery on ZooKeeper, through Apache Curator. A server registers each of its services as an
 * ephemeral node while it serves ({@link io.petrel.rpc.registry.zookeeper.ZooKeeperRegistrar}, a server lifecycle
 * listener); a client follows those nodes ({@code RpcClient.builder().target("zk://zk1:2181/petrel/demo.Greeter")},
 * or {@link io.petrel.rpc.registry.zookeeper.ZooKeeperRegistry#resolver}). The node layout is in docs/cluster.md.
 */
@NullMarked
package io.petrel.rpc.registry.zookeeper;

import org.jspecify.annotations.NullMarked;
