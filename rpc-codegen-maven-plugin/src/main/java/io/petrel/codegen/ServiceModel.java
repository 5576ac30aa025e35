package io.petrel.codegen;

import com.palantir.javapoet.ClassName;
import java.util.List;

/**
 * One {@code @RpcService} interface, validated.
 *
 * @param sourceFileName the file name of the interface's source (for the generated file's header)
 * @param iface the interface
 * @param serviceName the name on the wire
 * @param methods the remote methods in declaration order
 * @param deprecated the interface is {@code @Deprecated}: so are the generated types, which use it
 */
record ServiceModel(
    String sourceFileName, ClassName iface, String serviceName, List<MethodModel> methods, boolean deprecated) {

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
