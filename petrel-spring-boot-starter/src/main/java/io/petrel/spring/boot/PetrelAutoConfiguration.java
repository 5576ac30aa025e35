package io.petrel.spring.boot;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.observation.ObservationRegistry;
import io.petrel.rpc.ClientInterceptor;
import io.petrel.rpc.ExceptionMapper;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcClientBuilder;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.RpcServerBuilder;
import io.petrel.rpc.ServerInterceptor;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.health.HealthService;
import io.petrel.rpc.observation.ObservationClientInterceptor;
import io.petrel.rpc.observation.ObservationServerInterceptor;
import io.petrel.rpc.observation.RpcObservations;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.context.LifecycleProperties;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.Environment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.MutablePropertySources;
import org.springframework.core.env.PropertySource;

/**
 * Petrel in a Spring Boot application: a server for the context's services ({@link PetrelServerLifecycle}), one
 * shared client per {@code petrel.clients.<name>} ({@link PetrelClients}), {@link PetrelClient} stub injection, a
 * health indicator ({@code petrel}) when spring-boot-health is present, Petrel's meters in the context's
 * {@link MeterRegistry} when there is one, and tracing through the context's {@link ObservationRegistry} when
 * rpc-observation is on the class path. docs/spring-boot.md describes it.
 */
@AutoConfiguration(afterName = {"org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration",
    "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
    "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration"})
@ConditionalOnClass(RpcServer.class)
@EnableConfigurationProperties(PetrelProperties.class)
public class PetrelAutoConfiguration {

  @Bean(destroyMethod = "contextClosed")
  @ConditionalOnMissingBean
  @ConditionalOnProperty(prefix = "petrel.server", name = "enabled", matchIfMissing = true)
  PetrelServerLifecycle petrelServer(PetrelProperties properties, ListableBeanFactory beans,
      ObjectProvider<ServerInterceptor> interceptors, ObjectProvider<PetrelServerCustomizer> customizers,
      ObjectProvider<MeterRegistry> meterRegistry, ObjectProvider<HealthService> health,
      ObjectProvider<ExceptionMapper> exceptionMappers, ObjectProvider<LifecycleProperties> lifecycle,
      ObjectProvider<SslBundles> sslBundles, Environment environment) {
    UnknownProperties.check(environment);
    // Made when the server first starts; a server started again uses the same (which follows the bundle).
    SslBundleTls.Registry bundles = new SslBundleTls.Registry(sslBundles.getIfAvailable());
    // Everything is looked up when the server starts, after every singleton is made.
    return new PetrelServerLifecycle(() -> {
      List<ServiceDefinition> services = PetrelServices.find(beans);
      RpcServerBuilder builder = RpcServer.builder();
      PetrelBuilders.applyServer(properties.getServer(), builder, asSet(environment), bundles);
      services.forEach(builder::addService);
      if (properties.getServer().getHealth().isEnabled()) {
        health.ifUnique(h -> serveHealth(h, services, builder));
      }
      interceptors.orderedStream().forEach(builder::intercept);
      ExceptionMapper mapper = OrderedExceptionMappers.of(exceptionMappers.orderedStream().toList());
      if (mapper != null) {
        builder.exceptionMapper(mapper); // a PetrelServerCustomizer's exceptionMapper, set after this, replaces it
      }
      meterRegistry.ifUnique(builder::meterRegistry);
      customizers.orderedStream().forEach(c -> customized(c, () -> c.customize(builder)));
      return builder;
    },
        // The context's lifecycle processor's timeout for the server's phase (Boot's is made from
        // spring.lifecycle.timeout-per-shutdown-phase, 30s unless set; an application may define its own); one that
        // cannot be read: Boot's property, else Spring's own 10s.
        () -> ShutdownPhaseTimeout.of(beans, PetrelServerLifecycle.PHASE, lifecycle.getIfAvailable()),
        port -> publishPort(environment, port),
        // Boot keeps the bundle's update handler: a closed context's server neither reloads nor says so on updates.
        bundles::close);
  }

  /**
   * Puts the bound port in the Environment as {@value PetrelServerLifecycle#LOCAL_PORT_PROPERTY}, as Boot does
   * {@code local.server.port}, so that a test can {@code @Value("${local.petrel.server.port}")}.
   */
  static void publishPort(Environment environment, int port) {
    if (environment instanceof ConfigurableEnvironment configurable) {
      MutablePropertySources sources = configurable.getPropertySources();
      PropertySource<?> existing = sources.get(PORT_SOURCE);
      Map<String, Object> ports = new HashMap<>();
      if (existing instanceof MapPropertySource map) {
        ports.putAll(map.getSource());
      }
      ports.put(PetrelServerLifecycle.LOCAL_PORT_PROPERTY, port);
      MapPropertySource updated = new MapPropertySource(PORT_SOURCE, ports);
      if (existing != null) {
        sources.replace(PORT_SOURCE, updated);
      } else {
        sources.addFirst(updated);
      }
    }
  }

  /** The property source of {@value PetrelServerLifecycle#LOCAL_PORT_PROPERTY}. */
  static final String PORT_SOURCE = "petrel.server.ports";

  /**
   * Serves {@code health} ({@code petrel.health.Health}) and has it follow the server, unless a
   * {@link ServiceDefinition} bean of that name is served already (a HealthService the application serves by hand).
   */
  static void serveHealth(HealthService health, List<ServiceDefinition> services, RpcServerBuilder builder) {
    for (ServiceDefinition s : services) {
      if (s.name().equals(HealthService.SERVICE)) {
        return;
      }
    }
    builder.addService(health.definition()).addLifecycleListener(health);
  }

  /**
   * Petrel's health service, served by the server ({@link #serveHealth}) and a bean, so that the application can
   * {@code setStatus}; a HealthService bean of the application's own takes its place.
   */
  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnProperty(prefix = "petrel.server", name = {"enabled", "health.enabled"}, havingValue = "true",
      matchIfMissing = true)
  HealthService petrelHealthService() {
    return HealthService.create();
  }

  /**
   * A property's value as written in the environment (any of Boot's relaxed forms and sources), for a message
   * saying it was refused.
   */
  static PetrelBuilders.AsSet asSet(Environment environment) {
    return property -> Binder.get(environment).bind(property, Bindable.of(String.class)).orElse(null);
  }

  /**
   * Runs a customizer, saying which one when the builder refuses what it set: that is the application's Java
   * code, not a {@code petrel.*} property.
   */
  static void customized(Object customizer, Runnable customize) {
    try {
      customize.run();
    } catch (IllegalArgumentException | IllegalStateException e) {
      // Its own exception, or the builder refusing a value it set: either way the customizer is the one to look at.
      String health = String.valueOf(e.getMessage()).contains(HealthService.SERVICE + " is added twice")
          ? " (the starter serves the HealthService bean already: leave it out of the customizer, or set"
              + " petrel.server.health.enabled=false to serve your own)"
          : "";
      throw new IllegalStateException("the " + customizer.getClass().getName() + " bean (a Petrel customizer)"
          + " failed: " + e.getMessage() + health, e);
    }
  }

  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  PetrelClients petrelClients(PetrelProperties properties, ObjectProvider<ClientInterceptor> interceptors,
      ObjectProvider<PetrelClientCustomizer> customizers, ObjectProvider<MeterRegistry> meterRegistry,
      ObjectProvider<ClientTracing> tracing, ObjectProvider<SslBundles> sslBundles, Environment environment) {
    UnknownProperties.check(environment); // the server's keys too: with petrel.server.enabled=false no server checks
    SslBundleTls.Registry bundles = new SslBundleTls.Registry(sslBundles.getIfAvailable());
    return new PetrelClients(properties.getClients().keySet(), name -> {
      try {
        RpcClientBuilder builder = RpcClient.builder();
        PetrelBuilders.applyClient(name, client(properties, name), builder, asSet(environment), bundles);
        // The client's span first (outermost), as the server's: the application's interceptors run inside it,
        // so what they log carries the trace, and a call one of them fails still has its span.
        tracing.ifAvailable(t -> builder.intercept(t.forClient(name)));
        interceptors.orderedStream().forEach(builder::intercept);
        meterRegistry.ifUnique(builder::meterRegistry);
        customizers.orderedStream().forEach(c -> customized(c, () -> c.customize(name, builder)));
        RpcClient client = builder.build();
        SslBundleTls material = bundles.material("petrel.clients." + name + ".tls");
        if (material != null) {
          material.follow(client); // the bundle's updates reach its new connections
        }
        return client;
      } catch (IllegalArgumentException | IllegalStateException e) {
        throw clientProblem(name, client(properties, name).getTarget(), e);
      }
    }, bundles::close); // Boot keeps the bundles' update handlers: they must not hold the closed clients
  }

  /**
   * A client's builder refused its configuration: the same message, saying which client and which properties
   * (the builder names its own Java option, which a Boot user sets as a property).
   */
  static RuntimeException clientProblem(String name, @Nullable String target, RuntimeException e) {
    String message = String.valueOf(e.getMessage());
    String portZero = target != null && target.matches(".*:0(?:[,;/].*)?$")
        ? " (a target cannot name port 0: with petrel.server.port=0 this application's own server gets its port"
            + " only when it starts, after the clients are made; give the server a fixed port, or make this"
            + " client in code once the server is up, from PetrelServerLifecycle.port())"
        : "";
    if (message.contains("petrel.clients." + name) || message.contains("Petrel customizer")) {
      // Already says which property (or which customizer): said as it is, with the port 0 hint if it applies.
      return portZero.isEmpty() ? e : new IllegalStateException(message + portZero, e);
    }
    return new IllegalStateException("Petrel client '" + name + "' (properties petrel.clients." + name + ".*): "
        + message + portZero, e);
  }

  @Bean
  static PetrelClientInjector petrelClientInjector(ObjectProvider<PetrelClients> clients) {
    return new PetrelClientInjector(clients);
  }

  /**
   * Tracing, with rpc-observation on the class path and an {@link ObservationRegistry} in the context (Boot makes
   * one with spring-boot-micrometer-observation): the server observes every call first (outermost), each client
   * too (outermost: its own interceptors run inside the span), with its target as the peer, and the meters a meter observation handler would make of those
   * observations are denied, since Petrel's own meters already time every call.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass({ObservationServerInterceptor.class, ObservationRegistry.class})
  @ConditionalOnBean(ObservationRegistry.class)
  @ConditionalOnProperty(prefix = "petrel.observation", name = "enabled", matchIfMissing = true)
  static class Observations {
    @Bean
    @Order(Ordered.HIGHEST_PRECEDENCE)
    @ConditionalOnMissingBean
    ObservationServerInterceptor petrelObservationServerInterceptor(ObservationRegistry registry) {
      return new ObservationServerInterceptor(registry);
    }

    @Bean
    ClientTracing petrelClientTracing(ObservationRegistry registry, PetrelProperties properties) {
      return name -> new ObservationClientInterceptor(registry,
          String.valueOf(client(properties, name).getTarget()));
    }

    @Bean
    MeterFilter petrelIgnoreObservationMeters() {
      return RpcObservations.ignoreObservationMeters();
    }
  }

  /** Makes the tracing interceptor of the client named {@code name} (with rpc-observation; see Observations). */
  @FunctionalInterface
  interface ClientTracing {
    ClientInterceptor forClient(String name);
  }

  /** The {@code petrel} health indicator, with spring-boot-health on the class path. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(HealthIndicator.class)
  static class Health {
    @Bean
    @ConditionalOnMissingBean(name = "petrelHealthIndicator")
    @ConditionalOnEnabledHealthIndicator("petrel")
    PetrelHealthIndicator petrelHealthIndicator(ObjectProvider<PetrelServerLifecycle> server,
        ObjectProvider<PetrelClients> clients, ObjectProvider<MeterRegistry> meterRegistry,
        PetrelProperties properties) {
      return new PetrelHealthIndicator(server, clients, meterRegistry::getIfUnique,
          properties.getHealth().isClientsAffectStatus());
    }
  }

  /** The properties of the client {@code name}, one of {@code petrel.clients}' keys. */
  static PetrelProperties.Client client(PetrelProperties properties, String name) {
    return Objects.requireNonNull(properties.getClients().get(name), () -> "no petrel.clients." + name);
  }
}
