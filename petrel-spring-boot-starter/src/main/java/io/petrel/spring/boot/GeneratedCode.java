package io.petrel.spring.boot;

import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcService;
import io.petrel.rpc.ServiceDefinition;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import org.jspecify.annotations.Nullable;

/**
 * Finds what the codegen plugin generated for a service interface ({@code FooRpc.bind}, {@code bindAsync},
 * {@code stub}, {@code asyncStub}) once, when the context starts. The handles are called once per bean or
 * injection point; the calls themselves then go through the generated stub and dispatcher, with no reflection.
 */
final class GeneratedCode {
  private GeneratedCode() {
  }

  /** {@code demo.Greeter} for {@code demo.Greeter} or {@code demo.GreeterAsync}, else null. */
  static @Nullable Class<?> serviceInterface(Class<?> type) {
    if (!type.isInterface()) {
      return null;
    }
    if (type.isAnnotationPresent(RpcService.class)) {
      return type;
    }
    String name = type.getName();
    if (name.endsWith("Async")) {
      Class<?> service = load(type, name.substring(0, name.length() - "Async".length()));
      if (service != null && service.isInterface() && service.isAnnotationPresent(RpcService.class)) {
        return service;
      }
    }
    return null;
  }

  /** {@code demo.GreeterRpc} for {@code demo.Greeter}, or an exception saying how to generate it. */
  static Class<?> rpcClass(Class<?> service) {
    String name = rpcClassName(service);
    Class<?> rpc = load(service, name);
    if (rpc == null) {
      throw new IllegalStateException(service.getName() + " is an @RpcService interface but " + name
          + " is not on the class path: run the rpc-codegen-maven-plugin's generate goal in the module that"
          + " declares " + service.getSimpleName() + " (docs/codegen.md)");
    }
    return rpc;
  }

  private static String rpcClassName(Class<?> service) {
    String pkg = service.getPackageName();
    return (pkg.isEmpty() ? "" : pkg + ".") + service.getSimpleName() + "Rpc";
  }

  /** {@code FooRpc.bind(impl)} for a {@code Foo}, {@code FooRpc.bindAsync(impl)} for a {@code FooAsync}. */
  static ServiceDefinition bind(Class<?> iface, Object impl) {
    Class<?> service = serviceInterface(iface);
    if (service == null) {
      throw new IllegalArgumentException(iface.getName() + " is neither an @RpcService interface nor its Async view");
    }
    String method = service == iface ? "bind" : "bindAsync";
    MethodHandle bind = find(rpcClass(service), method, MethodType.methodType(ServiceDefinition.class, iface));
    try {
      return (ServiceDefinition) bind.invoke(impl);
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Throwable e) {
      throw new IllegalStateException(method + " of " + service.getName() + " failed", e);
    }
  }

  /**
   * A client stub of {@code type} over {@code client}: {@code Foo} or {@code FooRpc.FooStub} give the blocking
   * stub, {@code FooAsync} or {@code FooRpc.FooAsyncStub} the asynchronous one.
   */
  static Object stub(Class<?> type, RpcClient client) {
    Class<?> service = serviceInterface(type);
    Class<?> enclosing = type.getEnclosingClass();
    if (service == null && enclosing != null && enclosing.getSimpleName().endsWith("Rpc")) {
      for (Class<?> i : type.getInterfaces()) {
        if (serviceInterface(i) != null) {
          return stub(i, client);
        }
      }
    }
    if (service == null) {
      throw new IllegalArgumentException(type.getName() + " is not a Petrel stub type: use the @RpcService"
          + " interface (blocking), its FooAsync view, or FooRpc.FooStub / FooRpc.FooAsyncStub");
    }
    boolean async = service != type;
    Class<?> rpc = rpcClass(service);
    String method = async ? "asyncStub" : "stub";
    MethodHandle factory;
    try {
      factory = MethodHandles.publicLookup().findStatic(rpc, method,
          MethodType.methodType(rpc.getMethod(method, RpcClient.class).getReturnType(), RpcClient.class));
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(rpc.getName() + "." + method + "(RpcClient) is missing: regenerate " + rpc.getName()
          + " with this version of rpc-codegen-maven-plugin", e);
    }
    try {
      return factory.invoke(client);
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Throwable e) {
      throw new IllegalStateException(method + " of " + rpc.getName() + " failed", e);
    }
  }

  private static MethodHandle find(Class<?> rpc, String method, MethodType type) {
    try {
      return MethodHandles.publicLookup().findStatic(rpc, method, type);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(rpc.getName() + "." + method + type + " is missing: regenerate "
          + rpc.getName() + " with this version of rpc-codegen-maven-plugin", e);
    }
  }

  private static @Nullable Class<?> load(Class<?> near, String name) {
    try {
      return Class.forName(name, false, near.getClassLoader());
    } catch (ClassNotFoundException e) {
      return null;
    }
  }
}
