package io.petrel.rpc.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;

/**
 * A loopback address whose connects hang, as connects to a host gone from the network do (no refusal: the
 * connection request is never answered), for tests of connect timeouts and of what a client does beside such a
 * host. It is a listening socket whose accept queue {@link #open()} fills, so that the kernel drops new connection
 * requests (Linux does; where a full queue refuses instead, {@code open()} throws saying so). Nothing is ever
 * accepted; {@link #close()} frees the port and the sockets that filled the queue.
 *
 * <pre>{@code
 * try (DroppingHost gone = DroppingHost.open()) {
 *   RpcClient client = RpcClient.builder().target("static://" + gone.authority() + ",127.0.0.1:" + live).build();
 *   ...
 * }
 * }</pre>
 */
public final class DroppingHost implements AutoCloseable {
  /** How long {@link #open()} waits for a connect before it counts it dropped. */
  private static final int PROBE_MILLIS = 300;
  /** Connects {@link #open()} makes at most to fill the queue (Linux holds the backlog plus one). */
  private static final int MAX_FILL = 8;

  private final ServerSocket listening;
  private final List<Socket> queued;

  private DroppingHost(ServerSocket listening, List<Socket> queued) {
    this.listening = listening;
    this.queued = queued;
  }

  /**
   * Listens on a free loopback port and fills its accept queue until a connect hangs (a few hundred ms).
   *
   * @throws IllegalStateException if this system refuses, rather than drops, connects to a full queue
   */
  public static DroppingHost open() throws IOException {
    ServerSocket listening = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
    List<Socket> queued = new ArrayList<>();
    try {
      for (int i = 0; i < MAX_FILL; i++) {
        Socket s = new Socket();
        queued.add(s);
        try {
          s.connect(listening.getLocalSocketAddress(), PROBE_MILLIS);
        } catch (SocketTimeoutException dropped) {
          return new DroppingHost(listening, queued);
        }
      }
      throw new IllegalStateException(MAX_FILL + " connects to a listening socket with a full accept queue were all"
          + " accepted: this system does not drop them (on Linux it does); a DroppingHost cannot be made here");
    } catch (IOException | RuntimeException e) {
      closeAll(listening, queued);
      if (e instanceof java.net.ConnectException) {
        throw new IllegalStateException("this system refuses connects to a full accept queue rather than dropping"
            + " them (Linux drops them): a DroppingHost cannot be made here", e);
      }
      throw e;
    }
  }

  /** Its port on the loopback address. */
  public int port() {
    return listening.getLocalPort();
  }

  /** Its loopback address and port. */
  public InetSocketAddress address() {
    return new InetSocketAddress(listening.getInetAddress(), listening.getLocalPort());
  }

  /** "host:port", as a client's target or address takes it. */
  public String authority() {
    return listening.getInetAddress().getHostAddress() + ":" + listening.getLocalPort();
  }

  @Override
  public void close() {
    closeAll(listening, queued);
  }

  private static void closeAll(ServerSocket listening, List<Socket> queued) {
    for (Socket s : queued) {
      try {
        s.close();
      } catch (IOException ignored) {
        // closing: nothing to do
      }
    }
    try {
      listening.close();
    } catch (IOException ignored) {
      // closing: nothing to do
    }
  }
}
