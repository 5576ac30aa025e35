package demo;

import com.google.protobuf.DescriptorProtos;
import io.petrel.rpc.RpcService;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * Nullness, as the stubs repeat it: JSpecify's {@code @Nullable} (a type annotation) on parameters, results and a
 * future's value, written on the type as here; a declaration annotation named {@code Nullable} on the parameter
 * and the method.
 */
@RpcService("demo.Directory")
public interface Directory {
  @Nullable String lookup(@Nullable String name, int limit);

  CompletableFuture<@Nullable String> lookupLater(String name);

  java.lang.@Nullable String first(List<String> names);

  @demo.decl.Nullable String alias(@demo.decl.Nullable String name);

  /** A primitive is never null: nothing to repeat. */
  int count(@Nullable Integer max);

  /**
   * On the brackets it says the array may be null; before {@code byte[]} it applies to the element type (as the
   * JLS reads it), and is repeated there, not moved onto the array.
   */
  byte @Nullable [] digest(byte @Nullable [] data, @Nullable byte[] salt);

  @Nullable byte[] raw(String key);

  CompletableFuture<@Nullable Void> forget(@Nullable String name);

  /** A nested type is annotated on its simple name; a message among several arguments may be null. */
  void register(String name, DescriptorProtos.@Nullable FileDescriptorProto file);
}
