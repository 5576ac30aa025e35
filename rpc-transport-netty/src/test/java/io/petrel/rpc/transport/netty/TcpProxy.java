package io.petrel.rpc.transport.netty;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** A loopback TCP proxy whose connections a test can cut, to kill a client's connection mid-flight. */
final class TcpProxy implements AutoCloseable {
  private final ServerSocket listener;
  private final int targetPort;
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();

  TcpProxy(int targetPort) throws IOException {
    this.targetPort = targetPort;
    this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread acceptor = new Thread(this::acceptLoop, "tcp-proxy-accept");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  int port() {
    return listener.getLocalPort();
  }

  private void acceptLoop() {
    while (!listener.isClosed()) {
      try {
        Socket in = listener.accept();
        Socket out = new Socket();
        out.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort), 5000);
        sockets.add(in);
        sockets.add(out);
        pump(in, out);
        pump(out, in);
      } catch (IOException e) {
        return; // listener closed
      }
    }
  }

  private void pump(Socket from, Socket to) {
    Thread t = new Thread(() -> {
      byte[] buf = new byte[16 * 1024];
      try (InputStream is = from.getInputStream(); OutputStream os = to.getOutputStream()) {
        int n;
        while ((n = is.read(buf)) >= 0) {
          os.write(buf, 0, n);
        }
      } catch (IOException ignored) {
        // cut: fall through and close both sides
      } finally {
        closeQuietly(from);
        closeQuietly(to);
      }
    }, "tcp-proxy-pump");
    t.setDaemon(true);
    t.start();
  }

  /** Resets every proxied connection (the listener stays open). */
  void cutAll() {
    for (Socket s : sockets) {
      try {
        s.setSoLinger(true, 0);
      } catch (IOException ignored) {
        // already closed
      }
      closeQuietly(s);
    }
    sockets.clear();
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
    cutAll();
  }
}
