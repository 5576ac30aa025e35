package io.petrel.spring.boot;

import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.stub.AbstractStub;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.util.ClassUtils;

/**
 * Finds what the context serves: every singleton bean that implements an {@code @RpcService} interface (bound with
 * the generated {@code FooRpc.bind}) or its generated {@code FooAsync} view ({@code FooRpc.bindAsync}), and every
 * {@link ServiceDefinition} bean as it is. Client stubs (which implement the interface too) are skipped, and so is
 * a bean with a {@link PetrelClient} field of the interface it implements (a decorator of the remote service).
 */
final class PetrelServices {
  private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(PetrelServices.class);

  private PetrelServices() {
  }

  /** What the context's beans cannot be served as (not a property's fault): said as it is, without a hint. */
  static final class ServingProblem extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    ServingProblem(RuntimeException cause) {
      super("the Petrel server cannot serve the context's beans: " + cause.getMessage(), cause);
    }
  }

  static List<ServiceDefinition> find(ListableBeanFactory beans) {
    try {
      return findOrThrow(beans);
    } catch (IllegalArgumentException | IllegalStateException e) {
      throw new ServingProblem(e);
    }
  }

  private static List<ServiceDefinition> findOrThrow(ListableBeanFactory beans) {
    Map<String, String> owners = new LinkedHashMap<>();
    List<ServiceDefinition> found = new ArrayList<>();
    for (String name : beans.getBeanNamesForType(Object.class, false, false)) {
      Class<?> type = beans.getType(name, false);
      if (type == null || AbstractStub.class.isAssignableFrom(type)) {
        continue;
      }
      if (ServiceDefinition.class.isAssignableFrom(type)) {
        add(found, owners, name, beans.getBean(name, ServiceDefinition.class));
        continue;
      }
      @Nullable Object bean = null;
      for (Class<?> iface : ClassUtils.getAllInterfacesForClassAsSet(type)) {
        Class<?> service = GeneratedCode.serviceInterface(iface);
        if (service != null) {
          if (callsOut(type, iface)) {
            // A decorator or fallback of a remote service of that interface: the caller's side.
            log.info("bean '{}' implements {} and calls it through a @PetrelClient field: not served (declare"
                + " {}Rpc.bind(bean) as a ServiceDefinition bean to serve it)", name, iface.getName(),
                service.getName());
            continue;
          }
          if (bean == null) {
            bean = beans.getBean(name);
            if (bean instanceof AbstractStub) {
              break; // a lazy stub bean, whose declared type was only the interface
            }
          }
          add(found, owners, name, GeneratedCode.bind(iface, bean));
        }
      }
    }
    return found;
  }

  /**
   * Whether {@code type} has a {@link PetrelClient} field of the service interface {@code iface} (or its
   * {@code FooAsync} view): a bean that calls that service remotely (a cache or a fallback in front of it)
   * implements the interface for its own callers, and serving it would start a server in an application that only
   * calls, on the port of the real one.
   */
  static boolean callsOut(Class<?> type, Class<?> iface) {
    for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
      for (java.lang.reflect.Field f : c.getDeclaredFields()) {
        if (f.isAnnotationPresent(PetrelClient.class)
            && GeneratedCode.serviceInterface(f.getType()) == GeneratedCode.serviceInterface(iface)) {
          return true;
        }
      }
    }
    return false;
  }

  private static void add(List<ServiceDefinition> found, Map<String, String> owners, String bean,
      ServiceDefinition service) {
    String other = owners.putIfAbsent(service.name(), bean);
    if (other != null) {
      throw new IllegalStateException("beans '" + other + "' and '" + bean + "' both serve " + service.name()
          + ": a server serves one implementation per service; keep one of them a bean (the other can be a plain"
          + " object it delegates to)");
    }
    found.add(service);
  }
}
