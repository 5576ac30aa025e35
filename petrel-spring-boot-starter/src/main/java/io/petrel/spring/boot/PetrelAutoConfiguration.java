package io.petrel.spring.boot;

import io.micrometer.core.instrument.MeterRegistry;
import io.petrel.rpc.ClientInterceptor;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcClientBuilder;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.RpcServerBuilder;
import io.petrel.rpc.ServerInterceptor;
import io.petrel.rpc.ServiceDefinition;
import java.util.List;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Petrel in a Spring Boot application: a server for the context's services ({@link PetrelServerLifecycle}), one
 * shared client per {@code petrel.clients.<name>} ({@link PetrelClients}), {@link PetrelClient} stub injection, a
 * health indicator ({@code petrel}) when spring-boot-health is present, and Petrel's meters in the context's
 * {@link MeterRegistry} when there is one. docs/spring-boot.md describes it.
 */
@AutoConfiguration(afterName = {
    "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
    "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration"})
@ConditionalOnClass(RpcServer.class)
@EnableConfigurationProperties(PetrelProperties.class)
public class PetrelAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnProperty(prefix = "petrel.server", name = "enabled", matchIfMissing = true)
  PetrelServerLifecycle petrelServer(PetrelProperties properties, ListableBeanFactory beans,
      ObjectProvider<ServerInterceptor> interceptors, ObjectProvider<PetrelServerCustomizer> customizers,
      ObjectProvider<MeterRegistry> meterRegistry) {
    // Everything is looked up when the server starts, after every singleton is made.
    return new PetrelServerLifecycle(() -> {
      List<ServiceDefinition> services = PetrelServices.find(beans);
      RpcServerBuilder builder = RpcServer.builder();
      PetrelBuilders.applyServer(properties.getServer(), builder);
      services.forEach(builder::addService);
      interceptors.orderedStream().forEach(builder::intercept);
      meterRegistry.ifUnique(builder::meterRegistry);
      customizers.orderedStream().forEach(c -> c.customize(builder));
      PetrelProperties.Server p = properties.getServer();
      return new PetrelServerLifecycle.ServerPlan(builder,
          services.stream().map(ServiceDefinition::name).toList(),
          p.getShutdownGracePeriod() != null ? p.getShutdownGracePeriod() : RpcServerBuilder.DEFAULT_SHUTDOWN_GRACE);
    });
  }

  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  PetrelClients petrelClients(PetrelProperties properties, ObjectProvider<ClientInterceptor> interceptors,
      ObjectProvider<PetrelClientCustomizer> customizers, ObjectProvider<MeterRegistry> meterRegistry) {
    return new PetrelClients(properties.getClients().keySet(), name -> {
      RpcClientBuilder builder = RpcClient.builder();
      PetrelBuilders.applyClient(name, properties.getClients().get(name), builder);
      interceptors.orderedStream().forEach(builder::intercept);
      meterRegistry.ifUnique(builder::meterRegistry);
      customizers.orderedStream().forEach(c -> c.customize(name, builder));
      return builder.build();
    });
  }

  @Bean
  static PetrelClientInjector petrelClientInjector(ObjectProvider<PetrelClients> clients) {
    return new PetrelClientInjector(clients);
  }

  /** The {@code petrel} health indicator, with spring-boot-health on the class path. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(HealthIndicator.class)
  static class Health {
    @Bean
    @ConditionalOnMissingBean(name = "petrelHealthIndicator")
    @ConditionalOnEnabledHealthIndicator("petrel")
    PetrelHealthIndicator petrelHealthIndicator(ObjectProvider<PetrelServerLifecycle> server,
        ObjectProvider<PetrelClients> clients) {
      return new PetrelHealthIndicator(server, clients);
    }
  }
}
