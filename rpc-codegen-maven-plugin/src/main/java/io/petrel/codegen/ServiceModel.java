package io.petrel.codegen;

import com.palantir.javapoet.ClassName;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

/**
 * One {@code @RpcService} interface, validated.
 *
 * @param iface the interface
 * @param serviceName the name on the wire
 * @param methods the remote methods in declaration order
 * @param deprecated the interface is {@code @Deprecated}: so are the generated types, which use it
 * @param forRemoval the interface is {@code @Deprecated(forRemoval = true)}: the generated types, which must use
 *     it, suppress the "removal" warnings that being deprecated themselves does not (JLS 9.6.4.6)
 * @param nullMarked JSpecify's {@code @NullMarked} applies to the interface (on it, a type around it, its package or
 *     its module): {@code FooAsync} says {@code CompletableFuture<@Nullable Void>}, as null is a Void's only value
 * @param shadowed simple names that mean, in the generated classes, a type of the user's other than the one of that
 *     name the generator writes: the interface's member types (the blocking stub implements it, so a member type
 *     {@code Nullable} hides an imported {@code org.jspecify.annotations.Nullable} there) and the package's types
 *     named like a java.lang type (a {@code Void} of the package hides {@code java.lang.Void}, never imported).
 *     The generated classes write those names qualified.
 * @param source the interface's source file, and {@code line} its declaration's line (for problems that involve
 *     two services)
 */
record ServiceModel(ClassName iface, String serviceName, List<MethodModel> methods, boolean deprecated,
    boolean forRemoval, boolean nullMarked, Set<String> shadowed, Path source, int line) {

  /** The file name of the interface's source (for the generated file's header). */
  String sourceFileName() {
    return source.getFileName().toString();
  }

  /** "path/Svc.java:12", where the interface is declared. */
  String where() {
    return source + ":" + line;
  }

  ClassName rpcClass() {
    return ClassName.get(iface.packageName(), iface.simpleName() + "Rpc");
  }

  ClassName asyncInterface() {
    return ClassName.get(iface.packageName(), iface.simpleName() + "Async");
  }

  boolean hasFutureMethods() {
    return methods.stream().anyMatch(MethodModel::returnsFuture);
  }

  boolean hasBlockingMethods() {
    return methods.stream().anyMatch(m -> !m.returnsFuture());
  }
}
