package io.petrel.rpc;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/** Per-method options of an {@link RpcService} interface method. Optional: methods need no annotation. */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface RpcMethod {
  /** Fire and forget: the method must return void; no response frame is sent and no error reaches the caller. */
  boolean oneway() default false;

  /** The method may safely be run more than once for one logical call (a hint to retry policies). */
  boolean idempotent() default false;

  /**
   * The default deadline of calls to this method, in milliseconds, used when the call's options set none.
   * 0 means the client's default deadline.
   */
  long deadlineMillis() default 0;
}
