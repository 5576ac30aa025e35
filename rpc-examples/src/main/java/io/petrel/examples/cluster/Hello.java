package io.petrel.examples.cluster;

import io.petrel.rpc.RpcService;

/** The service the three servers of the cluster example run; each answers with its own name. */
@RpcService("cluster.Hello")
public interface Hello {
  String hello(String name);
}
