package io.petrel.rpc.registry.zookeeper;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;

/**
 * A ZooKeeper that answers slowly: a TCP proxy on 127.0.0.1 (port 0) in front of a real ZooKeeper, which passes
 * the clients' requests on at once and holds each of ZooKeeper's answers for {@link #delay} before passing it on
 * (in order). It reads ZooKeeper's protocol (length-prefixed packets: a request's header is its xid and operation,
 * then, for the operations on a node, the node's path; an answer's header starts with the xid of the request it
 * answers), so that a test can wait for events instead of guessing times: {@link #awaitHeld} returns when a request
 * of the kind it names has been received and its answer is being held, and {@link #awaitAllClosed} when every
 * client connection has ended (the client closed it: nothing more can reach the client through this proxy).
 */
final class SlowZooKeeper implements AutoCloseable {
  /** ZooKeeper's operation codes (ZooDefs.OpCode) of the requests a test waits for. */
  static final int CREATE2 = 15;
  static final int CREATE_CONTAINER = 19;
  static final int EXISTS = 3;
  static final int CLOSE_SESSION = -11;

  /** A request received from a client: its connection (in the order accepted), xid, operation and path. */
  record Request(int connection, int xid, int op, String path) {
    @Override
    public String toString() {
      String name = switch (op) {
        case 1 -> "create";
        case 2 -> "delete";
        case EXISTS -> "exists";
        case 4 -> "getData";
        case 8 -> "getChildren";
        case 12 -> "getChildren2";
        case CREATE2 -> "create2";
        case CREATE_CONTAINER -> "createContainer";
        case CLOSE_SESSION -> "closeSession";
        default -> "op " + op;
      };
      return name + (path.isEmpty() ? "" : " " + path);
    }
  }

  private final ServerSocket listener;
  private final InetSocketAddress upstream;
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private volatile long delayNanos;
  private volatile long delayFromNanos;
  private volatile @org.jspecify.annotations.Nullable Integer delayFromOp;
  private volatile boolean closed;

  private final Object lock = new Object();
  /** Requests received and not answered yet (answers of closed connections never come: dropped). */
  private final List<Request> held = new ArrayList<>(); // guarded by lock
  /** The last requests received, for the message of a wait that timed out. */
  private final java.util.ArrayDeque<Request> recent = new java.util.ArrayDeque<>(); // guarded by lock
  private int accepted; // guarded by lock
  private int open; // guarded by lock

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

  /**
   * From the first request of operation {@code op} received from now on, ZooKeeper's answers (that request's and
   * the ones after it) reach its clients {@code millis} later: ZooKeeper goes silent at a request, whatever the
   * timing.
   */
  void delayFrom(int op, long millis) {
    delayFromNanos = TimeUnit.MILLISECONDS.toNanos(millis);
    delayFromOp = op;
  }

  /**
   * Waits until a request that {@code which} accepts has been received and its answer is held (it is now, or the
   * next such request), and returns it.
   */
  Request awaitHeld(Predicate<Request> which, long timeoutMillis) throws InterruptedException, TimeoutException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    synchronized (lock) {
      while (true) {
        for (Request r : held) {
          if (which.test(r)) {
            return r;
          }
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new TimeoutException("no such request held within " + timeoutMillis + " ms; held now: " + held
              + "; the last requests: " + recent);
        }
        TimeUnit.NANOSECONDS.timedWait(lock, left);
      }
    }
  }

  /**
   * Waits until every connection accepted so far has ended (its client closed it, or ZooKeeper did): nothing
   * more of ZooKeeper's reaches those clients.
   */
  void awaitAllClosed(long timeoutMillis) throws InterruptedException, TimeoutException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    synchronized (lock) {
      while (open > 0) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new TimeoutException(open + " client connection(s) still open after " + timeoutMillis + " ms");
        }
        TimeUnit.NANOSECONDS.timedWait(lock, left);
      }
    }
  }

  private void accept() {
    while (!closed) {
      try {
        Socket client = listener.accept();
        Socket server = new Socket(upstream.getAddress(), upstream.getPort());
        sockets.add(client);
        sockets.add(server);
        int id;
        synchronized (lock) {
          id = accepted++;
          open++;
        }
        new Connection(id, client, server).start();
      } catch (IOException e) {
        if (!closed) {
          continue; // ZooKeeper itself not there: the client sees its connection fail, as it would
        }
        return;
      }
    }
  }

  /** One client's connection: a thread for each direction, and one delivering ZooKeeper's answers when due. */
  private final class Connection {
    private final int id;
    private final Socket client;
    private final Socket server;
    private final ScheduledExecutorService deliver;
    private long lastDue; // in the reading thread of ZooKeeper's answers: they stay in order

    Connection(int id, Socket client, Socket server) {
      this.id = id;
      this.client = client;
      this.server = server;
      this.deliver = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "slow-zk-deliver-" + id);
        t.setDaemon(true);
        return t;
      });
    }

    void start() {
      Thread requests = new Thread(this::requests, "slow-zk-requests-" + id);
      Thread answers = new Thread(this::answers, "slow-zk-answers-" + id);
      requests.setDaemon(true);
      answers.setDaemon(true);
      requests.start();
      answers.start();
    }

    /** The client's requests, passed on at once; each one noted as held until its answer is passed on. */
    private void requests() {
      try {
        DataInputStream in = new DataInputStream(client.getInputStream());
        OutputStream out = server.getOutputStream();
        boolean first = true; // the connect request, without a request header
        for (byte[] packet; (packet = readPacket(in)) != null; first = false) {
          ByteBuffer b = ByteBuffer.wrap(packet, 4, packet.length - 4);
          if (!first && b.remaining() >= 8) {
            int xid = b.getInt();
            int op = b.getInt();
            if (xid > 0) { // not a ping (-2), an authentication (-4) or the watches set again (-8)
              String path = "";
              if (op != CLOSE_SESSION && b.remaining() >= 4) {
                int len = b.getInt();
                if (len >= 0 && len <= b.remaining()) {
                  path = new String(packet, b.position(), len, StandardCharsets.UTF_8);
                }
              }
              Integer from = delayFromOp;
              if (from != null && from == op) { // before ZooKeeper has it: its answer comes after the change
                delayNanos = delayFromNanos;
                delayFromOp = null;
              }
              synchronized (lock) {
                Request r = new Request(id, xid, op, path);
                held.add(r);
                recent.addLast(r);
                if (recent.size() > 20) {
                  recent.removeFirst();
                }
                lock.notifyAll();
              }
            }
          }
          out.write(packet);
          out.flush();
        }
      } catch (IOException e) {
        // closed
      }
      closeSockets(); // the client is gone: ZooKeeper's side too, which ends the answers
    }

    /** ZooKeeper's answers, each passed on when due; its request no longer held once it is. */
    private void answers() {
      try {
        DataInputStream in = new DataInputStream(server.getInputStream());
        OutputStream out = client.getOutputStream();
        boolean first = true; // the connect response, without a reply header
        for (byte[] read; (read = readPacket(in)) != null; first = false) {
          byte[] packet = read;
          int xid = first || packet.length < 8 ? 0 : ByteBuffer.wrap(packet, 4, 4).getInt();
          long now = System.nanoTime();
          long due = Math.max(now + delayNanos, lastDue);
          lastDue = due;
          deliver.schedule(() -> {
            try {
              out.write(packet);
              out.flush();
            } catch (IOException e) {
              return; // closed: not answered
            }
            if (xid > 0) {
              synchronized (lock) {
                held.removeIf(r -> r.connection() == id && r.xid() == xid);
                lock.notifyAll();
              }
            }
          }, due - now, TimeUnit.NANOSECONDS);
        }
      } catch (IOException e) {
        // closed
      }
      deliver.schedule(() -> { // after the answers read so far
        closeSockets();
        synchronized (lock) {
          held.removeIf(r -> r.connection() == id); // never answered now
          open--;
          lock.notifyAll();
        }
      }, Math.max(0, lastDue - System.nanoTime()), TimeUnit.NANOSECONDS);
      deliver.shutdown();
    }

    private void closeSockets() {
      for (Socket s : List.of(client, server)) {
        try {
          s.close();
        } catch (IOException e) {
          // closed already
        }
      }
    }
  }

  /** A packet with its 4-byte length prefix, or null at the end of the stream. */
  private static byte[] readPacket(DataInputStream in) throws IOException {
    int len;
    try {
      len = in.readInt();
    } catch (EOFException e) {
      return null;
    }
    if (len < 0 || len > (64 << 20)) {
      throw new IOException("not ZooKeeper's protocol: a packet of " + len + " bytes");
    }
    byte[] packet = new byte[4 + len];
    ByteBuffer.wrap(packet).putInt(len);
    in.readFully(packet, 4, len);
    return packet;
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
