package io.petrel.rpc.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.EnumMap;
import java.util.Map;

/**
 * Where a benchmark server's frameworks listen, as its control port tells. Clients never assume the port
 * layout: they ask ({@code PORTS}), so a server on ephemeral ports works the same as one on 7000..7005.
 */
public record Endpoints(String host, int controlPort, Map<Framework, Integer> ports) {

  /** Asks the control port at {@code host:controlPort} where everything is. */
  public static Endpoints discover(String host, int controlPort) throws IOException {
    String line;
    try {
      line = ControlServer.ask(host, controlPort, "PORTS");
    } catch (java.net.ConnectException e) {
      throw new java.net.ConnectException("no benchmark server at " + host + ":" + controlPort + " (" + e.getMessage()
          + "): start one there with `java -cp benchmarks.jar io.petrel.rpc.benchmarks.BenchmarkServer --port "
          + controlPort + "`, or leave out the host to let each trial start its own");
    }
    Map<Framework, Integer> ports = new EnumMap<>(Framework.class);
    for (String kv : line.trim().split(" ")) {
      int eq = kv.indexOf('=');
      if (eq > 0) {
        ports.put(Framework.valueOf(kv.substring(0, eq).toUpperCase(java.util.Locale.ROOT)),
            Integer.parseInt(kv.substring(eq + 1)));
      }
    }
    return new Endpoints(host, controlPort, ports);
  }

  /** The port of {@code f}; fails with a message naming the server when it does not serve {@code f}. */
  public int port(Framework f) {
    Integer p = ports.get(f);
    if (p == null) {
      throw new IllegalStateException("the benchmark server at " + host + ":" + controlPort + " does not serve "
          + f.key() + " (it serves " + ports.keySet() + "; see its --frameworks option)");
    }
    return p;
  }

  /**
   * The certificate of the CA that signed the server's TLS certificate, from the control port ({@code CA}):
   * what a TLS client trusts.
   */
  public X509Certificate caCertificate() throws IOException {
    String line = ControlServer.ask(host, controlPort, "CA");
    if (line.startsWith("ERROR")) {
      throw new IOException("the benchmark server at " + host + ":" + controlPort + " has no TLS CA to give: "
          + line + (line.contains("unknown command") ? " (a server older than the TLS frameworks?)" : ""));
    }
    try {
      return BenchCertificates.parseCaLine(line);
    } catch (CertificateException e) {
      throw new IOException("bad CA reply from the benchmark server at " + host + ":" + controlPort + ": " + e, e);
    }
  }

  /** The server's counters now: process CPU time and calls served. */
  public ServerSample sample() throws IOException {
    return ServerSample.parse(ControlServer.ask(host, controlPort, "STATS"));
  }

  /** A reading of the server's counters. */
  public record ServerSample(long cpuNanos, long calls) {
    static ServerSample parse(String line) {
      long cpu = -1;
      long calls = -1;
      for (String kv : line.trim().split(" ")) {
        if (kv.startsWith("cpu_ns=")) {
          cpu = Long.parseLong(kv.substring(7));
        } else if (kv.startsWith("calls=")) {
          calls = Long.parseLong(kv.substring(6));
        }
      }
      if (cpu < 0 || calls < 0) {
        throw new IllegalStateException("bad STATS reply from the benchmark server: " + line);
      }
      return new ServerSample(cpu, calls);
    }
  }

  static String exchange(InetSocketAddress address, String command) throws IOException {
    try (Socket s = new Socket()) {
      s.connect(address, 5000);
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      out.write((command + "\n").getBytes(StandardCharsets.US_ASCII));
      out.flush();
      BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII));
      String line = in.readLine();
      if (line == null) {
        throw new IOException("the benchmark server at " + address + " closed the control connection");
      }
      return line;
    }
  }
}
