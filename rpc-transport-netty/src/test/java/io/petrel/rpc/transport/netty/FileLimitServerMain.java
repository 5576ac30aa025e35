package io.petrel.rpc.transport.netty;

import io.petrel.rpc.RpcServer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * The child process of {@link OpenFileLimitTest}: a Petrel server on 127.0.0.1 (free port) with the default
 * maxConnections, started by the test under a low open-file limit. It prints {@value #READY} with its port, the
 * maxConnections in force and the limits it sees, answers {@code FILES} on standard input with its open file
 * count, and shuts down when standard input closes.
 */
public final class FileLimitServerMain {
  static final String READY = "file-limit-server ready";

  private FileLimitServerMain() {}

  public static void main(String[] args) throws Exception {
    RpcServer server = RpcServer.builder()
        .bindAddress("127.0.0.1", 0)
        .addService(new TestService().definition())
        .option(NettyOptions.WORKER_THREADS, 1)
        .name("file-limit")
        .build()
        .start();
    NettyServerTransport transport = (NettyServerTransport) ((io.petrel.rpc.internal.ServerImpl) server).transport();
    System.out.println(READY + " port=" + server.port() + " maxConnections=" + transport.maxConnections()
        + " maxFiles=" + maxFiles() + " openFiles=" + openFiles());
    System.out.flush();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
    String line;
    while ((line = in.readLine()) != null) {
      if (line.trim().equals("FILES")) {
        System.out.println("FILES open=" + openFiles() + " max=" + maxFiles());
        System.out.flush();
      }
    }
    server.shutdownNow();
    boolean done = server.awaitTermination(10, TimeUnit.SECONDS);
    System.out.println("file-limit-server stopped, terminated=" + done);
    System.out.flush();
    System.exit(done ? 0 : 1);
  }

  private static long maxFiles() {
    return ((com.sun.management.UnixOperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getMaxFileDescriptorCount();
  }

  private static long openFiles() {
    return ((com.sun.management.UnixOperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getOpenFileDescriptorCount();
  }
}
