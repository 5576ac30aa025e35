package io.petrel.rpc.spi;

import java.io.IOException;
import java.net.SocketAddress;
import java.util.concurrent.CompletionStage;

/**
 * The transport side of a server: it listens, accepts connections, decodes frames into {@link ServerCall}s for
 * the {@link ServerDispatcher}, and writes their answers back. It owns its threads, its per-connection limits
 * and timeouts, and its back-pressure; the core's server owns the calls, the executor and the lifecycle, and
 * drives a transport through these methods, in this order: {@link #start}, then on shutdown
 * {@link #stopAccepting}, {@link #closeConnections} and {@link #release}.
 */
public interface ServerTransport {

  /** Binds and starts accepting; every decoded call goes to {@code dispatcher}. Throws naming the address. */
  void start(ServerDispatcher dispatcher) throws IOException;

  /** Where it listens; valid after {@link #start}. */
  SocketAddress localAddress();

  /**
   * Shutdown begins: accept no new connections. With {@code goAway} (a graceful shutdown) also tell every open
   * connection to start no new call (the protocol's GOAWAY); calls in flight go on. Without it the connections
   * are about to be closed ({@link #closeConnections} with {@code now}).
   */
  void stopAccepting(boolean goAway);

  /** Calls admitted on its connections and not yet ended (answer written or dropped). */
  long inFlightCalls();

  /**
   * Closes every connection: {@code now} at once (calls in flight fail at the peer), else once what each has
   * queued is written. Completes when all are closed.
   */
  CompletionStage<Void> closeConnections(boolean now);

  /**
   * As {@link #closeConnections(boolean)}, saying {@code why} ("the server shut down and its shutdown grace period
   * ended") to the handlers of the calls the close cuts ({@code ServerContext.cancellationStatus()}); by default
   * the reason is not passed on.
   */
  default CompletionStage<Void> closeConnections(boolean now, String why) {
    return closeConnections(now);
  }

  /** Releases threads and other resources once the connections are closed; completes when done. */
  CompletionStage<Void> release();

  /** Loads the TLS material again for new connections (see {@link io.petrel.rpc.RpcServer#reloadTls()}). */
  default void reloadTls() throws IOException {
    throw new IllegalStateException("this transport has no TLS to reload");
  }

  /** A short description for the start-up log line: "io epoll, 2 worker threads, TLSv1.3 by OpenSSL". */
  String describe();
}
