package chaos;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;

/**
 * DelayProxy LISTEN_IP LISTEN_PORT TARGET_IP TARGET_PORT CONTROL_FILE: a TCP relay that delays the bytes going
 * from the target back to the client by "MEAN JITTER" milliseconds read from CONTROL_FILE (uniform in
 * MEAN +- JITTER, order kept), standing in for tc netem delay, which this kernel lacks.
 */
public final class DelayProxy {
  static volatile long mean;
  static volatile long jitter;

  record Chunk(byte[] data, long dueNanos) {}

  public static void main(String[] a) throws Exception {
    Path control = Path.of(a[4]);
    Thread ctl = new Thread(() -> {
      while (true) {
        try {
          String[] s = Files.readString(control).trim().split("\\s+");
          mean = Long.parseLong(s[0]);
          jitter = Long.parseLong(s[1]);
        } catch (Exception e) {
          mean = 0;
          jitter = 0;
        }
        try {
          Thread.sleep(20);
        } catch (InterruptedException e) {
          return;
        }
      }
    });
    ctl.setDaemon(true);
    ctl.start();
    try (ServerSocket ss = new ServerSocket()) {
      ss.bind(new InetSocketAddress(InetAddress.getByName(a[0]), Integer.parseInt(a[1])));
      System.out.println("delay proxy on " + ss.getLocalSocketAddress() + " -> " + a[2] + ":" + a[3]);
      while (true) {
        Socket c = ss.accept();
        Socket s = new Socket();
        try {
          s.connect(new InetSocketAddress(a[2], Integer.parseInt(a[3])), 3000);
        } catch (Exception e) {
          c.close();
          continue;
        }
        c.setTcpNoDelay(true);
        s.setTcpNoDelay(true);
        pump(c, s, false);
        pump(s, c, true);
      }
    }
  }

  static void pump(Socket from, Socket to, boolean delayed) throws Exception {
    InputStream in = from.getInputStream();
    OutputStream out = to.getOutputStream();
    LinkedBlockingQueue<Chunk> q = new LinkedBlockingQueue<>();
    Thread reader = new Thread(() -> {
      byte[] buf = new byte[16384];
      long lastDue = 0;
      try {
        int n;
        while ((n = in.read(buf)) > 0) {
          long d = 0;
          if (delayed && mean > 0) {
            d = mean + (jitter > 0 ? ThreadLocalRandom.current().nextLong(-jitter, jitter + 1) : 0);
          }
          long due = Math.max(lastDue, System.nanoTime() + d * 1_000_000L);
          lastDue = due;
          q.put(new Chunk(java.util.Arrays.copyOf(buf, n), due));
        }
      } catch (Exception ignored) {
        // closed
      }
      q.add(new Chunk(new byte[0], 0));
    });
    Thread writer = new Thread(() -> {
      try {
        while (true) {
          Chunk c = q.take();
          if (c.data.length == 0) {
            break;
          }
          long wait = c.dueNanos - System.nanoTime();
          if (wait > 0) {
            Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
          }
          out.write(c.data);
          out.flush();
        }
      } catch (Exception ignored) {
        // closed
      }
      try {
        from.close();
        to.close();
      } catch (Exception ignored) {
        // closing
      }
    });
    reader.setDaemon(true);
    writer.setDaemon(true);
    reader.start();
    writer.start();
  }
}
