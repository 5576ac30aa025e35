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
 * its zone and each of its attributes named here equal those set (an endpoint without one set here is left out).
 * Its {@code toString()} names the properties and their values, and is what the client's messages say of its
 * filter, e.g. "the client's endpointFilter petrel.clients.orders.endpoint-filter (version=2.3.0, attributes
 * {group=blue}) leaves out every one".
 *
 * @param property the properties' prefix, {@code petrel.clients.<name>.endpoint-filter}
 * @param version the version to call, or null for any
 * @param zone the zone to call, or null for any
 * @param attributes the attributes an endpoint must have, each with this value (sorted; empty: none asked for)
 */
record PropertiesEndpointFilter(String property, @Nullable String version, @Nullable String zone,
    Map<String, String> attributes) implements Predicate<Endpoint> {

  PropertiesEndpointFilter {
    Objects.requireNonNull(property, "property");
    attributes = Collections.unmodifiableMap(new TreeMap<>(attributes));
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
    return property + " (" + String.join(", ", parts) + ")";
  }
}
