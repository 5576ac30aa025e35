package io.petrel.spring.boot;

import io.petrel.rpc.RpcClient;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.util.ReflectionUtils;

/** Fills {@link PetrelClient} fields when a bean is made (once per bean, not per call). */
final class PetrelClientInjector implements BeanPostProcessor {
  private final ObjectProvider<PetrelClients> clients;

  PetrelClientInjector(ObjectProvider<PetrelClients> clients) {
    this.clients = clients;
  }

  @Override
  public Object postProcessBeforeInitialization(Object bean, String beanName) throws BeansException {
    ReflectionUtils.doWithFields(bean.getClass(), field -> inject(bean, beanName, field),
        field -> field.isAnnotationPresent(PetrelClient.class));
    return bean;
  }

  private void inject(Object bean, String beanName, Field field) {
    String name = field.getAnnotation(PetrelClient.class).value();
    if (Modifier.isStatic(field.getModifiers())) {
      throw new BeanCreationException(beanName, "@PetrelClient(\"" + name + "\") on static field " + field
          + ": stubs are injected into instance fields only");
    }
    try {
      PetrelClients all = clients.getObject();
      RpcClient client = all.client(name);
      Object value = field.getType() == RpcClient.class ? client : GeneratedCode.stub(field.getType(), client);
      ReflectionUtils.makeAccessible(field);
      ReflectionUtils.setField(field, bean, value);
    } catch (RuntimeException e) {
      throw new BeanCreationException(beanName, "cannot inject @PetrelClient(\"" + name + "\") into " + field
          + ": " + e.getMessage(), e);
    }
  }
}
