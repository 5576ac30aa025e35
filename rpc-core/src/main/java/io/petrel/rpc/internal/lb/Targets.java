package io.petrel.rpc.internal.lb;

import io.petrel.rpc.Endpoint;
import io.petrel.rpc.NameResolver;
import io.petrel.rpc.NameResolverProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.ServiceLoader;
import org.jspecify.annotations.Nullable;

/**
 * Parses a client target: {@code host:port}; {@code static://host:port,host:port;weight=N,...}; or
 * {@code scheme://...} for a {@link NameResolverProvider} of that scheme on the class path.
 */
public final class Targets {
  private Targets() {}

  /** The resolver for {@code target}; throws {@link IllegalArgumentException} saying what is wrong. */
  public static NameResolver resolver(String target) {
    int sep = target.indexOf("://");
    if (sep < 0) {
      return new StaticResolver(List.of(endpoint(target.trim(), target)));
    }
    String scheme = target.substring(0, sep).toLowerCase(Locale.ROOT);
    String rest = target.substring(sep + 3);
    if (scheme.equals("static")) {
      return new StaticResolver(endpoints(rest, target));
    }
    List<String> known = new ArrayList<>(List.of("static"));
    for (NameResolverProvider p : ServiceLoader.load(NameResolverProvider.class, Targets.class.getClassLoader())) {
      if (p.scheme().equalsIgnoreCase(scheme)) {
        return p.newResolver(rest);
      }
      known.add(p.scheme());
    }
    throw new IllegalArgumentException("no name resolver for the scheme '" + scheme + "' of target '" + shown(target)
        + "'; known schemes: " + known + " (a resolver is found through META-INF/services/"
        + NameResolverProvider.class.getName() + ")");
  }

  /**
   * The target as an error message quotes it: whole up to 200 characters, else its first 200 and its length (a
   * target of 10,000 addresses made a message of 170 KB).
   */
  static String shown(String target) {
    if (target.length() <= 200) {
      return target;
    }
    int end = Character.isHighSurrogate(target.charAt(199)) ? 199 : 200; // never half a character
    return target.substring(0, end) + "... (" + target.length() + " characters)";
  }

  /** "h1:7000,h2:7000;weight=2;zone=eu-1;version=2.1;rack=r7" */
  static List<Endpoint> endpoints(String list, String target) {
    List<Endpoint> out = new ArrayList<>();
    java.util.Set<String> seen = new java.util.HashSet<>(); // one pass: a list of 10,000 took 50 million comparisons
    for (String part : list.split(",")) {
      String p = part.trim();
      if (p.isEmpty()) {
        continue;
      }
      int weight = Endpoint.DEFAULT_WEIGHT;
      String zone = null;
      String version = null;
      java.util.Map<String, String> attributes = new java.util.LinkedHashMap<>();
      int semi = p.indexOf(';');
      if (semi >= 0) {
        for (String attr : p.substring(semi + 1).split(";")) {
          String a = attr.trim();
          int eq = a.indexOf('=');
          if (eq <= 0) {
            throw new IllegalArgumentException("bad endpoint attribute '" + shown(a) + "' in target '" + shown(target)
                + "'; expected name=value (weight=N, zone=z, version=v, or any other name)");
          }
          String name = a.substring(0, eq).trim();
          String value = a.substring(eq + 1).trim();
          switch (name) {
            case "weight" -> {
              try {
                weight = Integer.parseInt(value);
              } catch (NumberFormatException e) {
                throw new IllegalArgumentException("bad weight '" + a + "' in target '" + shown(target) + "'", e);
              }
            }
            case "zone" -> zone = value;
            case "version" -> version = value;
            default -> {
              String meant = misspelt(name);
              if (meant != null) {
                throw new IllegalArgumentException("endpoint attribute '" + name + "' in target '" + shown(target)
                    + "' looks like '" + meant + "' misspelt: write '" + meant + "=" + value + "' (names other than"
                    + " weight, zone and version are passed to the load balancer as they are, and nothing reads a"
                    + " misspelt one)");
              }
              attributes.put(name, value);
            }
          }
        }
        p = p.substring(0, semi).trim();
      }
      Endpoint address = endpoint(p, target);
      Endpoint e = new Endpoint(address.host(), address.port(), weight, zone, version, attributes);
      if (!seen.add(e.authority())) {
        throw new IllegalArgumentException("endpoint " + e.authority() + " appears twice in target '" + shown(target)
            + "'; give it a weight instead");
      }
      out.add(e);
    }
    if (out.isEmpty()) {
      throw new IllegalArgumentException("target '" + shown(target) + "' names no endpoint; expected"
          + " static://host:port,host:port");
    }
    return out;
  }

  /**
   * The known attribute (weight, zone, version) that {@code name} most likely misspells, or null: the same name in
   * other case, two neighbouring letters swapped, one letter other than the first mistyped, or (for weight and
   * version) one letter missing or extra, but for an added final "s". Names that differ more, in the first letter
   * ("height") or by a plural ("zones", "versions"), stay free for attributes of your own.
   */
  static @Nullable String misspelt(String name) {
    String n = name.toLowerCase(Locale.ROOT);
    for (String known : new String[] {"weight", "zone", "version"}) {
      if (n.equals(known) || swapsTwoNeighbours(n, known) || mistypesOneAfterTheFirst(n, known)
          || (known.length() > 4 && (dropsOne(n, known) || (dropsOne(known, n) && !n.equals(known + "s"))))) {
        return known;
      }
    }
    return null;
  }

  /** {@code a} is {@code b} with one character, not the first, replaced by another. */
  private static boolean mistypesOneAfterTheFirst(String a, String b) {
    if (a.length() != b.length() || a.isEmpty() || a.charAt(0) != b.charAt(0)) {
      return false;
    }
    int differ = 0;
    for (int i = 1; i < a.length(); i++) {
      if (a.charAt(i) != b.charAt(i)) {
        differ++;
      }
    }
    return differ == 1;
  }

  /** {@code a} is {@code b} with two neighbouring characters swapped. */
  private static boolean swapsTwoNeighbours(String a, String b) {
    if (a.length() != b.length()) {
      return false;
    }
    int i = 0;
    while (i < a.length() && a.charAt(i) == b.charAt(i)) {
      i++;
    }
    return i + 1 < a.length() && a.charAt(i) == b.charAt(i + 1) && a.charAt(i + 1) == b.charAt(i)
        && a.substring(i + 2).equals(b.substring(i + 2));
  }

  /** {@code shorter} is {@code longer} with one character left out. */
  private static boolean dropsOne(String shorter, String longer) {
    if (shorter.length() + 1 != longer.length()) {
      return false;
    }
    int i = 0;
    while (i < shorter.length() && shorter.charAt(i) == longer.charAt(i)) {
      i++;
    }
    return shorter.substring(i).equals(longer.substring(i + 1));
  }

  /** "host:port" or "[v6]:port". */
  static Endpoint endpoint(String s, String target) {
    String host;
    String port;
    if (s.startsWith("[")) {
      int close = s.indexOf(']');
      if (close < 0 || close + 1 >= s.length() || s.charAt(close + 1) != ':') {
        throw new IllegalArgumentException("bad endpoint '" + shown(s) + "' in target '" + shown(target) + "'; expected"
            + " [ipv6]:port");
      }
      host = s.substring(1, close);
      port = s.substring(close + 2);
    } else {
      int colon = s.lastIndexOf(':');
      if (colon <= 0 || s.indexOf(':') != colon) {
        throw new IllegalArgumentException("bad endpoint '" + shown(s) + "' in target '" + shown(target) + "'; expected"
            + " host:port");
      }
      host = s.substring(0, colon);
      port = s.substring(colon + 1);
    }
    int p;
    try {
      p = Integer.parseInt(port);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("bad port '" + port + "' in target '" + shown(target) + "'", e);
    }
    return Endpoint.of(host, p);
  }
}
