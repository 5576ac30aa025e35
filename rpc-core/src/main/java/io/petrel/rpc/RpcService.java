package io.petrel.rpc;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a Java interface as a Petrel service. The codegen plugin turns each annotated interface into a
 * client stub and a server dispatcher at build time.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface RpcService {
  /**
   * The service name on the wire (it feeds the numeric method ids), e.g. {@code "demo.Greeter"}. Empty means
   * the interface's fully qualified name. Renaming a service changes its method ids.
   */
  String value() default "";
}
