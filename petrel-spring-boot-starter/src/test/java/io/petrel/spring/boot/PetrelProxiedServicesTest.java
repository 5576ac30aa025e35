package io.petrel.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.petrel.rpc.RpcClient;
import io.petrel.spring.boot.hello.Hello;
import io.petrel.spring.boot.hello.HelloRpc;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import org.aopalliance.intercept.MethodInterceptor;
import org.junit.jupiter.api.Test;
import org.springframework.aop.framework.autoproxy.BeanNameAutoProxyCreator;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Service beans the context holds as JDK dynamic proxies (a BeanPostProcessor's {@link Proxy}, Spring AOP with
 * interface proxies): served through the proxy, so that its decoration runs on every call, and a decorator of a
 * remote service behind such a proxy is still recognised by its {@link PetrelClient} field and not served.
 */
class PetrelProxiedServicesTest {
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(PetrelAutoConfiguration.class))
      .withPropertyValues("petrel.server.port=0", "petrel.server.address=127.0.0.1");

  static class HelloService implements Hello {
    @Override
    public String hello(String name) {
      return "hello, " + name;
    }
  }

  /** A cache in front of the remote Hello: the caller's side, never served. */
  static class HelloCache implements Hello {
    @PetrelClient("hello")
    Hello remote;

    @Override
    public String hello(String name) {
      return remote.hello(name);
    }
  }

  /** Wraps every Hello bean in a plain {@link Proxy} that marks what it returns (a logging decorator, say). */
  static final class Wrapping implements BeanPostProcessor {
    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
      if (!(bean instanceof Hello)) {
        return bean;
      }
      return Proxy.newProxyInstance(Hello.class.getClassLoader(), new Class<?>[] {Hello.class}, (proxy, m, args) -> {
        Object result;
        try {
          result = m.invoke(bean, args);
        } catch (InvocationTargetException e) {
          throw e.getCause();
        }
        return m.getDeclaringClass() == Object.class ? result : "[logged] " + result;
      });
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class PlainProxy {
    @Bean
    static Wrapping wrapping() {
      return new Wrapping();
    }
  }

  /** Spring AOP as an application uses it: an auto-proxy creator with interface (JDK) proxies and an advice. */
  @Configuration(proxyBeanMethods = false)
  static class AopProxy {
    @Bean
    static BeanNameAutoProxyCreator helloProxies() {
      BeanNameAutoProxyCreator creator = new BeanNameAutoProxyCreator();
      creator.setBeanNames("hello*");
      creator.setInterceptorNames("advice");
      creator.setProxyTargetClass(false);
      return creator;
    }

    @Bean
    MethodInterceptor advice() {
      return invocation -> "<advised " + invocation.proceed() + ">";
    }
  }

  private static String callHello(int port, String name) {
    try (RpcClient client = RpcClient.builder().address("127.0.0.1", port).build()) {
      return HelloRpc.stub(client).hello(name);
    }
  }

  @Test
  void aServiceBeanWrappedInAPlainJdkProxyIsServedThroughTheProxy() {
    runner.withUserConfiguration(PlainProxy.class).withBean("helloService", HelloService.class).run(context -> {
      assertThat(context).hasNotFailed();
      assertThat(Proxy.isProxyClass(context.getBean("helloService").getClass())).isTrue();
      assertThat(callHello(context.getBean(PetrelServerLifecycle.class).port(), "ann"))
          .isEqualTo("[logged] hello, ann");
    });
  }

  @Test
  void aServiceBeanBehindASpringAopInterfaceProxyIsServedWithItsAdvice() {
    runner.withUserConfiguration(AopProxy.class).withBean("helloService", HelloService.class).run(context -> {
      assertThat(context).hasNotFailed();
      assertThat(AopUtils.isJdkDynamicProxy(context.getBean("helloService"))).isTrue();
      assertThat(callHello(context.getBean(PetrelServerLifecycle.class).port(), "bob"))
          .isEqualTo("<advised hello, bob>");
    });
  }

  @Test
  void aDecoratorBehindASpringAopInterfaceProxyIsNotServed() {
    runner.withUserConfiguration(AopProxy.class).withBean("helloCache", HelloCache.class)
        .withPropertyValues("petrel.clients.hello.target=127.0.0.1:1").run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(AopUtils.isJdkDynamicProxy(context.getBean("helloCache"))).isTrue();
          assertThat(context.getBean(PetrelServerLifecycle.class).hasNoServices()).isTrue();
        });
  }

  @Test
  void aDecoratorWrappedInAPlainJdkProxyIsNotServed() {
    runner.withUserConfiguration(PlainProxy.class).withBean("helloCache", HelloCache.class)
        .withPropertyValues("petrel.clients.hello.target=127.0.0.1:1").run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(Proxy.isProxyClass(context.getBean("helloCache").getClass())).isTrue();
          assertThat(context.getBean(PetrelServerLifecycle.class).hasNoServices()).isTrue();
        });
  }
}
