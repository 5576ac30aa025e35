package demo.marked;

import io.petrel.rpc.RpcMethod;
import io.petrel.rpc.RpcService;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/** In a @NullMarked package: every future of Void in LedgerAsync is CompletableFuture<@Nullable Void>. */
@RpcService("demo.Ledger")
public interface Ledger {
  void record(String name, long amount);

  @RpcMethod(oneway = true)
  void note(String text);

  /** The blocking stub implements this interface: it keeps CompletableFuture<Void> as written here. */
  CompletableFuture<Void> clear();

  CompletableFuture<@Nullable Void> forget(@Nullable String name);

  /** Other values are not touched: a String is not null unless the interface says so. */
  CompletableFuture<String> total(String name);

  String owner();
}
