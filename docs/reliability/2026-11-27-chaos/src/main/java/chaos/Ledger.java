package chaos;

import io.petrel.rpc.RpcMethod;
import io.petrel.rpc.RpcService;

/** The chaos service: an idempotent read and a non-idempotent write, each answered with the server's name. */
@RpcService("chaos.Ledger")
public interface Ledger {
  @RpcMethod(idempotent = true)
  String read(String id);

  /** Not idempotent: each execution is appended to the server's ledger file. */
  String write(String id);
}
