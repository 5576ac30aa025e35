package io.petrel.rpc.transport.netty;

import static io.petrel.rpc.transport.netty.Protocol.TYPE_PING;
import static io.petrel.rpc.transport.netty.Protocol.TYPE_PONG;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.StringValue;
import io.petrel.rpc.RpcClient;
import java.io.BufferedReader;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Weakness 3g of issue 13: a server whose maxConnections is above the process's open-file limit would, in a
 * connection flood, fail {@code accept} with EMFILE and leave new clients hanging in the listen backlog. The
 * server lowers maxConnections below the limit at start ({@code NettyServerTransport.fitToFileLimit}), so it refuses
 * the connections over its cap instead. This test runs a server in a child JVM started with a low open-file
 * limit ({@code prlimit}, or {@code ulimit -n} in bash), floods it with more connections than it may open files,
 * and checks that every connection was either served or refused (none hung), that the server logged why it
 * refused them and what it lowered, and that it serves a new client once the flood is over.
 */
class OpenFileLimitTest extends TransportFixture {
  /** The child's open-file limit (soft and hard). */
  private static final int FILE_LIMIT = 256;
  /** Connections opened at once: more than the child may open files. */
  private static final int FLOOD = FILE_LIMIT + 32;
  /** How long a connection may take to be served or refused. */
  private static final int OUTCOME_TIMEOUT_MILLIS = 10_000;

  private enum Outcome { SERVED, REFUSED }

  @Test
  @Timeout(value = 2, unit = TimeUnit.MINUTES)
  void maxConnectionsIsLoweredBelowTheOpenFileLimitAndAFloodIsRefusedNotLeftHanging() throws Exception {
    List<String> cmd = new ArrayList<>(lowFileLimitLauncher(FILE_LIMIT));
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(List.of("-Xmx256m", "-Dio.netty.leakDetection.level=paranoid",
        "-Dio.netty.leakDetectionLevel=paranoid", "-Dlogback.configurationFile=logback-filelimit.xml",
        "-cp", System.getProperty("java.class.path"), FileLimitServerMain.class.getName()));
    Process child = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    ChildOutput out = new ChildOutput(child.getInputStream());
    List<Socket> flood = new ArrayList<>();
    try {
      String ready = out.await(l -> l.startsWith(FileLimitServerMain.READY), 60, "the child's ready line");
      Matcher m = Pattern.compile("port=(\\d+) maxConnections=(\\d+) maxFiles=(\\d+) openFiles=(\\d+)")
          .matcher(ready);
      assertThat(m.find()).as(ready).isTrue();
      int port = Integer.parseInt(m.group(1));
      int maxConnections = Integer.parseInt(m.group(2));
      long maxFiles = Long.parseLong(m.group(3));
      long openAtStart = Long.parseLong(m.group(4));
      System.out.printf("child under open-file limit %d: maxConnections %d, %d files open at start%n", maxFiles,
          maxConnections, openAtStart);
      assertThat(maxFiles).as("the child's open-file limit").isEqualTo(FILE_LIMIT);
      // What it lowered and why, at start.
      assertThat(maxConnections).isPositive().isLessThan(FILE_LIMIT);
      assertThat(maxConnections + openAtStart).as("connections allowed plus files open at start")
          .isLessThan(FILE_LIMIT);
      String lowered = out.await(l -> l.contains("maxConnections 10000 is more than this process may open"), 1,
          "WARN saying maxConnections was lowered");
      Matcher w = Pattern.compile("\\(open-file limit, ulimit -n, is (\\d+), (\\d+) files are open, (\\d+) kept in"
          + " reserve\\); the server 'file-limit' accepts at most (\\d+) \\(raise the limit to allow more\\)")
          .matcher(lowered);
      assertThat(w.find()).as(lowered).isTrue();
      assertThat(Integer.parseInt(w.group(1))).isEqualTo(FILE_LIMIT);
      assertThat(Integer.parseInt(w.group(3))).as("reserve").isEqualTo(64);
      assertThat(Integer.parseInt(w.group(4))).isEqualTo(maxConnections)
          .isEqualTo(FILE_LIMIT - Integer.parseInt(w.group(2)) - 64);

      // The flood: all connections at once, more than the child may open files.
      for (int i = 0; i < FLOOD; i++) {
        Socket s = new Socket();
        flood.add(s);
        s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 5000);
        s.setSoTimeout(OUTCOME_TIMEOUT_MILLIS);
      }
      int served = 0;
      int refused = 0;
      for (int i = 0; i < FLOOD; i++) {
        Optional<Outcome> o = pingOrClosed(flood.get(i), i + 1);
        if (o.isEmpty()) {
          throw new AssertionError("connection " + (i + 1) + " of " + FLOOD + " was neither served nor refused"
              + " within " + OUTCOME_TIMEOUT_MILLIS + " ms (" + served + " served, " + refused + " refused before"
              + " it): the server stopped accepting, as it does when accept fails with EMFILE. Child output:\n"
              + out.text());
        }
        if (o.get() == Outcome.SERVED) {
          served++;
        } else {
          refused++;
        }
      }
      System.out.printf("flood of %d connections: %d served, %d refused%n", FLOOD, served, refused);
      assertThat(served).as("connections served").isEqualTo(maxConnections);
      assertThat(refused).as("connections refused").isEqualTo(FLOOD - maxConnections);
      // Refused with the reason in the server's log.
      out.await(l -> l.contains("refusing connection from /127.0.0.1:") && l.contains(": " + maxConnections
          + " connections open, the limit maxConnections (raise RpcServer.builder().maxConnections)"), 10,
          "the server's refusal WARN");
      // Still below the limit while holding them all.
      child.getOutputStream().write("FILES\n".getBytes(StandardCharsets.US_ASCII));
      child.getOutputStream().flush();
      String files = out.await(l -> l.startsWith("FILES open="), 10, "the child's open file count");
      long openDuring = Long.parseLong(files.replaceFirst("FILES open=(\\d+).*", "$1"));
      System.out.printf("child holding %d connections: %d files open of %d%n", served, openDuring, maxFiles);
      assertThat(openDuring).isLessThan(FILE_LIMIT);

      // The flood goes away; the next client is served (once the server has seen the closes: an attempt that
      // comes before is refused at once, and tried again).
      for (Socket s : flood) {
        s.close();
      }
      flood.clear();
      Outcome after = Outcome.REFUSED;
      int attempts = 0;
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (after != Outcome.SERVED && attempts < 100 && System.nanoTime() < until) {
        attempts++;
        try (Socket s = new Socket()) {
          s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 5000);
          s.setSoTimeout(OUTCOME_TIMEOUT_MILLIS);
          after = pingOrClosed(s, 1).orElseThrow(() -> new AssertionError("a connection after the flood was"
              + " neither served nor refused. Child output:\n" + out.text()));
        }
      }
      assertThat(after).as("a new connection after the flood (%d attempts)", attempts).isEqualTo(Outcome.SERVED);
      RpcClient client = client(port);
      assertThat(client.unaryCall(TestService.ECHO, StringValue.of("after the flood")).getValue())
          .isEqualTo("after the flood");

      child.getOutputStream().close(); // the child shuts down
      assertThat(child.waitFor(30, TimeUnit.SECONDS)).as("child exited").isTrue();
      out.awaitEnd(10);
      assertThat(child.exitValue()).as("child exit code; output:\n%s", out.text()).isZero();
      assertThat(out.text()).doesNotContain("Too many open files").doesNotContain("LEAK:");
    } finally {
      for (Socket s : flood) {
        s.close();
      }
      if (child.isAlive()) {
        child.destroyForcibly();
        child.waitFor(10, TimeUnit.SECONDS);
      }
    }
  }

  /**
   * Sends a PING on {@code s}: SERVED when the PONG comes back, REFUSED when the server closes (or resets) the
   * connection, empty when neither happens within the socket's timeout.
   */
  private static Optional<Outcome> pingOrClosed(Socket s, int id) throws IOException {
    try {
      OutputStream o = s.getOutputStream();
      o.write(RawPeer.control(TYPE_PING, id));
      o.flush();
      DataInputStream in = new DataInputStream(s.getInputStream());
      byte[] rest;
      do { // the server's SETTINGS frame comes first on an accepted connection; then the PONG
        int length = in.readInt();
        rest = new byte[length];
        in.readFully(rest);
      } while (rest[Protocol.OFF_TYPE - 4] == Protocol.TYPE_SETTINGS);
      assertThat(rest[Protocol.OFF_TYPE - 4]).as("frame type of the answer to a PING").isEqualTo(TYPE_PONG);
      return Optional.of(Outcome.SERVED);
    } catch (SocketTimeoutException e) {
      return Optional.empty();
    } catch (EOFException | SocketException e) {
      return Optional.of(Outcome.REFUSED); // closed by the server: end of stream, reset or broken pipe
    }
  }

  /**
   * The command prefix that runs a program with an open-file limit of {@code limit} (soft and hard): prlimit,
   * else bash's ulimit. Skips the test if neither is on the PATH.
   */
  private static List<String> lowFileLimitLauncher(int limit) {
    Optional<Path> prlimit = onPath("prlimit");
    if (prlimit.isPresent()) {
      return List.of(prlimit.get().toString(), "--nofile=" + limit + ":" + limit, "--");
    }
    Optional<Path> bash = onPath("bash");
    Assumptions.assumeTrue(bash.isPresent(), "neither prlimit nor bash is on the PATH: cannot start a process"
        + " with a low open-file limit");
    return List.of(bash.get().toString(), "-c", "ulimit -n " + limit + " && exec \"$@\"", "bash");
  }

  private static Optional<Path> onPath(String program) {
    String path = System.getenv("PATH");
    if (path == null) {
      return Optional.empty();
    }
    for (String dir : path.split(java.io.File.pathSeparator)) {
      Path p = Path.of(dir, program);
      if (Files.isRegularFile(p) && Files.isExecutable(p)) {
        return Optional.of(p);
      }
    }
    return Optional.empty();
  }
}
