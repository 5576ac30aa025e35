package demo.checker;

import static java.lang.annotation.ElementType.TYPE_PARAMETER;
import static java.lang.annotation.ElementType.TYPE_USE;

import java.lang.annotation.Target;

/** A type annotation declared as the Checker Framework's is. */
@Target({TYPE_USE, TYPE_PARAMETER})
public @interface Nullable {}
