package io.petrel.spring.boot.hello;

import io.petrel.rpc.RpcService;

/** A service interface of the starter's tests; {@link HelloRpc} stands in for the code the codegen plugin makes. */
@RpcService("test.Hello")
public interface Hello {
  String hello(String name);
}
