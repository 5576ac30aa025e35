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
 * {@link ServiceDefinition} bean as it is. Client stubs (which implement the interface too) are skipped.
 */
final class PetrelServices {
  private PetrelServices() {
  }

  static List<ServiceDefinition> find(ListableBeanFactory beans) {
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
        if (GeneratedCode.serviceInterface(iface) != null) {
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
