package io.petrel.examples.greeter;

import io.petrel.rpc.RpcMethod;
import io.petrel.rpc.RpcService;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The example service. The build turns it into {@code GreeterRpc} (descriptors, stubs, server binding) and
 * {@code GreeterAsync} (the same methods returning futures): see target/generated-sources/petrel.
 */
@RpcService("examples.Greeter")
public interface Greeter {
  /** Protobuf in, protobuf out: the request travels as HelloRequest's own bytes. */
  HelloReply sayHello(HelloRequest request);

  /** Scalars: sent as one protobuf message whose fields 1 and 2 are a and b. */
  int add(int a, int b);

  /** Fire and forget: the caller does not wait for the server. */
  @RpcMethod(oneway = true)
  void log(String line);

  /** Asynchronous on both sides: the server completes the future when the reply is ready. */
  CompletableFuture<HelloReply> sayHelloLater(HelloRequest request);

  /** Collections: a repeated string in, a map&lt;string, int32&gt; out. */
  Map<String, Integer> countWords(List<String> words);

  /** A declared exception reaches the caller as itself (the stub rebuilds it from its class name and message). */
  HelloReply greetVip(HelloRequest request) throws NotOnTheListException;
}
