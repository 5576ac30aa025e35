package io.petrel.codegen;

import com.palantir.javapoet.AnnotationSpec;
import com.palantir.javapoet.TypeName;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One remote method of a service.
 *
 * @param name the Java method name, also the method name on the wire
 * @param line where it is declared
 * @param id the numeric id, {@code MethodDescriptor.methodId(service, name)}
 * @param constant the UPPER_SNAKE form of the name, for the generated constants
 * @param params the parameters in order (argument i travels as protobuf field i + 1)
 * @param result the response type; for a method returning {@code CompletableFuture<T>}, T
 * @param returnsFuture the interface method returns {@code CompletableFuture<T>}
 * @param oneway {@code @RpcMethod(oneway = true)}
 * @param idempotent {@code @RpcMethod(idempotent = true)}
 * @param deadlineMillis {@code @RpcMethod(deadlineMillis = ...)}, 0 for none
 * @param exceptions the types in the method's {@code throws}, in order
 * @param deprecated the method's {@code @Deprecated}, copied onto the generated methods that stand for it; null
 *     when it has none
 * @param resultNullness the response may be null: the interface's {@code @Nullable} on the return type (or on the
 *     future's value type), copied onto the generated methods; null when it has none
 */
record MethodModel(
    String name,
    int line,
    int id,
    String constant,
    List<Param> params,
    ValueType result,
    boolean returnsFuture,
    boolean oneway,
    boolean idempotent,
    long deadlineMillis,
    List<Thrown> exceptions,
    @Nullable AnnotationSpec deprecated,
    @Nullable Nullness resultNullness) {

  /** A parameter; {@code nullness}: the interface's {@code @Nullable} on it, copied onto the generated methods. */
  record Param(String name, ValueType type, @Nullable Nullness nullness) {}

  /**
   * A {@code @Nullable} annotation as the interface writes it, copied where the generated code declares the same
   * parameter or result, so that NullAway, the Checker Framework and Kotlin see the stubs as they see the interface.
   *
   * @param annotation the annotation (JSpecify's, the Checker Framework's, JSR 305's, ...), with the values the
   *     interface gives its elements when they are literals
   * @param typeUse the annotation applies to types ({@code @Target(TYPE_USE)}), so it can also say it of a future's
   *     value type; otherwise it is a declaration annotation only
   * @param onDeclaration it is written on the parameter or method, as the interface writes it: a declaration
   *     annotation, one that is both (it then says both), or a type annotation before an array type, where it
   *     applies to the element type ({@code @Nullable byte[]}); otherwise on the type ({@code byte @Nullable []},
   *     {@code Outer.@Nullable Inner})
   */
  record Nullness(AnnotationSpec annotation, boolean typeUse, boolean onDeclaration) {}

  /**
   * A declared exception.
   *
   * @param type the type as the generated code names it
   * @param binaryName {@code Class.getName()} of the type, the form in which servers send it
   * @param constructible the generated stub can call its {@code (String)} constructor: a stub rethrows it
   */
  record Thrown(TypeName type, String binaryName, boolean constructible) {}

  /** The declared exceptions the stub rethrows as their own type. */
  List<Thrown> rethrown() {
    return exceptions.stream().filter(Thrown::constructible).toList();
  }

  /** A single protobuf message argument travels as the message's own bytes. */
  boolean singleMessageArgument() {
    return params.size() == 1 && params.get(0).type().isMessage();
  }
}
