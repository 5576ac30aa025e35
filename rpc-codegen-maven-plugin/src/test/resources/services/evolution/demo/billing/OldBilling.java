package demo.billing;

import io.petrel.rpc.RpcService;
import java.util.concurrent.CompletableFuture;

/**
 * A whole service deprecated for removal: its generated types must name it, and still compile without a
 * warning under -Xlint:all -Werror.
 */
@Deprecated(since = "2.0", forRemoval = true)
@RpcService("demo.OldBilling")
public interface OldBilling {
  long balance(String account) throws CardDeclinedException;

  CompletableFuture<Long> balanceLater(String account);
}
