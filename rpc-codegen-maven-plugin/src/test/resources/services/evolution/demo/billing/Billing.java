package demo.billing;

import com.google.protobuf.NullValue;
import io.petrel.rpc.RpcService;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A service that has lived a while: declared exceptions (rethrown as their type when the stub can construct
 * them), deprecated methods, and a protoc-generated enum (NullValue) that travels by its number.
 */
@RpcService("demo.Billing")
public interface Billing {
  long charge(String account, long cents) throws CardDeclinedException, java.io.IOException;

  CompletableFuture<Long> chargeLater(String account, long cents) throws CardDeclinedException;

  /** No (String) constructor: reaches the caller as a StatusException. */
  void refund(String account) throws OpaqueException;

  /** Use {@link #charge}. */
  @Deprecated
  long debit(String account, long cents);

  @Deprecated(since = "2.0", forRemoval = true)
  void legacyPing();

  NullValue echo(NullValue value, List<NullValue> more);

  /** Parameters named as the stubs' own variables were once named: the generated code still compiles. */
  String note(String declared, int e, String index, String message) throws CardDeclinedException;

  CompletableFuture<String> noteLater(String index, String message, long e) throws CardDeclinedException;
}
