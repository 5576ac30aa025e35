package io.petrel.rpc.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;

/**
 * The benchmark server's side channel: a line protocol on plain TCP, off the measured path. {@code PORTS}
 * answers where each framework listens; {@code STATS} answers the process CPU time and the calls served, from
 * which a client computes server CPU time per call over an interval; {@code CA} answers the certificate of the
 * CA that signed the TLS frameworks' server certificate (base64 of its DER encoding, on one line), which TLS
 * clients trust (and nothing else).
 */
final class ControlServer implements AutoCloseable {
  private static final com.sun.management.OperatingSystemMXBean OS =
      (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

  private final ServerSocket socket;
  private final Supplier<String> ports;
  private final Supplier<Long> calls;
  private final Supplier<String> ca;
  private final Thread acceptor;

  /** {@code ca} gives the {@code CA} answer, or null when no TLS framework is served. */
  ControlServer(InetSocketAddress address, Supplier<String> ports, Supplier<Long> calls, Supplier<String> ca)
      throws IOException {
    this.socket = new ServerSocket();
    socket.setReuseAddress(true);
    socket.bind(address, 16);
    this.ports = ports;
    this.calls = calls;
    this.ca = ca;
    this.acceptor = new Thread(this::acceptLoop, "bench-control");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  int port() {
    return socket.getLocalPort();
  }

  /** Process CPU time of this JVM, all threads (event loops, business pool, GC, JIT), in nanoseconds. */
  static long processCpuNanos() {
    return OS.getProcessCpuTime();
  }

  /**
   * This JVM's memory after a full collection: heap in use, and direct memory (the JDK's direct buffers plus what
   * Petrel's Netty and gRPC's shaded Netty allocate without cleaners), as {@code heap=N direct=N}.
   */
  static String memory() {
    System.gc();
    return "heap=" + java.lang.management.ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed()
        + " direct=" + directMemory();
  }

  /**
   * Direct memory in use by this JVM, each byte counted once: the JDK's direct buffers, plus what each Netty
   * (Petrel's, and gRPC-java's shaded one) allocates without a cleaner. A Netty that allocates through the JDK
   * ({@code ByteBuffer.allocateDirect}, its default on Java 17 without {@code --add-opens}) is already in the JDK's
   * figure, and its own counter counts the same bytes again (Netty 4.2 and gRPC's 4.1 both do): its counter is
   * added only when it uses buffers without cleaners, which the JDK does not see.
   */
  static long directMemory() {
    long jdk = 0;
    for (java.lang.management.BufferPoolMXBean b
        : java.lang.management.ManagementFactory.getPlatformMXBeans(java.lang.management.BufferPoolMXBean.class)) {
      if (b.getName().equals("direct")) {
        jdk = b.getMemoryUsed();
      }
    }
    long petrel = io.netty.util.internal.PlatformDependent.useDirectBufferNoCleaner()
        ? Math.max(0, io.netty.util.internal.PlatformDependent.usedDirectMemory()) : 0;
    long grpc = io.grpc.netty.shaded.io.netty.util.internal.PlatformDependent.useDirectBufferNoCleaner()
        ? Math.max(0, io.grpc.netty.shaded.io.netty.util.internal.PlatformDependent.usedDirectMemory()) : 0;
    return jdk + petrel + grpc;
  }

  /** Sends one command to a control port and returns the one-line answer. */
  static String ask(String host, int port, String command) throws IOException {
    return Endpoints.exchange(new InetSocketAddress(InetAddress.getByName(host), port), command);
  }

  private void acceptLoop() {
    while (!socket.isClosed()) {
      try {
        Socket s = socket.accept();
        Thread t = new Thread(() -> serve(s), "bench-control-conn");
        t.setDaemon(true);
        t.start();
      } catch (SocketException closed) {
        return;
      } catch (IOException e) {
        System.err.println("control: accept failed: " + e);
      }
    }
  }

  private void serve(Socket s) {
    try (s) {
      s.setSoTimeout(60_000);
      BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII));
      OutputStream out = s.getOutputStream();
      String line;
      while ((line = in.readLine()) != null) {
        String reply = switch (line.trim()) {
          case "PORTS" -> ports.get();
          case "STATS" -> "cpu_ns=" + processCpuNanos() + " calls=" + calls.get();
          case "CA" -> {
            String c = ca.get();
            yield c != null ? c : "ERROR this server serves no TLS framework (see its --frameworks option)";
          }
          case "MEM" -> memory();
          case "QUIT" -> null;
          default -> "ERROR unknown command '" + line.trim() + "' (PORTS, STATS, MEM, CA, QUIT)";
        };
        if (reply == null) {
          return;
        }
        out.write((reply + "\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
      }
    } catch (IOException e) {
      // The client went away; nothing to clean up beyond the socket.
    }
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
