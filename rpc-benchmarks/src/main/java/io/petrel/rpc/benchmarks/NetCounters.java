package io.petrel.rpc.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * The kernel's counters of one network interface ({@code /sys/class/net/IF/statistics}: rx/tx bytes and
 * packets), read before and after a run. On loopback every packet is sent and received on {@code lo}: its rx
 * and tx are equal and each counts requests and replies both.
 */
record NetCounters(String iface, long rxBytes, long txBytes, long rxPackets, long txPackets) {

  /** Reads the counters of {@code iface}; null (with a message on stderr) where they cannot be read. */
  static @Nullable NetCounters read(String iface) {
    Path dir = Path.of("/sys/class/net", iface, "statistics");
    try {
      return new NetCounters(iface, value(dir, "rx_bytes"), value(dir, "tx_bytes"), value(dir, "rx_packets"),
          value(dir, "tx_packets"));
    } catch (IOException | NumberFormatException e) {
      System.err.println("seed: no network counters for " + iface + " (" + e + "); the traffic columns stay empty");
      return null;
    }
  }

  /** The counters between {@code before} and {@code after}, as seed run counters (empty if either is null). */
  static Map<String, Long> delta(@Nullable NetCounters before, @Nullable NetCounters after) {
    Map<String, Long> m = new TreeMap<>();
    if (before != null && after != null) {
      m.put("net_rx_bytes", after.rxBytes - before.rxBytes);
      m.put("net_tx_bytes", after.txBytes - before.txBytes);
      m.put("net_rx_packets", after.rxPackets - before.rxPackets);
      m.put("net_tx_packets", after.txPackets - before.txPackets);
    }
    return m;
  }

  private static long value(Path dir, String name) throws IOException {
    return Long.parseLong(Files.readString(dir.resolve(name)).trim());
  }
}
