package demo.reason;

import java.lang.annotation.ElementType;
import java.lang.annotation.Target;

/** A declaration annotation with elements, one without a default: repeated with the values written. */
@Target({ElementType.PARAMETER, ElementType.METHOD})
public @interface Nullable {
  String value();

  String[] tags() default {};

  int level() default 0;
}
