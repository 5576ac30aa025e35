package io.petrel.examples.start;

import io.petrel.examples.greeter.HelloReply;
import io.petrel.examples.greeter.HelloRequest;
import io.petrel.rpc.RpcMethod;
import io.petrel.rpc.RpcService;

@RpcService("demo.Greeter")
public interface Greeter {
  HelloReply sayHello(HelloRequest request);

  int add(int a, int b);

  @RpcMethod(oneway = true)
  void log(String line);
}
