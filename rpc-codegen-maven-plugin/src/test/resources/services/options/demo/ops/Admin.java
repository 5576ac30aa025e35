package demo.ops;

import io.petrel.rpc.RpcMethod;
import io.petrel.rpc.RpcService;
import java.util.concurrent.CompletableFuture;

public final class Admin {
  private Admin() {}

  /** A nested service with the default name (the interface's canonical name) and per-method options. */
  @RpcService
  public interface Health {
    @RpcMethod(idempotent = true, deadlineMillis = 250)
    boolean ping();

    @RpcMethod(oneway = true)
    void shutdown(long delayMillis);

    CompletableFuture<Void> drain();

    static Health local() {
      return null;
    }

    default String describe() {
      return "health";
    }
  }
}
