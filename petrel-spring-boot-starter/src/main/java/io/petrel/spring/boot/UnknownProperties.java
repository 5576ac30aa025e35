package io.petrel.spring.boot;

import java.beans.PropertyDescriptor;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.BeanUtils;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.bind.handler.NoUnboundElementsBindHandler;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.bind.PropertySourcesPlaceholdersResolver;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.Environment;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * Fails the start on a property under {@code petrel.server.} or {@code petrel.clients.<name>.} that no option has
 * (a misspelt {@code petrel.server.busines-threads} would otherwise be ignored, and its default used), naming it
 * and the known property nearest to it. Boot's own check ({@code NoUnboundElementsBindHandler}, the one of
 * {@code ignoreUnknownFields = false}) finds them, in every relaxed form, in every source but the environment
 * variables: Kubernetes gives each pod variables for every Service of its namespace ({@code enableServiceLinks}),
 * and those of a Service named {@code petrel-server-headless} ({@code PETREL_SERVER_HEADLESS_PORT=tcp://...})
 * fall under {@code petrel.server.}. The rest of {@code petrel.*} is not checked.
 */
final class UnknownProperties {
  private UnknownProperties() {
  }

  /** Checks {@code petrel.server.*} and every {@code petrel.clients.<name>.*}. */
  static void check(Environment environment) {
    checkServer(environment);
    checkClients(environment);
  }

  /** Checks {@code petrel.server.*}. */
  static void checkServer(Environment environment) {
    check(environment, "petrel.server", Bindable.ofInstance(new PetrelProperties.Server()),
        PetrelProperties.Server.class, false);
  }

  /** Checks every {@code petrel.clients.<name>.*}. */
  static void checkClients(Environment environment) {
    check(environment, "petrel.clients", Bindable.mapOf(String.class, PetrelProperties.Client.class),
        PetrelProperties.Client.class, true);
  }

  private static void check(Environment environment, String prefix, Bindable<?> target, Class<?> type,
      boolean named) {
    try {
      binder(environment).bind(prefix, target, new NoUnboundElementsBindHandler(BindHandler.DEFAULT));
    } catch (BindException e) {
      UnboundConfigurationPropertiesException unbound = unbound(e);
      if (unbound == null) {
        return; // a value that cannot be converted: the binding of PetrelProperties says so, as Boot words it
      }
      List<String> problems = new ArrayList<>();
      for (ConfigurationProperty p : unbound.getUnboundProperties()) {
        problems.add(problem(p, prefix, type, named));
      }
      throw new IllegalStateException(String.join("; ", problems) + ". Correct or remove "
          + (problems.size() == 1 ? "it" : "them") + ": docs/spring-boot.md lists every Petrel property", e);
    }
  }

  /** A binder over {@code environment}'s property sources but the environment variables (see the class comment). */
  private static Binder binder(Environment environment) {
    if (!(environment instanceof ConfigurableEnvironment configurable)) {
      return Binder.get(environment);
    }
    List<PropertySource<?>> sources = new ArrayList<>();
    for (PropertySource<?> s : configurable.getPropertySources()) {
      if (!(s instanceof SystemEnvironmentPropertySource)
          && !ATTACHED.equals(s.getName())) { // Boot's view of all the others, environment variables included
        sources.add(s);
      }
    }
    return new Binder(ConfigurationPropertySources.from(sources),
        new PropertySourcesPlaceholdersResolver(environment));
  }

  /** The name of the property source Boot attaches to an environment over all its others. */
  private static final String ATTACHED = "configurationProperties";

  private static @Nullable UnboundConfigurationPropertiesException unbound(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof UnboundConfigurationPropertiesException u) {
        return u;
      }
    }
    return null;
  }

  /** "petrel.server.busines-threads=4 is not a known property (did you mean petrel.server.business-threads?)". */
  private static String problem(ConfigurationProperty p, String prefix, Class<?> type, boolean named) {
    ConfigurationPropertyName name = p.getName();
    String origin = p.getOrigin() != null ? ", set in " + p.getOrigin() : "";
    String nearest = nearest(name, ConfigurationPropertyName.of(prefix).getNumberOfElements() + (named ? 1 : 0),
        type);
    return name + "=" + p.getValue() + " is not a known property"
        + (nearest != null ? " (did you mean " + nearest + "?)" : "") + origin;
  }

  /**
   * The known property nearest to {@code name}'s last element, among those of the class its parent names
   * ({@code tls.*} in {@link PetrelProperties.Tls}); null when none is near (or the parent is no options class).
   */
  private static @Nullable String nearest(ConfigurationPropertyName name, int first, Class<?> type) {
    Class<?> current = type;
    int last = name.getNumberOfElements() - 1;
    for (int i = first; i < last; i++) {
      PropertyDescriptor d = descriptor(current, name.getElement(i, ConfigurationPropertyName.Form.DASHED));
      if (d == null || d.getPropertyType().getDeclaringClass() != PetrelProperties.class) {
        return null;
      }
      current = d.getPropertyType();
    }
    String typo = name.getElement(last, ConfigurationPropertyName.Form.DASHED);
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (String known : known(current)) {
      int distance = distance(typo, known);
      if (distance < bestDistance) {
        best = known;
        bestDistance = distance;
      }
    }
    if (best == null || bestDistance > Math.max(2, typo.length() / 3)) {
      return null;
    }
    StringBuilder parent = new StringBuilder();
    for (int i = 0; i < last; i++) {
      parent.append(name.getElement(i, ConfigurationPropertyName.Form.ORIGINAL)).append('.');
    }
    return parent + best;
  }

  private static @Nullable PropertyDescriptor descriptor(Class<?> type, String dashed) {
    for (PropertyDescriptor d : BeanUtils.getPropertyDescriptors(type)) {
      if (!d.getName().equals("class") && dashed(d.getName()).equals(dashed)) {
        return d;
      }
    }
    return null;
  }

  /** The properties of an options class, dashed: business-threads, tls, ... */
  private static Set<String> known(Class<?> type) {
    Set<String> names = new TreeSet<>();
    for (PropertyDescriptor d : BeanUtils.getPropertyDescriptors(type)) {
      if (!d.getName().equals("class")) {
        names.add(dashed(d.getName()));
      }
    }
    return names;
  }

  private static String dashed(String camel) {
    return camel.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(Locale.ROOT);
  }

  /** Levenshtein distance. */
  static int distance(String a, String b) {
    int[] previous = new int[b.length() + 1];
    int[] current = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      previous[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      current[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int substitute = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
        current[j] = Math.min(substitute, Math.min(previous[j] + 1, current[j - 1] + 1));
      }
      int[] t = previous;
      previous = current;
      current = t;
    }
    return previous[b.length()];
  }
}
