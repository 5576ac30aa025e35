package io.petrel.sample.boot;

import io.petrel.rpc.RpcService;
import java.util.concurrent.CompletableFuture;

/** The sample's service. The build generates {@code GreeterRpc} and {@code GreeterAsync} from it. */
@RpcService("sample.Greeter")
public interface Greeter {
  String greet(String name);

  /** Greets through the Frontdesk service of the target {@code petrel.clients.frontdesk}: a call made while serving one. */
  String greetViaFrontdesk(String name);

  CompletableFuture<Integer> length(String text);
}
