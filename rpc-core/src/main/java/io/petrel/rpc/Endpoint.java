package io.petrel.rpc;

import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * One server a client may call: a host (name or address) and port, with a weight for the load balancer (a
 * server of weight 2 gets about twice the calls of one of weight 1), and what the name resolver knows of it: its
 * zone, its version, and any other attributes as strings (a registry's node data, for example). A name resolver
 * yields them; a load balancer reads them ({@code Subchannel.endpoint()}). Two endpoints are the same server when
 * host and port match ({@link #sameAddress}); a resolver update that changes only the weight or the attributes
 * keeps that server's connections.
 *
 * @param zone where the server runs (a zone or data center), or null when the resolver does not say
 * @param version the server's version (for canary or blue-green routing), or null
 * @param attributes further attributes, never null (immutable; empty when there are none)
 */
public record Endpoint(String host, int port, int weight, @Nullable String zone, @Nullable String version,
    Map<String, String> attributes) {
  /** The weight of an endpoint when none is given. */
  public static final int DEFAULT_WEIGHT = 1;
  /** The largest weight; weights are relative, so this is plenty. */
  public static final int MAX_WEIGHT = 10_000;

  public Endpoint {
    Objects.requireNonNull(host, "host");
    if (host.isBlank()) {
      throw new IllegalArgumentException("endpoint host is empty");
    }
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("endpoint port must be 1..65535: " + host + ":" + port);
    }
    if (weight < 1 || weight > MAX_WEIGHT) {
      throw new IllegalArgumentException("endpoint weight must be 1.." + MAX_WEIGHT + ": " + host + ":" + port
          + " weight " + weight);
    }
    Objects.requireNonNull(attributes, "attributes");
    attributes.forEach((k, v) -> {
      Objects.requireNonNull(k, "attribute name");
      Objects.requireNonNull(v, () -> "value of attribute '" + k + "' of " + host + ":" + port);
    });
    // Sorted, so that toString is stable whatever map the resolver used.
    attributes = attributes.isEmpty() ? Map.of() : java.util.Collections.unmodifiableMap(new TreeMap<>(attributes));
  }

  /** An endpoint with a weight and no attributes. */
  public Endpoint(String host, int port, int weight) {
    this(host, port, weight, null, null, Map.of());
  }

  /** An endpoint of the default weight. */
  public static Endpoint of(String host, int port) {
    return new Endpoint(host, port, DEFAULT_WEIGHT);
  }

  public Endpoint withWeight(int weight) {
    return new Endpoint(host, port, weight, zone, version, attributes);
  }

  /** The same endpoint in {@code zone} (null: unknown). */
  public Endpoint withZone(@Nullable String zone) {
    return new Endpoint(host, port, weight, zone, version, attributes);
  }

  /** The same endpoint at {@code version} (null: unknown). */
  public Endpoint withVersion(@Nullable String version) {
    return new Endpoint(host, port, weight, zone, version, attributes);
  }

  /** The same endpoint with these attributes instead of its own. */
  public Endpoint withAttributes(Map<String, String> attributes) {
    return new Endpoint(host, port, weight, zone, version, attributes);
  }

  /** The attribute called {@code name}, or null. */
  public @Nullable String attribute(String name) {
    return attributes.get(name);
  }

  /** "host:port" (IPv6 addresses in brackets). */
  public String authority() {
    return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
  }

  /** The same server (host and port), whatever the weights and attributes. */
  public boolean sameAddress(Endpoint other) {
    return host.equals(other.host) && port == other.port;
  }

  /** "host:port", then whatever is set of ";weight=N;zone=z;version=v;name=value" (the static target's syntax). */
  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder(authority());
    if (weight != DEFAULT_WEIGHT) {
      sb.append(";weight=").append(weight);
    }
    if (zone != null) {
      sb.append(";zone=").append(zone);
    }
    if (version != null) {
      sb.append(";version=").append(version);
    }
    attributes.forEach((k, v) -> sb.append(';').append(k).append('=').append(v));
    return sb.toString();
  }
}
