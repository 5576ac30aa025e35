package io.petrel.rpc.benchmarks;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.DataFormatException;
import org.HdrHistogram.Histogram;
import org.jspecify.annotations.Nullable;

/**
 * One row of a seed workload's results, before it is formatted: which case it is ({@code labels}, e.g.
 * framework and payload), the calls that succeeded, failed and were refused, the measured seconds, the latency
 * of the successful calls (nanoseconds), counters (network bytes, server CPU time, ...) and the return values.
 *
 * <p>Runs of the same case from several client processes or machines {@linkplain #merge merge} into one:
 * counts, counters and histograms add up, except counters named {@code server_*} (the one server's own
 * readings, which every client takes over the same window), window lengths ({@code *_millis}) and
 * {@code seconds}, which take the largest.
 */
record SeedRun(String seed, Map<String, String> labels, long ok, long failed, long refused, double seconds,
    Histogram latency, Map<String, Long> counters, Map<String, Long> returns, @Nullable String error) {

  private static final Gson GSON = new GsonBuilder().disableHtmlEscaping().create();

  /** Calls per second that succeeded. */
  double tps() {
    return seconds > 0 ? ok / seconds : Double.NaN;
  }

  /** Latency in milliseconds at {@code percentile} (0-100), or NaN without calls. */
  double ms(double percentile) {
    return latency.getTotalCount() == 0 ? Double.NaN : latency.getValueAtPercentile(percentile) / 1e6;
  }

  double meanMs() {
    return latency.getTotalCount() == 0 ? Double.NaN : latency.getMean() / 1e6;
  }

  double minMs() {
    return latency.getTotalCount() == 0 ? Double.NaN : latency.getMinValue() / 1e6;
  }

  double maxMs() {
    return latency.getTotalCount() == 0 ? Double.NaN : latency.getMaxValue() / 1e6;
  }

  long counter(String name) {
    return counters.getOrDefault(name, 0L);
  }

  String label(String name) {
    return labels.getOrDefault(name, "");
  }

  /** The case's identity: seed and labels. */
  String key() {
    return seed + labels;
  }

  /** Runs of the same case (same seed and labels) from concurrent clients, as one. */
  static SeedRun merge(List<SeedRun> runs) {
    SeedRun first = runs.get(0);
    Histogram h = new Histogram(3);
    long ok = 0;
    long failed = 0;
    long refused = 0;
    double seconds = 0;
    Map<String, Long> counters = new TreeMap<>();
    Map<String, Long> returns = new TreeMap<>();
    String error = null;
    for (SeedRun r : runs) {
      if (!r.key().equals(first.key())) {
        throw new IllegalArgumentException("cannot merge " + r.key() + " into " + first.key());
      }
      h.add(r.latency);
      ok += r.ok;
      failed += r.failed;
      refused += r.refused;
      seconds = Math.max(seconds, r.seconds);
      r.counters.forEach((k, v) -> counters.merge(k, v, takesLargest(k) ? Math::max : Long::sum));
      r.returns.forEach((k, v) -> returns.merge(k, v, Long::sum));
      error = error != null ? error : r.error;
    }
    return new SeedRun(first.seed, first.labels, ok, failed, refused, seconds, h, counters, returns, error);
  }

  /** The server's own readings ({@code server_*}) and window lengths ({@code *_millis}) do not add up. */
  private static boolean takesLargest(String counter) {
    return counter.startsWith("server_") || counter.endsWith("_millis");
  }

  /** Merges runs by case, keeping the order in which each case first appears. */
  static List<SeedRun> mergeAll(List<SeedRun> runs) {
    Map<String, List<SeedRun>> byKey = new LinkedHashMap<>();
    for (SeedRun r : runs) {
      byKey.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(r);
    }
    List<SeedRun> merged = new ArrayList<>();
    byKey.values().forEach(l -> merged.add(merge(l)));
    return merged;
  }

  JsonObject toJson() {
    JsonObject o = new JsonObject();
    o.addProperty("seed", seed);
    o.add("labels", GSON.toJsonTree(labels));
    o.addProperty("ok", ok);
    o.addProperty("failed", failed);
    o.addProperty("refused", refused);
    o.addProperty("seconds", seconds);
    ByteBuffer buf = ByteBuffer.allocate(latency.getNeededByteBufferCapacity());
    int n = latency.encodeIntoCompressedByteBuffer(buf);
    o.addProperty("latency", Base64.getEncoder().encodeToString(java.util.Arrays.copyOf(buf.array(), n)));
    o.add("counters", GSON.toJsonTree(counters));
    o.add("returns", GSON.toJsonTree(returns));
    if (error != null) {
      o.addProperty("error", error);
    }
    return o;
  }

  static SeedRun fromJson(JsonObject o) {
    Histogram h;
    try {
      h = Histogram.decodeFromCompressedByteBuffer(
          ByteBuffer.wrap(Base64.getDecoder().decode(o.get("latency").getAsString())), 0);
    } catch (DataFormatException e) {
      throw new IllegalArgumentException("bad latency histogram in a seed result: " + e, e);
    }
    return new SeedRun(o.get("seed").getAsString(), stringMap(o.getAsJsonObject("labels")),
        o.get("ok").getAsLong(), o.get("failed").getAsLong(), o.get("refused").getAsLong(),
        o.get("seconds").getAsDouble(), h, longMap(o.getAsJsonObject("counters")),
        longMap(o.getAsJsonObject("returns")), o.has("error") ? o.get("error").getAsString() : null);
  }

  /** A JSON array of runs, as {@code --json FILE} writes it. */
  static String toJson(List<SeedRun> runs) {
    JsonArray a = new JsonArray();
    runs.forEach(r -> a.add(r.toJson()));
    return GSON.toJson(a);
  }

  static List<SeedRun> parseAll(String json) {
    List<SeedRun> runs = new ArrayList<>();
    for (JsonElement e : JsonParser.parseString(json).getAsJsonArray()) {
      runs.add(fromJson(e.getAsJsonObject()));
    }
    return runs;
  }

  private static Map<String, String> stringMap(JsonObject o) {
    Map<String, String> m = new LinkedHashMap<>();
    o.entrySet().forEach(e -> m.put(e.getKey(), e.getValue().getAsString()));
    return m;
  }

  private static Map<String, Long> longMap(JsonObject o) {
    Map<String, Long> m = new TreeMap<>();
    if (o != null) {
      o.entrySet().forEach(e -> m.put(e.getKey(), e.getValue().getAsLong()));
    }
    return m;
  }
}
