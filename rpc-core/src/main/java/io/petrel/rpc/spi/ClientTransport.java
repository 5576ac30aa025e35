package io.petrel.rpc.spi;

import io.petrel.rpc.CallOptions;
import io.petrel.rpc.Deadline;
import io.petrel.rpc.Endpoint;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.StatusException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import org.jspecify.annotations.Nullable;

/**
 * The transport side of a client: it opens connections to endpoints and carries attempts of calls over them. The
 * client users hold is the core's ({@link io.petrel.rpc.RpcClient}); the core runs every call (interceptors,
 * deadline, the pending-call limit, the shutdown state, meters, attempts and retries) and owns the endpoints: it
 * listens to the name resolver, keeps each endpoint's connection slots ({@code connectionsPerEndpoint}) with
 * their reconnect backoff and the calls waiting for a connection, computes each endpoint's state for the load
 * balancer, and picks an endpoint and one of its connections per attempt. A transport with endpoints (Netty)
 * only connects ({@link #connect(Endpoint, Connection.Listener)}), says when a connection stops being usable
 * (its {@link Connection.Listener}), and carries each attempt over a connection the core chose as a
 * {@link ClientStream} ({@link #newStream}): request messages one way, response messages and an end the other.
 * A transport without endpoints (in-process) is started with {@link #start()} and gets null for the connection.
 * The core closes its connections and then the transport when it terminates ({@link #terminate}). Made by
 * {@link TransportProvider#newClientTransport}.
 */
public interface ClientTransport {

  /**
   * Opens one connection to {@code endpoint}. The future completes with the connection once it can carry
   * attempts (TLS handshake done), or fails with why it could not: a {@link StatusException} whose description
   * says why without naming the endpoint (the core adds "cannot connect to host:port: "), or any other
   * exception (its {@code toString()} is the reason). Cancelling the future gives the attempt up (the transport
   * closes what it opened). {@code listener} hears what happens to the connection from then on. Any thread;
   * the core calls it holding none of its locks. The default throws: a transport without endpoints is never
   * asked.
   */
  default CompletableFuture<Connection> connect(Endpoint endpoint, Connection.Listener listener) {
    throw new UnsupportedOperationException(getClass().getName() + " does not connect to endpoints");
  }

  /**
   * A new attempt of a call of {@code method} on {@code connection} (one of this transport's, usable a moment
   * ago; null for a transport without endpoints, which finds its own), reporting to {@code listener}. The call has
   * been counted and checked (client running, within maxPendingCalls, deadline not passed); the core then sends
   * the request ({@link ClientStream#sendMessage}) and half-closes. Makes the stream and nothing else that could
   * fail; called on the caller's thread, or on the thread that completed the connect a waiting call waited for.
   *
   * @param options the call's options after the interceptors (its metadata is what the request carries)
   * @param deadline when the call must end (the transport ends the attempt then), or null for none
   */
  ClientStream newStream(@Nullable Connection connection, MethodDescriptor<?, ?> method, CallOptions options,
      @Nullable Deadline deadline, ClientStreamListener listener);

  /**
   * Where the core runs its timers for this client's endpoints (reconnect backoff, the deadlines of calls waiting
   * for a connection): the transport's threads. Only asked of a transport with endpoints.
   */
  default ScheduledExecutorService scheduler() {
    throw new UnsupportedOperationException(getClass().getName() + " does not connect to endpoints");
  }

  /**
   * A transport without endpoints: connects now ({@code RpcClient.start()}) and waits up to the connect timeout;
   * throws {@link StatusException} UNAVAILABLE saying why it cannot, leaving the transport usable. The core
   * connects the endpoints of a transport that has them. The default does nothing.
   */
  default void start() {}

  /**
   * The client terminates (shut down with no call pending, or shut down now), after the core closed every
   * connection it kept: close what is left (attempts to connect under way), release threads, then run
   * {@code done}. Called once.
   */
  void terminate(Runnable done);

  /**
   * True when the current thread is one of this transport's I/O threads, where a blocking call could never be
   * answered. The default is false.
   */
  default boolean isTransportThread() {
    return false;
  }

  /** Loads the TLS material again for new connections ({@code RpcClient.reloadTls()}). */
  default void reloadTls() throws java.io.IOException {
    throw new IllegalStateException("client has no TLS to reload; configure it with RpcClient.builder().tls(...)");
  }
}
