package demo.both;

import java.lang.annotation.ElementType;
import java.lang.annotation.Target;

/** Both a declaration and a type annotation, as JetBrains' {@code org.jetbrains.annotations.Nullable}. */
@Target({ElementType.METHOD, ElementType.FIELD, ElementType.PARAMETER, ElementType.LOCAL_VARIABLE,
    ElementType.TYPE_USE})
public @interface Nullable {}
