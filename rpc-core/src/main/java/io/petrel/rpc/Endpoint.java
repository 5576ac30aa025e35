package io.petrel.rpc;

import java.util.Objects;

/**
 * One server a client may call: a host (name or address) and port, with a weight for the load balancer (a
 * server of weight 2 gets about twice the calls of one of weight 1). A name resolver yields them.
 */
public record Endpoint(String host, int port, int weight) {
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
  }

  /** An endpoint of the default weight. */
  public static Endpoint of(String host, int port) {
    return new Endpoint(host, port, DEFAULT_WEIGHT);
  }

  public Endpoint withWeight(int weight) {
    return new Endpoint(host, port, weight);
  }

  /** "host:port" (IPv6 addresses in brackets). */
  public String authority() {
    return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
  }

  /** The same server (host and port), whatever the weights. */
  public boolean sameAddress(Endpoint other) {
    return host.equals(other.host) && port == other.port;
  }

  @Override
  public String toString() {
    return weight == DEFAULT_WEIGHT ? authority() : authority() + ";weight=" + weight;
  }
}
