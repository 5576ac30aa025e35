package io.petrel.rpc.dns;

import io.petrel.rpc.NameResolver;
import io.petrel.rpc.NameResolverProvider;
import java.time.Duration;
import java.util.Locale;

/**
 * The {@code dns} scheme: {@code dns:///host:port}, with options after {@code ?}: {@code refresh} (the period
 * of lookups, default 30 s) and {@code minRefresh} (the least time between lookups asked for after a lost
 * connection, default 1 s), as {@code 500ms}, {@code 10s} or {@code 2m}; e.g.
 * {@code dns:///greeter.default.svc.cluster.local:7000?refresh=10s}. The names are looked up with the JVM's
 * resolver; a DNS server named in the target ({@code dns://8.8.8.8/host:port}) is refused.
 */
public final class DnsNameResolverProvider implements NameResolverProvider {
  @Override
  public String scheme() {
    return "dns";
  }

  @Override
  public NameResolver newResolver(String target) {
    String full = "dns://" + target;
    if (!target.startsWith("/")) {
      throw new IllegalArgumentException("target '" + full + "' names a DNS server ('"
          + target.substring(0, Math.max(0, target.indexOf('/'))) + "'), which Petrel does not support: it uses"
          + " the JVM's resolver; write dns:///host:port (three slashes)");
    }
    String rest = target.substring(1);
    String query = null;
    int q = rest.indexOf('?');
    if (q >= 0) {
      query = rest.substring(q + 1);
      rest = rest.substring(0, q);
    }
    String host;
    String port;
    if (rest.startsWith("[")) {
      int close = rest.indexOf(']');
      if (close < 0 || close + 1 >= rest.length() || rest.charAt(close + 1) != ':') {
        throw new IllegalArgumentException("bad target '" + full + "'; expected dns:///[ipv6]:port");
      }
      host = rest.substring(1, close);
      port = rest.substring(close + 2);
    } else {
      int colon = rest.lastIndexOf(':');
      if (colon <= 0 || rest.indexOf(':') != colon) {
        throw new IllegalArgumentException("bad target '" + full + "'; expected dns:///host:port, e.g."
            + " dns:///greeter.default.svc.cluster.local:7000");
      }
      host = rest.substring(0, colon);
      port = rest.substring(colon + 1);
    }
    int p;
    try {
      p = Integer.parseInt(port);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("bad port '" + port + "' in target '" + full + "'", e);
    }
    DnsNameResolver.Builder b;
    try {
      b = DnsNameResolver.builder(host, p);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(e.getMessage() + " in target '" + full + "'", e);
    }
    if (query != null && !query.isEmpty()) {
      for (String option : query.split("&")) {
        int eq = option.indexOf('=');
        String name = eq < 0 ? option : option.substring(0, eq);
        String value = eq < 0 ? "" : option.substring(eq + 1);
        switch (name) {
          case "refresh" -> b.refreshInterval(duration(value, name, full));
          case "minRefresh" -> b.minRefreshInterval(duration(value, name, full));
          default -> throw new IllegalArgumentException("unknown option '" + name + "' in target '" + full
              + "'; known: refresh, minRefresh");
        }
      }
    }
    return b.build();
  }

  /** "500ms", "10s", "2m". */
  static Duration duration(String value, String name, String target) {
    String v = value.trim().toLowerCase(Locale.ROOT);
    try {
      if (v.endsWith("ms")) {
        return Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
      } else if (v.endsWith("s")) {
        return Duration.ofSeconds(Long.parseLong(v.substring(0, v.length() - 1)));
      } else if (v.endsWith("m")) {
        return Duration.ofMinutes(Long.parseLong(v.substring(0, v.length() - 1)));
      }
    } catch (NumberFormatException e) {
      // falls through to the message below
    }
    throw new IllegalArgumentException("bad " + name + " '" + value + "' in target '" + target + "'; expected a"
        + " duration like 500ms, 10s or 2m");
  }
}
