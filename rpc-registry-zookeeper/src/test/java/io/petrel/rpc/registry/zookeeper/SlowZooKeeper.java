package io.petrel.rpc.registry.zookeeper;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A ZooKeeper that answers slowly: a TCP proxy on 127.0.0.1 (port 0) in front of a real ZooKeeper, which holds
 * each chunk of ZooKeeper's answers for {@link #delay} before passing it on (in order; a chunk read while others
 * wait is held from when it was read, so answers are late by the delay, not by a growing queue).
 */
final class SlowZooKeeper implements AutoCloseable {
  private final ServerSocket listener;
  private final InetSocketAddress upstream;
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private volatile long delayNanos;
  private volatile boolean closed;

  SlowZooKeeper(String upstreamConnectString) throws IOException {
    int colon = upstreamConnectString.lastIndexOf(':');
    this.upstream = new InetSocketAddress(upstreamConnectString.substring(0, colon),
        Integer.parseInt(upstreamConnectString.substring(colon + 1)));
    this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread accept = new Thread(this::accept, "slow-zk-accept");
    accept.setDaemon(true);
    accept.start();
  }

  String connectString() {
    return "127.0.0.1:" + listener.getLocalPort();
  }

  /** From now on, ZooKeeper's answers reach its clients this much later. */
  void delay(long millis) {
    delayNanos = TimeUnit.MILLISECONDS.toNanos(millis);
  }

  private void accept() {
    while (!closed) {
      try {
        Socket client = listener.accept();
        Socket server = new Socket(upstream.getAddress(), upstream.getPort());
        sockets.add(client);
        sockets.add(server);
        pump(client.getInputStream(), server.getOutputStream(), false);
        pump(server.getInputStream(), client.getOutputStream(), true);
      } catch (IOException e) {
        if (!closed) {
          continue; // ZooKeeper itself not there: the client sees its connection fail, as it would
        }
        return;
      }
    }
  }

  private record Chunk(long due, byte[] bytes) {}

  private void pump(InputStream in, OutputStream out, boolean delayed) {
    BlockingQueue<Chunk> queue = new LinkedBlockingQueue<>();
    Thread reader = new Thread(() -> {
      byte[] buf = new byte[65536];
      try {
        for (int n; (n = in.read(buf)) >= 0; ) {
          queue.add(new Chunk(System.nanoTime() + (delayed ? delayNanos : 0), Arrays.copyOf(buf, n)));
        }
      } catch (IOException e) {
        // closed
      }
      queue.add(new Chunk(0, new byte[0])); // the end
    }, "slow-zk-read");
    Thread writer = new Thread(() -> {
      try {
        while (true) {
          Chunk c = queue.take();
          if (c.bytes.length == 0) {
            break;
          }
          long wait = c.due - System.nanoTime();
          if (wait > 0) {
            TimeUnit.NANOSECONDS.sleep(wait); // the delay this proxy is for
          }
          out.write(c.bytes);
          out.flush();
        }
      } catch (IOException | InterruptedException e) {
        // closed
      }
      try {
        out.close();
      } catch (IOException e) {
        // closed already
      }
    }, "slow-zk-write");
    reader.setDaemon(true);
    writer.setDaemon(true);
    reader.start();
    writer.start();
  }

  @Override
  public void close() throws IOException {
    closed = true;
    listener.close();
    for (Socket s : sockets) {
      s.close();
    }
  }
}
