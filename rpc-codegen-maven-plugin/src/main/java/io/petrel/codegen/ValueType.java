package io.petrel.codegen;

import com.palantir.javapoet.ClassName;
import com.palantir.javapoet.CodeBlock;
import com.palantir.javapoet.TypeName;
import org.jspecify.annotations.Nullable;

/**
 * A Java type that Petrel can carry, with the {@code FieldCodec} expression that encodes it as one protobuf
 * field.
 *
 * @param kind what sort of type it is
 * @param javaType the type as the interface declares it ({@code int}, {@code List<String>})
 * @param codec the codec expression, null for {@code void}
 * @param message the message class when {@code kind} is {@link Kind#MESSAGE}, else null
 */
record ValueType(Kind kind, TypeName javaType, @Nullable CodeBlock codec, @Nullable ClassName message) {

  enum Kind { VOID, PRIMITIVE, BOXED, STRING, BYTES, ENUM, MESSAGE, LIST, MAP }

  static final ValueType VOID = new ValueType(Kind.VOID, TypeName.VOID, null, null);

  /** The reference type: boxes primitives, {@code Void} for void. */
  TypeName boxed() {
    return kind == Kind.VOID ? ClassName.get(Void.class) : javaType.box();
  }

  boolean isMessage() {
    return kind == Kind.MESSAGE;
  }

  boolean isVoid() {
    return kind == Kind.VOID;
  }

  /** True when a cast from Object to this type is unchecked (a parameterized type). */
  boolean isGeneric() {
    return kind == Kind.LIST || kind == Kind.MAP;
  }
}
