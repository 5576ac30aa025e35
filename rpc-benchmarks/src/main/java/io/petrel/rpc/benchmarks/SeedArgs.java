package io.petrel.rpc.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The options of a seed workload ({@code --name value}), checked as they are read; every option read is kept,
 * with its value or default, so the run prints exactly what it used.
 */
final class SeedArgs {
  private final Map<String, String> given = new LinkedHashMap<>();
  private final Map<String, String> used = new LinkedHashMap<>();

  SeedArgs(List<String> args) {
    for (int i = 0; i < args.size(); i++) {
      String a = args.get(i);
      if (!a.startsWith("--")) {
        throw new IllegalArgumentException("expected an option (--name value), got: " + a);
      }
      if (i + 1 >= args.size()) {
        throw new IllegalArgumentException("option " + a + " needs a value");
      }
      given.put(a.substring(2), args.get(++i));
    }
  }

  /** True when the command line gave {@code --name}. */
  boolean has(String name) {
    return given.containsKey(name);
  }

  String string(String name, String dflt) {
    String v = given.getOrDefault(name, dflt);
    used.put(name, v);
    return v;
  }

  int integer(String name, int dflt, int min) {
    String v = string(name, Integer.toString(dflt));
    int n;
    try {
      n = Integer.parseInt(v.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--" + name + " must be a number: " + v, e);
    }
    if (n < min) {
      throw new IllegalArgumentException("--" + name + " must be >= " + min + ": " + n);
    }
    return n;
  }

  /** A comma-separated list of integers, each >= {@code min}. */
  List<Integer> integers(String name, String dflt, int min) {
    String v = string(name, dflt);
    List<Integer> out = new ArrayList<>();
    for (String s : v.split(",")) {
      try {
        int n = Integer.parseInt(s.trim());
        if (n < min) {
          throw new IllegalArgumentException("--" + name + ": every value must be >= " + min + ": " + n);
        }
        out.add(n);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("--" + name + " must be numbers separated by commas: " + v, e);
      }
    }
    return out;
  }

  /** Seconds (decimals allowed), > 0 unless {@code zeroOk}. */
  Duration seconds(String name, double dflt, boolean zeroOk) {
    String v = string(name, trim(dflt));
    double s;
    try {
      s = Double.parseDouble(v.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--" + name + " must be seconds: " + v, e);
    }
    if (s < 0 || (s == 0 && !zeroOk) || s > 3600) {
      throw new IllegalArgumentException("--" + name + " must be " + (zeroOk ? ">= 0" : "> 0")
          + " and at most 3600 seconds: " + v);
    }
    return Duration.ofNanos(Math.round(s * 1e9));
  }

  /** Fails naming any option given that the workload did not read. */
  void checkAllUsed(String workload) {
    for (String k : given.keySet()) {
      if (!used.containsKey(k)) {
        throw new IllegalArgumentException("unknown option --" + k + " for " + workload + " (its options: "
            + String.join(", ", used.keySet().stream().map(n -> "--" + n).toList()) + ")");
      }
    }
  }

  /** "--name value ..." of every option the workload read, defaults included. */
  String describe() {
    StringBuilder sb = new StringBuilder();
    used.forEach((k, v) -> sb.append(sb.length() == 0 ? "" : " ").append("--").append(k).append(' ')
        .append(v.isEmpty() || v.contains(" ") ? "'" + v + "'" : v));
    return sb.toString();
  }

  private static String trim(double d) {
    return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
  }
}
