package io.petrel.rpc.registry.zookeeper;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.petrel.rpc.Endpoint;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The data of a server's node, {@code basePath/service/host:port}: UTF-8 JSON, readable by any tool.
 *
 * <pre>{"host":"10.0.0.7","port":7000,"weight":1,"zone":"eu-1","version":"2.0","metadata":{"rack":"r7"}}</pre>
 *
 * {@code host} (a string: an IPv4 or IPv6 address or a host name) and {@code port} (1..65535) are required;
 * {@code weight} (1..10000) defaults to 1; {@code zone}, {@code version} and {@code metadata} are left out when not
 * set. Fields it does not know are ignored, so that a later layout can add some. A node holds at most
 * {@value #MAX_BYTES} bytes: a client skips a larger one, and a registrar does not write one.
 */
final class RegistryNode {
  /** The most bytes a server's node may hold (its JSON with all its metadata). */
  static final int MAX_BYTES = 8192;

  private RegistryNode() {}

  /** The node's name under its service: "host:port" ("[v6]:port"). */
  static String name(Endpoint e) {
    return e.authority();
  }

  /**
   * Why a node named {@code name} does not hold a server's node for {@code e}, or null when it does: its name is
   * the host:port of its data (the host in any spelling of the same address: "[::1]:7000" for host 0:0:0:0:0:0:0:1,
   * "Host:7000" for host). The data is what clients connect to; a name that says another address (a copy of a node
   * under another name, a forged or stale node) would show tools that list the names a server the clients do not
   * call, so such a node is skipped.
   */
  static @Nullable String nameMismatch(String name, Endpoint e) {
    String expected = name(e);
    if (name.equals(expected)) {
      return null;
    }
    int colon = name.lastIndexOf(':');
    if (colon > 0 && name.substring(colon + 1).equals(Integer.toString(e.port()))) {
      String host = name.substring(0, colon);
      boolean bracketed = host.startsWith("[") && host.endsWith("]");
      if (bracketed || host.indexOf(':') < 0) { // an IPv6 address in a name is bracketed, as a port follows it
        try {
          if (checkHost(host).equals(e.host())) {
            return null;
          }
        } catch (IllegalArgumentException notAHost) {
          // said below
        }
      }
    }
    String shown = name.length() > 100 ? name.substring(0, 100) + "..." : name;
    return "its name '" + shown + "' is not the address its data lists, " + expected + " (the one clients would"
        + " call)";
  }

  static byte[] encode(Endpoint e) {
    JsonObject o = new JsonObject();
    o.addProperty("host", e.host());
    o.addProperty("port", e.port());
    o.addProperty("weight", e.weight());
    if (e.zone() != null) {
      o.addProperty("zone", e.zone());
    }
    if (e.version() != null) {
      o.addProperty("version", e.version());
    }
    if (!e.attributes().isEmpty()) {
      JsonObject m = new JsonObject();
      e.attributes().forEach(m::addProperty);
      o.add("metadata", m);
    }
    return o.toString().getBytes(StandardCharsets.UTF_8);
  }

  /**
   * The endpoint a node's data describes.
   *
   * @throws IllegalArgumentException saying what is wrong with it
   */
  static Endpoint decode(byte[] data) {
    if (data.length > MAX_BYTES) {
      throw new IllegalArgumentException("the node holds " + data.length + " bytes, more than the " + MAX_BYTES
          + " a server's node may hold");
    }
    JsonObject o;
    try {
      JsonElement root = JsonParser.parseString(new String(data, StandardCharsets.UTF_8));
      if (!root.isJsonObject()) {
        throw new IllegalArgumentException("node data is not a JSON object");
      }
      o = root.getAsJsonObject();
    } catch (RuntimeException e) {
      if (e instanceof IllegalArgumentException iae && !(e instanceof com.google.gson.JsonParseException)) {
        throw iae;
      }
      // Gson's message ends with advice for its own users ("Use JsonReader.setStrictness ... See https://..."):
      // of no use to whoever wrote the node, so only where it fails is kept.
      String why = String.valueOf(e.getMessage());
      int advice = why.indexOf("\nSee ");
      why = (advice >= 0 ? why.substring(0, advice) : why)
          .replace("Use JsonReader.setStrictness(Strictness.LENIENT) to accept malformed JSON", "malformed JSON")
          .replaceFirst("^[a-zA-Z0-9_.]+(Exception|Error): ", "");
      throw new IllegalArgumentException("node data is not JSON (" + why + ")", e);
    }
    JsonElement h = o.get("host");
    if (h != null && !h.isJsonNull() && !(h.isJsonPrimitive() && h.getAsJsonPrimitive().isString())) {
      throw new IllegalArgumentException("field 'host' must be a string: " + h);
    }
    String host = checkHost(Objects.requireNonNull(string(o, "host", true), "required: there or string() threw"));
    int port = integer(o, "port", -1);
    int weight = integer(o, "weight", Endpoint.DEFAULT_WEIGHT);
    Map<String, String> metadata = new LinkedHashMap<>();
    JsonElement m = o.get("metadata");
    if (m != null && !m.isJsonNull()) {
      if (!m.isJsonObject()) {
        throw new IllegalArgumentException("'metadata' must be an object of strings");
      }
      for (Map.Entry<String, JsonElement> en : m.getAsJsonObject().entrySet()) {
        JsonElement v = en.getValue();
        if (!v.isJsonPrimitive()) {
          throw new IllegalArgumentException("metadata '" + en.getKey() + "' must be a string");
        }
        metadata.put(en.getKey(), v.getAsString());
      }
    }
    return new Endpoint(host, port, weight, string(o, "zone", false), string(o, "version", false), metadata);
  }

  private static @Nullable String string(JsonObject o, String field, boolean required) {
    JsonElement v = o.get(field);
    if (v == null || v.isJsonNull()) {
      if (required) {
        throw new IllegalArgumentException("field '" + field + "' is missing");
      }
      return null;
    }
    if (!v.isJsonPrimitive()) {
      throw new IllegalArgumentException("field '" + field + "' must be a string");
    }
    return v.getAsString();
  }

  private static int integer(JsonObject o, String field, int absent) {
    JsonElement v = o.get(field);
    if (v == null || v.isJsonNull()) {
      if (absent < 0) {
        throw new IllegalArgumentException("field '" + field + "' is missing");
      }
      return absent;
    }
    try {
      // Exact: getAsInt() would read 7000.5 as 7000 and 4294974296 (2^32 + 7000) as 7000.
      return v.getAsBigDecimal().intValueExact();
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("field '" + field + "' must be an integer: " + v, e);
    }
  }

  private static final java.util.regex.Pattern HOST_NAME = java.util.regex.Pattern.compile(
      "[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(\\.[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\\.?");
  private static final java.util.regex.Pattern IPV6 = java.util.regex.Pattern.compile("[0-9A-Fa-f:][0-9A-Fa-f:.]*");
  private static final java.util.regex.Pattern SCOPE = java.util.regex.Pattern.compile("[A-Za-z0-9_.-]{1,64}");

  /**
   * {@code host} in one spelling per address if it can be an address to connect to, else an
   * IllegalArgumentException saying why: an IPv4 address (four decimal numbers 0-255 without leading zeros, which
   * some readers take for octal), an IPv6 address with or without brackets (as Java writes it,
   * 0:0:0:0:0:0:0:1, with its scope id if it has one; an IPv4-mapped one as its IPv4 address), or an ASCII host
   * name (letters, digits, '-' and '_' in dot-separated labels of at most 63 characters, 253 in all; in lower case,
   * a trailing dot kept; an internationalised name must be written as its A-label, xn--...). So a node's garbage
   * ("not an address", a URL, "999.1.2.3") is refused with the node rather than tried as a host, and two spellings
   * of one address ("::1" and "[0:0::1]", "Host" and "host") are one endpoint.
   */
  static String checkHost(String host) {
    String h = host.length() > 2 && host.startsWith("[") && host.endsWith("]") && host.indexOf(':') > 0
        ? host.substring(1, host.length() - 1) : host;
    String why = null;
    String canonical = null;
    if (!h.chars().allMatch(c -> c > 32 && c < 127)) {
      why = "not an ASCII address or host name (write an internationalised name as its A-label, xn--...)";
    } else if (h.indexOf(':') >= 0) {
      int percent = h.indexOf('%');
      String address = percent < 0 ? h : h.substring(0, percent);
      String scope = percent < 0 ? null : h.substring(percent + 1);
      if (!IPV6.matcher(address).matches() || (scope != null && !SCOPE.matcher(scope).matches())) {
        why = "neither an address nor a host name";
      } else {
        try {
          // A literal of hex digits, ':' and '.': parsed, never looked up (the scope id is left out: whether it
          // names an interface depends on the machine, and the client's connect says so if not).
          java.net.InetAddress a = java.net.InetAddress.getByName(address);
          canonical = a instanceof java.net.Inet4Address ? a.getHostAddress() // IPv4-mapped: the IPv4 address
              : a.getHostAddress() + (scope == null ? "" : "%" + scope);
        } catch (java.net.UnknownHostException e) {
          why = "not an IPv6 address";
        }
      }
    } else if (h.length() > 253 || !HOST_NAME.matcher(h).matches()) {
      why = "neither an address nor a host name";
    } else if (h.chars().allMatch(c -> (c >= '0' && c <= '9') || c == '.')) {
      String[] parts = h.split("\\.", -1);
      boolean ok = parts.length == 4;
      for (int i = 0; ok && i < 4; i++) {
        ok = !parts[i].isEmpty() && parts[i].length() <= 3 && Integer.parseInt(parts[i]) <= 255
            && (parts[i].length() == 1 || parts[i].charAt(0) != '0');
      }
      if (!ok) {
        why = "not an IPv4 address (four numbers 0-255, without leading zeros)";
      } else {
        canonical = h;
      }
    } else {
      canonical = h.toLowerCase(java.util.Locale.ROOT);
    }
    if (why != null || canonical == null || canonical.isEmpty()) {
      String shown = host.length() > 100 ? host.substring(0, 100) + "..." : host;
      throw new IllegalArgumentException("field 'host' is " + (why == null ? "neither an address nor a host name"
          : why) + ": '" + shown + "'");
    }
    return canonical;
  }
}
