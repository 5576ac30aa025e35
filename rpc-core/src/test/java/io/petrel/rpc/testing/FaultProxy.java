package io.petrel.rpc.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An in-process TCP proxy on 127.0.0.1 that misbehaves on request, for fault tests and the soak runner: it adds
 * latency, caps bandwidth, cuts what it forwards into slices of a few bytes, swallows everything (black hole),
 * stops reading (so that the sender's buffers fill up), or resets every connection. Faults apply to both
 * directions and can be changed while connections are open; {@link #heal()} turns them all off.
 *
 * <p>Each direction of each connection is a reader thread and a writer thread joined by a small bounded queue,
 * so a slow direction holds at most {@value #QUEUED_CHUNKS} chunks of {@value #CHUNK} bytes before it pushes
 * back on its sender. Every thread is a daemon and ends when its sockets close; {@link #close()} closes all.
 */
public final class FaultProxy implements AutoCloseable {
  private static final int CHUNK = 16 * 1024;
  private static final int QUEUED_CHUNKS = 16;

  private final ServerSocket listener;
  private final InetSocketAddress target;
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private final AtomicInteger accepted = new AtomicInteger();
  private final AtomicLong forwarded = new AtomicLong();
  private volatile long latencyNanos;
  private volatile long bytesPerSecond;
  private volatile int sliceBytes;
  private volatile boolean blackHole;
  private volatile boolean readingPaused;
  private volatile boolean killed;
  private final Object pauseLock = new Object();

  /** Starts a proxy on 127.0.0.1 (a free port) to {@code targetPort} on 127.0.0.1. */
  public FaultProxy(int targetPort) throws IOException {
    this.target = new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort);
    this.listener = new ServerSocket(0, 128, InetAddress.getLoopbackAddress());
    Thread acceptor = new Thread(this::acceptLoop, "fault-proxy-accept-" + listener.getLocalPort());
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /** The port clients connect to. */
  public int port() {
    return listener.getLocalPort();
  }

  /** Connections accepted so far. */
  public int acceptedConnections() {
    return accepted.get();
  }

  /** Bytes forwarded so far, both directions. */
  public long forwardedBytes() {
    return forwarded.get();
  }

  /** Delays every chunk by this much (both directions, pipelined: it adds latency, not a cap on rate). */
  public FaultProxy latency(long amount, TimeUnit unit) {
    latencyNanos = unit.toNanos(amount);
    return this;
  }

  /** Caps each direction of each connection at this many bytes per second; 0 = no cap. */
  public FaultProxy bandwidth(long bytesPerSecond) {
    this.bytesPerSecond = bytesPerSecond;
    return this;
  }

  /** Writes what it forwards in pieces of at most this many bytes, each flushed on its own; 0 = whole chunks. */
  public FaultProxy slice(int bytes) {
    this.sliceBytes = bytes;
    return this;
  }

  /** Swallows everything it reads, in both directions, while keeping the connections open. */
  public FaultProxy blackHole(boolean on) {
    this.blackHole = on;
    return this;
  }

  /**
   * Stops reading from both sides while on: each sender's socket buffers fill up and its writes back up, as
   * with a peer that does not read.
   */
  public FaultProxy pauseReading(boolean on) {
    synchronized (pauseLock) {
      readingPaused = on;
      pauseLock.notifyAll();
    }
    return this;
  }

  /** Turns every fault off; connections stay open. */
  public FaultProxy heal() {
    latencyNanos = 0;
    bytesPerSecond = 0;
    sliceBytes = 0;
    blackHole = false;
    return pauseReading(false);
  }

  /** Resets every open connection (RST, as a crashed peer or a middlebox would); the listener stays open. */
  public void resetAll() {
    // A snapshot: a client that reconnects at once (while this loop still runs) must find its new connection alive.
    java.util.List<Socket> now = new java.util.ArrayList<>(sockets);
    sockets.removeAll(now);
    for (Socket s : now) {
      try {
        s.setSoLinger(true, 0);
      } catch (IOException ignored) {
        // already closed
      }
      closeQuietly(s);
    }
  }

  /**
   * Plays a server that crashed: closes the listener, so new connections are refused, then resets every open
   * connection (RST). The proxy cannot be used again.
   */
  public void kill() throws IOException {
    killed = true;
    listener.close();
    resetAll();
  }

  private void acceptLoop() {
    while (!listener.isClosed()) {
      Socket in;
      try {
        in = listener.accept();
      } catch (IOException e) {
        return; // closed
      }
      accepted.incrementAndGet();
      Socket out = new Socket();
      try {
        out.connect(target, 5000);
      } catch (IOException e) {
        closeQuietly(in); // the target is down: so is the proxied connection
        closeQuietly(out);
        continue;
      }
      sockets.add(in);
      sockets.add(out);
      if (killed) {
        resetAll(); // accepted just before kill() closed the listener: it dies with the others
        return;
      }
      forward(in, out, "c2s");
      forward(out, in, "s2c");
    }
  }

  private record Chunk(byte[] bytes, int length, long dueNanos) {}

  private static final Chunk END = new Chunk(new byte[0], 0, 0);

  private void forward(Socket from, Socket to, String direction) {
    BlockingQueue<Chunk> queue = new ArrayBlockingQueue<>(QUEUED_CHUNKS);
    String name = "fault-proxy-" + direction + "-" + from.getPort();
    Thread reader = new Thread(() -> {
      byte[] buf = new byte[CHUNK];
      try (InputStream is = from.getInputStream()) {
        int n;
        for (;;) {
          awaitReading();
          n = is.read(buf);
          if (n < 0) {
            break;
          }
          if (blackHole || n == 0) {
            continue;
          }
          byte[] copy = java.util.Arrays.copyOf(buf, n);
          queue.put(new Chunk(copy, n, System.nanoTime() + latencyNanos));
        }
      } catch (IOException | InterruptedException e) {
        // cut, reset or closed
      } finally {
        try {
          queue.put(END);
        } catch (InterruptedException ignored) {
          Thread.currentThread().interrupt();
        }
      }
    }, name + "-read");
    Thread writer = new Thread(() -> {
      try (OutputStream os = to.getOutputStream()) {
        for (;;) {
          Chunk c = queue.take();
          if (c == END) {
            break;
          }
          sleepUntil(c.dueNanos());
          int slice = sliceBytes > 0 ? sliceBytes : c.length();
          for (int off = 0; off < c.length(); off += slice) {
            int len = Math.min(slice, c.length() - off);
            long start = System.nanoTime();
            os.write(c.bytes(), off, len);
            os.flush();
            forwarded.addAndGet(len);
            long rate = bytesPerSecond;
            if (rate > 0) {
              sleepUntil(start + len * 1_000_000_000L / rate);
            }
          }
        }
      } catch (IOException | InterruptedException e) {
        // cut, reset or closed
      } finally {
        queue.clear(); // frees a reader blocked on a full queue; it then finds its socket closed
        closeQuietly(from);
        closeQuietly(to);
        sockets.remove(from);
        sockets.remove(to);
      }
    }, name + "-write");
    reader.setDaemon(true);
    writer.setDaemon(true);
    reader.start();
    writer.start();
  }

  private void awaitReading() throws InterruptedException {
    synchronized (pauseLock) {
      while (readingPaused) {
        pauseLock.wait();
      }
    }
  }

  private static void sleepUntil(long nanoTime) throws InterruptedException {
    long left;
    while ((left = nanoTime - System.nanoTime()) > 0) {
      TimeUnit.NANOSECONDS.sleep(left); // the proxy's own pacing, not a test waiting for an event
    }
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException ignored) {
      // nothing to do
    }
  }

  @Override
  public void close() throws IOException {
    listener.close();
    pauseReading(false);
    for (Socket s : sockets) {
      closeQuietly(s);
    }
    sockets.clear();
  }
}
