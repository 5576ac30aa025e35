package demo;

import io.petrel.rpc.RpcMethod;
import io.petrel.rpc.RpcService;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/** Other annotations named {@code Nullable}, on a oneway and a deprecated method too. */
@RpcService("demo.Registry")
public interface Registry {
  /** JSR 305's kind (no {@code @Target}: every declaration): on the parameter and the method, none in FooAsync. */
  @javax.annotation.Nullable String owner(@javax.annotation.Nullable String name);

  /** Both a declaration and a type annotation (as JetBrains' is): where the interface writes it. */
  @demo.both.Nullable String label(@demo.both.Nullable String key, @demo.both.Nullable Integer size);

  /** The Checker Framework's kind (TYPE_USE and TYPE_PARAMETER), declared in the module's sources. */
  CompletableFuture<@demo.checker.Nullable String> find(@demo.checker.Nullable Integer id);

  @RpcMethod(oneway = true)
  void note(@javax.annotation.Nullable String text, @Nullable Integer level);

  @Deprecated
  @Nullable String legacy(@Nullable String name);

  /** The values of its elements are repeated when they are literals (LEVEL is left out, to its default). */
  @demo.reason.Nullable(value = "no \"reason\" given", tags = {"a", "b"}, level = Registry.LEVEL)
  String reason(@demo.reason.Nullable("none") String key);

  int LEVEL = 2;
}
