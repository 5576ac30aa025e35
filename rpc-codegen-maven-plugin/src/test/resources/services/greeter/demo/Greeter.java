package demo;

import com.google.protobuf.StringValue;
import io.petrel.rpc.RpcMethod;
import io.petrel.rpc.RpcService;
import java.util.concurrent.CompletableFuture;

/** The example of the design notes: protobuf, scalars, oneway and async. */
@RpcService("demo.Greeter")
public interface Greeter {
  StringValue sayHello(StringValue request);

  int add(int a, int b);

  @RpcMethod(oneway = true)
  void log(String line);

  CompletableFuture<StringValue> sayHelloAsync(StringValue request);

  void reset() throws java.io.IOException;
}
