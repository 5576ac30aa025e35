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
 * {@code host} and {@code port} are required; {@code weight} defaults to 1; {@code zone}, {@code version} and
 * {@code metadata} are left out when not set. Fields it does not know are ignored, so that a later layout can add
 * some.
 */
final class RegistryNode {
  private RegistryNode() {}

  /** The node's name under its service: "host:port" ("[v6]:port"). */
  static String name(Endpoint e) {
    return e.authority();
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
    String host = Objects.requireNonNull(string(o, "host", true), "a required field is there or string() threw");
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
      return v.getAsInt();
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("field '" + field + "' must be an integer: " + v, e);
    }
  }
}
