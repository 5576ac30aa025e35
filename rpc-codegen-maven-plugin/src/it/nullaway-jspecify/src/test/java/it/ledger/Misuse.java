package it.ledger;

import io.petrel.rpc.RpcClient;
import org.jspecify.annotations.NullMarked;

/** Dereferences the @Nullable result of the generated stub without a check: NullAway must reject it. */
@NullMarked
final class Misuse {
  private Misuse() {}

  static int nameLength(RpcClient client) throws Exception {
    return LedgerRpc.stub(client).lookup("x", 1).length();
  }
}
