package javax.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;

/** As JSR 305's {@code javax.annotation.Nullable}: no {@code @Target}, so it applies to every declaration. */
@Documented
@Retention(RetentionPolicy.RUNTIME)
public @interface Nullable {}
