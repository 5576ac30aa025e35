package demo.marked;

import io.petrel.rpc.RpcService;
import org.jspecify.annotations.NullUnmarked;

/** @NullUnmarked inside the null-marked package: its async view says CompletableFuture<Void>, as before. */
@NullUnmarked
@RpcService("demo.Legacy")
public interface Legacy {
  void reset();
}
