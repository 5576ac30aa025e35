package io.petrel.rpc.transport.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.StringValue;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.RpcClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Peers that ask for large responses and never read them (or read one byte a second), against a server with
 * default options in a child JVM with a 256 MiB heap ({@link MemoryAttackServerMain}). While they attack, a
 * well-behaved client keeps calling. Pass: no {@code Error} in the server, its live heap (after a full collection) and
 * direct memory within the documented budget (maxBufferedBytes above what it held at rest, plus a margin for
 * what each connection holds within its socket and write buffer), every call of the good client answered, the
 * attackers disconnected, and a new client served right after.
 */
class MemoryAttackTest {
  private static final long MIB = 1024 * 1024;
  /** Beyond maxBufferedBytes: the handlers' responses in flight, write buffers, read batches, the JVM's churn. */
  private static final long MARGIN = 48 * MIB;

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES)
  void eightPeersAskingForTwoThousandResponsesOf64KiBAndNeverReading() throws Exception {
    attack(8, 2000, 64 * 1024, false);
  }

  @Test
  @Timeout(value = 4, unit = TimeUnit.MINUTES)
  void aHundredPeersAskingForResponsesOf4KiBAndNeverReading() throws Exception {
    attack(100, 2000, 4 * 1024, false);
  }

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES)
  void eightPeersReadingOneByteASecond() throws Exception {
    attack(8, 2000, 64 * 1024, true);
  }

  /**
   * A handler that runs the heap out (a real OutOfMemoryError in a 256 MiB heap): the server says so once and
   * stops, and the process ends (here: its main thread exits when the server has terminated), instead of living
   * on half dead.
   */
  @Test
  @Timeout(value = 2, unit = TimeUnit.MINUTES)
  void aHandlerThatRunsTheHeapOutStopsTheServerAndSaysSo() throws Exception {
    Process child = startChild();
    ChildOutput out = new ChildOutput(child.getInputStream());
    try {
      String ready = out.await(l -> l.startsWith(MemoryAttackServerMain.READY), 60, "the child's ready line");
      Matcher m = Pattern.compile("port=(\\d+)").matcher(ready);
      assertThat(m.find()).isTrue();
      try (RpcClient client = RpcClient.builder().address("127.0.0.1", Integer.parseInt(m.group(1))).build()) {
        // new byte[1_000_000_000] in a 256 MiB heap
        assertThatThrownBy(() -> client.unaryCall(TestService.BIG_RESPONSE, new Object[] {1_000_000_000}))
            .isInstanceOf(io.petrel.rpc.StatusException.class);
      }
      out.await(l -> l.contains("ERROR") && l.contains("is stopping: java.lang.OutOfMemoryError"), 20,
          "the server's ERROR line");
      out.await(l -> l.equals("memory-attack-server terminated by itself"), 30, "the server's stop");
      assertThat(child.waitFor(30, TimeUnit.SECONDS)).as("child ended").isTrue();
      assertThat(child.exitValue()).isEqualTo(3);
      assertThat(out.text()).doesNotContain("UNCAUGHT");
    } finally {
      child.destroyForcibly();
    }
  }

  private static Process startChild() throws IOException {
    List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
        "-Dio.netty.leakDetection.level=" + System.getProperty("io.netty.leakDetection.level", "simple"),
        "-Dlogback.configurationFile=logback-filelimit.xml",
        "-cp", System.getProperty("java.class.path"), MemoryAttackServerMain.class.getName());
    return new ProcessBuilder(cmd).redirectErrorStream(true).start();
  }

  private void attack(int connections, int requests, int responseBytes, boolean trickle) throws Exception {
    Process child = startChild();
    ChildOutput out = new ChildOutput(child.getInputStream());
    ExecutorService senders = Executors.newFixedThreadPool(connections); // a send may block: one thread each
    ScheduledExecutorService readers = Executors.newSingleThreadScheduledExecutor();
    List<RawPeer> attackers = new ArrayList<>();
    RpcClient good = null;
    try {
      String ready = out.await(l -> l.startsWith(MemoryAttackServerMain.READY), 60, "the child's ready line");
      Matcher m = Pattern.compile("port=(\\d+) maxBufferedBytes=(\\d+) perConnection=(\\d+) heapAtRest=(\\d+)"
          + " directAtRest=(\\d+)").matcher(ready);
      assertThat(m.find()).as(ready).isTrue();
      int port = Integer.parseInt(m.group(1));
      long budget = Long.parseLong(m.group(2));
      long heapAtRest = Long.parseLong(m.group(4));
      long directAtRest = Long.parseLong(m.group(5));
      good = RpcClient.builder().address("127.0.0.1", port).build();
      assertThat(good.unaryCall(TestService.ECHO, StringValue.of("warm")).getValue()).isEqualTo("warm");
      out.await(l -> l.equals("CONN open=1"), 10, "the good client's connection");
      int linesBefore = out.lines().size();

      long start = System.nanoTime();
      for (int c = 0; c < connections; c++) {
        RawPeer p = new RawPeer(port, 4096);
        attackers.add(p);
        byte[] all = pipeline(requests, responseBytes);
        senders.execute(() -> {
          try {
            p.send(all); // may block once the server stops reading: that is the point
          } catch (IOException e) {
            // closed by the server
          }
        });
        if (trickle) {
          InputStream in = p.socket.getInputStream();
          readers.scheduleAtFixedRate(() -> {
            try {
              if (in.read() < 0) {
                throw new IllegalStateException("closed"); // ends this reader
              }
            } catch (IOException e) {
              throw new IllegalStateException(e);
            }
          }, 1, 1, TimeUnit.SECONDS);
        }
      }
      // The good client calls throughout, until the attackers are gone (bounded in count and time).
      AtomicBoolean attackersGone = new AtomicBoolean();
      Thread watcher = new Thread(() -> {
        try {
          out.awaitAfter(linesBefore, l -> l.equals("CONN open=1"), 150, "the attackers' disconnection");
          attackersGone.set(true);
        } catch (Throwable e) {
          // the assertion below reports it
        }
      });
      watcher.setDaemon(true);
      watcher.start();
      int calls = 0;
      long slowest = 0;
      long deadline = start + TimeUnit.SECONDS.toNanos(150);
      while (!attackersGone.get() && System.nanoTime() < deadline && calls < 2_000_000) {
        long t0 = System.nanoTime();
        StringValue r = good.unaryCall(TestService.ECHO, StringValue.of("during " + calls),
            CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(10)));
        assertThat(r.getValue()).isEqualTo("during " + calls);
        slowest = Math.max(slowest, System.nanoTime() - t0);
        calls++;
      }
      watcher.join(TimeUnit.SECONDS.toMillis(5));
      long gone = System.nanoTime() - start;
      assertThat(attackersGone.get()).as("attackers disconnected within 150 s; child output:\n%s", out.text())
          .isTrue();
      // A new client is served right away.
      try (RpcClient fresh = RpcClient.builder().address("127.0.0.1", port).build()) {
        assertThat(fresh.unaryCall(TestService.ECHO, StringValue.of("after")).getValue()).isEqualTo("after");
      }
      OutputStream stdin = child.getOutputStream();
      stdin.write("MEM\n".getBytes(StandardCharsets.US_ASCII));
      stdin.flush();
      String mem = out.await(l -> l.startsWith("MEM "), 10, "the child's memory report");
      Matcher mm = Pattern.compile("peakLiveHeap=(\\d+) peakDirect=(\\d+) peakHeapAfterGc=(\\d+)").matcher(mem);
      assertThat(mm.find()).as(mem).isTrue();
      long heap = Long.parseLong(mm.group(1));
      long direct = Long.parseLong(mm.group(2));
      long afterYoung = Long.parseLong(mm.group(3));
      System.out.printf("attack: %d connections x %d requests for %d B%s; server budget %d MiB; heap after GC at"
              + " rest %d MiB, live peak %d MiB (after young collections up to %d MiB); direct at rest %d MiB, peak %d"
              + " MiB; good client %d calls, slowest %.1f ms; attackers disconnected after %.1f s%n",
          connections, requests, responseBytes, trickle ? ", reading 1 B/s" : ", never reading", budget / MIB,
          heapAtRest / MIB, heap / MIB, afterYoung / MIB, directAtRest / MIB, direct / MIB, calls, slowest / 1e6,
          gone / 1e9);
      assertThat(out.text()).as("child output").doesNotContain("OutOfMemoryError").doesNotContain("UNCAUGHT")
          .doesNotContain("LEAK:");
      assertThat(heap - heapAtRest).as("live heap held above rest (bytes)").isLessThan(budget + MARGIN);
      assertThat(direct - directAtRest).as("direct memory held above rest (bytes)").isLessThan(budget + MARGIN);
      assertThat(calls).as("good client's calls during the attack").isPositive();
    } finally {
      if (good != null) {
        good.shutdownNow();
      }
      senders.shutdownNow();
      readers.shutdownNow();
      for (RawPeer p : attackers) {
        p.close();
      }
      child.getOutputStream().close();
      if (!child.waitFor(30, TimeUnit.SECONDS)) {
        child.destroyForcibly();
        throw new AssertionError("the child server did not stop within 30 s of its standard input closing:\n"
            + out.text());
      }
      assertThat(child.exitValue()).as("child exit; output:\n%s", out.text()).isZero();
    }
  }

  private static byte[] pipeline(int requests, int responseBytes) {
    byte[] one = RawPeer.request(TestService.BIG_RESPONSE, 1, 0, new Object[] {responseBytes});
    byte[] all = new byte[one.length * requests];
    for (int i = 0; i < requests; i++) {
      byte[] r = RawPeer.request(TestService.BIG_RESPONSE, i + 1, 0, new Object[] {responseBytes});
      System.arraycopy(r, 0, all, i * r.length, r.length);
    }
    return all;
  }
}
