package io.petrel.spring.boot;

import io.petrel.rpc.Endpoint;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * The endpoint filter of {@code petrel.clients.<name>.endpoint-filter.*}: an endpoint is called when its version,
 * its zone and each of its attributes named here equal those set (an endpoint without one set here is left out;
 * with none set, every endpoint is called). Its {@code toString()} names the properties and their values, and is
 * what the client's messages say of its filter, e.g. "the client's endpointFilter
 * petrel.clients.orders.endpoint-filter (version=2.3.0, attributes {group=blue}) leaves out every one".
 *
 * <p>The starter sets it on the client's builder before the {@link PetrelClientCustomizer}s run, so a customizer's
 * own {@code endpointFilter} replaces it. To keep both, a customizer combines them with {@link #of} and
 * {@link #and}, which keeps both names in the client's messages:
 *
 * <pre>{@code
 * @Bean
 * PetrelClientCustomizer notDraining(PetrelProperties properties) {
 *   return (name, builder) -> builder.endpointFilter(
 *       PropertiesEndpointFilter.of(properties, name).and(new NotDraining()));
 * }
 * }</pre>
 */
public final class PropertiesEndpointFilter implements Predicate<Endpoint> {
  private final String property;
  private final @Nullable String version;
  private final @Nullable String zone;
  private final Map<String, String> attributes;

  /**
   * @param property the properties' prefix, {@code petrel.clients.<name>.endpoint-filter}
   * @param version the version to call, or null for any
   * @param zone the zone to call, or null for any
   * @param attributes the attributes an endpoint must have, each with this value (empty: none asked for)
   */
  PropertiesEndpointFilter(String property, @Nullable String version, @Nullable String zone,
      Map<String, String> attributes) {
    this.property = Objects.requireNonNull(property, "property");
    this.version = version;
    this.zone = zone;
    this.attributes = Collections.unmodifiableMap(new TreeMap<>(attributes));
  }

  /**
   * The filter the {@code petrel.clients.<client>.endpoint-filter.*} properties make; with none of them set, one
   * that calls every endpoint ({@link #isEmpty()}).
   *
   * @param properties the context's {@link PetrelProperties} bean
   * @param client the client's name, as a {@link PetrelClientCustomizer} is given it
   * @throws IllegalArgumentException if there is no {@code petrel.clients.<client>}
   * @throws IllegalStateException for a value no endpoint could match (the context's start already fails for it)
   */
  public static PropertiesEndpointFilter of(PetrelProperties properties, String client) {
    PetrelProperties.Client p = properties.getClients().get(client);
    if (p == null) {
      throw new IllegalArgumentException("no Petrel client named '" + client + "': configure petrel.clients."
          + client + ".target (configured: " + properties.getClients().keySet() + ")");
    }
    String prefix = "petrel.clients." + client + ".endpoint-filter";
    PropertiesEndpointFilter filter = PetrelBuilders.endpointFilter(prefix, p.getEndpointFilter());
    return filter != null ? filter : new PropertiesEndpointFilter(prefix, null, null, Map.of());
  }

  /** The properties' prefix, {@code petrel.clients.<name>.endpoint-filter}. */
  public String property() {
    return property;
  }

  /** The version to call ({@code .version}), or null for any. */
  public @Nullable String version() {
    return version;
  }

  /** The zone to call ({@code .zone}), or null for any. */
  public @Nullable String zone() {
    return zone;
  }

  /** The attributes an endpoint must have ({@code .attributes.<key>}), each with its value; sorted, unmodifiable. */
  public Map<String, String> attributes() {
    return attributes;
  }

  /** True when none of the properties is set: every endpoint is called. */
  public boolean isEmpty() {
    return version == null && zone == null && attributes.isEmpty();
  }

  @Override
  public boolean test(Endpoint e) {
    if (version != null && !version.equals(e.version())) {
      return false;
    }
    if (zone != null && !zone.equals(e.zone())) {
      return false;
    }
    for (Map.Entry<String, String> a : attributes.entrySet()) {
      if (!a.getValue().equals(e.attribute(a.getKey()))) {
        return false;
      }
    }
    return true;
  }

  /**
   * The endpoints both this filter and {@code other} accept (this one asked first), named in the client's messages
   * as both are, e.g. "petrel.clients.orders.endpoint-filter (version=2.3.0) and NotDraining[]"; when this filter
   * {@link #isEmpty()}, as {@code other} alone. Give {@code other} a readable {@code toString()} (a named class or
   * record rather than a lambda).
   */
  @Override
  public Predicate<Endpoint> and(Predicate<? super Endpoint> other) {
    return new Both(this, Objects.requireNonNull(other, "other"));
  }

  /** E.g. {@code petrel.clients.orders.endpoint-filter (version=2.3.0, zone=eu-west-1a, attributes {group=blue})}. */
  @Override
  public String toString() {
    List<String> parts = new ArrayList<>();
    if (version != null) {
      parts.add("version=" + version);
    }
    if (zone != null) {
      parts.add("zone=" + zone);
    }
    if (!attributes.isEmpty()) {
      parts.add("attributes " + attributes);
    }
    return property + " (" + (parts.isEmpty() ? "none set: every endpoint" : String.join(", ", parts)) + ")";
  }

  @Override
  public boolean equals(@Nullable Object o) {
    return o instanceof PropertiesEndpointFilter f && property.equals(f.property) && Objects.equals(version, f.version)
        && Objects.equals(zone, f.zone) && attributes.equals(f.attributes);
  }

  @Override
  public int hashCode() {
    return Objects.hash(property, version, zone, attributes);
  }

  /** {@link #and}: the properties' filter, then the customizer's. */
  private record Both(PropertiesEndpointFilter properties, Predicate<? super Endpoint> other)
      implements Predicate<Endpoint> {
    @Override
    public boolean test(Endpoint e) {
      return properties.test(e) && other.test(e);
    }

    @Override
    public String toString() {
      return properties.isEmpty() ? other.toString() : properties + " and " + other;
    }
  }
}
