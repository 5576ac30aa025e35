package demo.plain;

import io.petrel.rpc.RpcService;
import org.jspecify.annotations.NullMarked;

/** A package that is not null-marked, and a class that is: the interface inside it is null-marked. */
@NullMarked
public final class Outer {
  private Outer() {}

  @RpcService("demo.Inner")
  public interface Inner {
    void ping();
  }
}
