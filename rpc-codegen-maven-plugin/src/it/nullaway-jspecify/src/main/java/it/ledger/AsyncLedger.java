package it.ledger;

import com.google.protobuf.DescriptorProtos;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/** Implements the generated async view: a future of Void completes with null, its only value. */
final class AsyncLedger implements LedgerAsync {
  private final Map<String, Long> balances = new HashMap<>();

  @Override
  public CompletableFuture<@Nullable String> lookup(@Nullable String name, int limit) {
    return CompletableFuture.completedFuture(name);
  }

  @Override
  public CompletableFuture<@Nullable String> lookupLater(String name) {
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public CompletableFuture<String> require(String name) {
    return CompletableFuture.completedFuture(name);
  }

  @Override
  public CompletableFuture<@Nullable Long> balance(@Nullable String account) {
    return CompletableFuture.completedFuture(account == null ? null : balances.get(account));
  }

  @Override
  public CompletableFuture<byte @Nullable []> digest(byte @Nullable [] data) {
    return CompletableFuture.completedFuture(data);
  }

  @Override
  public CompletableFuture<List<String>> names() {
    return CompletableFuture.completedFuture(List.copyOf(balances.keySet()));
  }

  @Override
  public CompletableFuture<Map<String, Long>> totals(List<String> accounts) {
    return CompletableFuture.completedFuture(Map.copyOf(balances));
  }

  @Override
  public CompletableFuture<Long> withdraw(String account, long amount) {
    Long current = balances.get(account);
    long left = (current == null ? 0 : current) - amount;
    balances.put(account, left);
    return CompletableFuture.completedFuture(left);
  }

  @Override
  public CompletableFuture<@Nullable Void> record(String name, long amount) {
    balances.merge(name, amount, Long::sum);
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public CompletableFuture<@Nullable Void> clear() {
    balances.clear();
    CompletableFuture<@Nullable Void> done = new CompletableFuture<>();
    done.complete(null);
    return done;
  }

  @Override
  public CompletableFuture<@Nullable Void> forget(@Nullable String name) {
    if (name != null) {
      balances.remove(name);
    }
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public CompletableFuture<@Nullable Void> note(String text) {
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public CompletableFuture<@Nullable Void> register(String name,
      DescriptorProtos.@Nullable FileDescriptorProto file) {
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public CompletableFuture<DescriptorProtos.FileDescriptorProto> describe(DescriptorProtos.FileDescriptorProto file) {
    return CompletableFuture.completedFuture(file);
  }
}
