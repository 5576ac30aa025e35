package io.petrel.spring.boot;

import java.lang.reflect.Field;
import java.time.Duration;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.context.LifecycleAutoConfiguration;
import org.springframework.boot.autoconfigure.context.LifecycleProperties;
import org.springframework.context.support.AbstractApplicationContext;
import org.springframework.context.support.DefaultLifecycleProcessor;

/**
 * How long the context waits for the server's shutdown phase to stop, and what sets it, for the WARN of
 * {@link PetrelServerLifecycle#phaseWarning}: read from the context's own lifecycle processor (the
 * {@value AbstractApplicationContext#LIFECYCLE_PROCESSOR_BEAN_NAME} bean, which an application may define itself)
 * when it is a {@link DefaultLifecycleProcessor}, with its timeout for this phase when it sets one
 * ({@code setTimeoutForShutdownPhase}), else its {@code timeoutPerShutdownPhase}.
 *
 * @param timeout how long the context waits for the phase
 * @param setting what sets it, as the WARN names it, e.g. {@code spring.lifecycle.timeout-per-shutdown-phase}
 * @param fix what to raise, as the WARN asks for it, e.g. {@code Set spring.lifecycle.timeout-per-shutdown-phase}
 */
record ShutdownPhaseTimeout(Duration timeout, String setting, String fix) {
  private static final Logger log = LoggerFactory.getLogger(ShutdownPhaseTimeout.class);
  private static final String PROPERTY = "spring.lifecycle.timeout-per-shutdown-phase";
  private static final String BEAN = AbstractApplicationContext.LIFECYCLE_PROCESSOR_BEAN_NAME;

  /** Boot's {@code spring.lifecycle.timeout-per-shutdown-phase}, at {@code timeout}. */
  static ShutdownPhaseTimeout property(Duration timeout) {
    return new ShutdownPhaseTimeout(timeout, PROPERTY, "Set " + PROPERTY + " to");
  }

  /**
   * The timeout of {@code phase} in the context of {@code beans}, once it has refreshed (the lifecycle processor
   * exists then). A processor that is not a {@link DefaultLifecycleProcessor}, or whose settings cannot be read
   * (its fields are private: a module system that forbids reading them), gives the fallback: Boot's
   * {@code spring.lifecycle.timeout-per-shutdown-phase}, else Spring's default.
   */
  static ShutdownPhaseTimeout of(ListableBeanFactory beans, int phase, @Nullable LifecycleProperties lifecycle) {
    Object processor = beans.containsBean(BEAN) ? beans.getBean(BEAN) : null;
    if (processor instanceof DefaultLifecycleProcessor p) {
      try {
        return of(p, phase, origin(beans));
      } catch (RuntimeException e) {
        log.debug("cannot read the shutdown timeouts of the {} bean ({}); judging the shutdown phase by {}", BEAN,
            e.toString(), lifecycle != null ? PROPERTY : "Spring's default", e);
      }
    }
    return fallback(lifecycle);
  }

  /** Without the processor's settings: Boot's property, else Spring's default. */
  static ShutdownPhaseTimeout fallback(@Nullable LifecycleProperties lifecycle) {
    return property(lifecycle != null ? lifecycle.getTimeoutPerShutdownPhase()
        : PetrelServerLifecycle.SPRING_PHASE_TIMEOUT);
  }

  /**
   * The timeout {@code processor} gives {@code phase}: its {@code timeoutsForShutdownPhases} entry, else its
   * {@code timeoutPerShutdownPhase} (as its private {@code determineShutdownTimeout} does).
   *
   * @param origin who made the processor
   * @throws RuntimeException when its fields cannot be read
   */
  static ShutdownPhaseTimeout of(DefaultLifecycleProcessor processor, int phase, Origin origin) {
    Map<?, ?> perPhase = (Map<?, ?>) read(processor, "timeoutsForShutdownPhases");
    Object forPhase = perPhase.get(phase);
    if (forPhase instanceof Long millis) {
      return new ShutdownPhaseTimeout(Duration.ofMillis(millis), "the " + BEAN + " bean's timeout for shutdown"
          + " phase " + phase + " (setTimeoutForShutdownPhase)", "Set the " + BEAN + " bean's"
          + " setTimeoutForShutdownPhase(" + phase + ", ...) to");
    }
    Duration timeout = Duration.ofMillis((Long) read(processor, "timeoutPerShutdownPhase"));
    if (origin == Origin.BOOT) {
      return property(timeout);
    }
    if (origin == Origin.CONTEXT) {
      return new ShutdownPhaseTimeout(timeout, "Spring's timeout per shutdown phase (the context has no " + BEAN
          + " bean: neither Boot's LifecycleAutoConfiguration nor one of its own)", "Give the context a " + BEAN
          + " bean (Boot's LifecycleAutoConfiguration with " + PROPERTY + ", or a DefaultLifecycleProcessor) whose"
          + " timeout for this phase is");
    }
    return new ShutdownPhaseTimeout(timeout, "the " + BEAN + " bean's timeoutPerShutdownPhase", "Set the " + BEAN
        + " bean's setTimeoutPerShutdownPhase (or setTimeoutForShutdownPhase(" + phase + ", ...), for this phase"
        + " alone) to");
  }

  private static Object read(DefaultLifecycleProcessor processor, String name) {
    try {
      Field f = DefaultLifecycleProcessor.class.getDeclaredField(name);
      f.setAccessible(true);
      Object value = f.get(processor);
      if (value == null) {
        throw new IllegalStateException(name + " is null");
      }
      return value;
    } catch (NoSuchFieldException | IllegalAccessException e) {
      throw new IllegalStateException("DefaultLifecycleProcessor." + name + ": " + e, e);
    }
  }

  /** Who made the lifecycle processor. */
  enum Origin {
    /** Boot's LifecycleAutoConfiguration, from spring.lifecycle.timeout-per-shutdown-phase. */
    BOOT,
    /** A bean definition of the application's own. */
    APPLICATION,
    /** The context itself, for want of a bean definition (Spring's defaults). */
    CONTEXT
  }

  private static Origin origin(ListableBeanFactory beans) {
    if (!(beans instanceof ConfigurableListableBeanFactory c) || !c.containsBeanDefinition(BEAN)) {
      // AbstractApplicationContext registers its own as a singleton, with no definition.
      return beans.containsBeanDefinition(BEAN) ? Origin.APPLICATION : Origin.CONTEXT;
    }
    return LifecycleAutoConfiguration.class.getName().equals(c.getBeanDefinition(BEAN).getFactoryBeanName())
        ? Origin.BOOT : Origin.APPLICATION;
  }
}
