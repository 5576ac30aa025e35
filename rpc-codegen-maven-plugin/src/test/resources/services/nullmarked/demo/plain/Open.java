package demo.plain;

import io.petrel.rpc.RpcService;

/** Not null-marked: CompletableFuture<Void> as before. */
@RpcService("demo.Open")
public interface Open {
  void ping();
}
