package io.petrel.spring.boot;

import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.stub.AbstractStub;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.lang.reflect.Proxy;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.util.ClassUtils;

/**
 * Finds what the context serves: every singleton bean that implements an {@code @RpcService} interface (bound with
 * the generated {@code FooRpc.bind}) or its generated {@code FooAsync} view ({@code FooRpc.bindAsync}), and every
 * {@link ServiceDefinition} bean as it is. Client stubs (which implement the interface too) are skipped, and so is
 * a bean with a {@link PetrelClient} field of the interface it implements (a decorator of the remote service).
 * A bean that is a JDK dynamic proxy (Spring AOP's interface proxies, a BeanPostProcessor's
 * {@link java.lang.reflect.Proxy}) is served through the proxy, and its fields are looked for on the class it
 * decorates ({@link #implementationClass}).
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
      Class<?> implementation = type;
      for (Class<?> iface : ClassUtils.getAllInterfacesForClassAsSet(type)) {
        Class<?> service = GeneratedCode.serviceInterface(iface);
        if (service == null) {
          continue;
        }
        if (bean == null && !callsOut(type, iface)) { // a decorator known by its declared type is not even made
          bean = beans.getBean(name);
          if (bean instanceof AbstractStub) {
            break; // a lazy stub bean, whose declared type was only the interface
          }
          // The class the bean is made of: the one a JDK proxy decorates, or a lazy bean's own class.
          implementation = implementationClass(beans, name, bean);
        }
        if (bean == null || callsOut(type, iface) || callsOut(implementation, iface)) {
          // A decorator or fallback of a remote service of that interface: the caller's side.
          log.info("bean '{}' implements {} and calls it through a @PetrelClient field: not served (declare"
              + " {}Rpc.bind(bean) as a ServiceDefinition bean to serve it)", name, iface.getName(),
              service.getName());
          continue;
        }
        // Bound to the bean itself, a proxy too: its decoration (a transaction, a log) runs on every call.
        add(found, owners, name, GeneratedCode.bind(iface, bean));
      }
    }
    return found;
  }

  /**
   * The class of what the bean {@code name} decorates when it is a JDK dynamic proxy, which has no fields of its
   * own: a Spring AOP proxy's (ultimate) target class, or, for a proxy a BeanPostProcessor made with
   * {@link java.lang.reflect.Proxy}, the class of the instance the context made before post-processing it (its
   * bean definition's target type). Otherwise, and when neither is known, the bean's own class.
   */
  static Class<?> implementationClass(ListableBeanFactory beans, String name, Object bean) {
    if (AopUtils.isAopProxy(bean)) {
      return AopProxyUtils.ultimateTargetClass(bean);
    }
    if (Proxy.isProxyClass(bean.getClass()) && beans instanceof ConfigurableListableBeanFactory factory) {
      try {
        if (factory.getMergedBeanDefinition(name) instanceof RootBeanDefinition definition) {
          Class<?> made = definition.getTargetType();
          if (made != null && !made.isInterface() && !Proxy.isProxyClass(made)) {
            return made;
          }
        }
      } catch (NoSuchBeanDefinitionException e) {
        // a singleton registered as an object, with no definition: only its own class is known
      }
    }
    return bean.getClass();
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
