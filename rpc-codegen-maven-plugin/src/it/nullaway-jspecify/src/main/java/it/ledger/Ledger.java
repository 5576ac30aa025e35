package it.ledger;

import com.google.protobuf.DescriptorProtos;
import io.petrel.rpc.RpcMethod;
import io.petrel.rpc.RpcService;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/** Every shape of nullness the generator repeats, in a null-marked package. */
@RpcService("it.Ledger")
public interface Ledger {
  @Nullable String lookup(@Nullable String name, int limit);

  CompletableFuture<@Nullable String> lookupLater(String name);

  CompletableFuture<String> require(String name);

  @Nullable Long balance(@Nullable String account);

  byte @Nullable [] digest(byte @Nullable [] data);

  List<String> names();

  Map<String, Long> totals(List<String> accounts);

  long withdraw(String account, long amount) throws OverdrawnException;

  void record(String name, long amount);

  CompletableFuture<Void> clear();

  CompletableFuture<@Nullable Void> forget(@Nullable String name);

  @RpcMethod(oneway = true)
  void note(String text);

  void register(String name, DescriptorProtos.@Nullable FileDescriptorProto file);

  DescriptorProtos.FileDescriptorProto describe(DescriptorProtos.FileDescriptorProto file);
}
