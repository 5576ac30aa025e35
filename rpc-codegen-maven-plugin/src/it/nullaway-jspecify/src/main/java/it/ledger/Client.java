package it.ledger;

import io.petrel.rpc.RpcClient;
import io.petrel.rpc.ServiceDefinition;
import org.jspecify.annotations.Nullable;

/** Uses the generated stubs and bindings as an application does, checking what may be null. */
final class Client {
  private Client() {}

  static int nameLength(RpcClient client, @Nullable String name) throws Exception {
    LedgerRpc.LedgerStub stub = LedgerRpc.stub(client);
    String found = stub.lookup(name, 1);
    return found == null ? 0 : found.length();
  }

  static long balance(RpcClient client) throws Exception {
    Long balance = LedgerRpc.asyncStub(client).balance(null).get();
    return balance == null ? 0 : balance;
  }

  static ServiceDefinition serve() {
    return LedgerRpc.bindAsync(new AsyncLedger());
  }
}
