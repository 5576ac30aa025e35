package io.petrel.spring.boot.unbuilt;

import io.petrel.rpc.RpcService;

/** A service interface the codegen plugin never saw: there is no UnbuiltRpc. */
@RpcService("test.Unbuilt")
public interface Unbuilt {
  String hello(String name);
}
