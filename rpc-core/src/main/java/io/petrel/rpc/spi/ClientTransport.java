package io.petrel.rpc.spi;

import io.petrel.rpc.CallOptions;
import io.petrel.rpc.Deadline;
import io.petrel.rpc.Endpoint;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.StatusException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The transport side of a client: it opens connections to endpoints and carries attempts of calls over them. The
 * client users hold is the core's ({@link io.petrel.rpc.RpcClient}); the core runs every call (interceptors,
 * deadline, the pending-call limit, the shutdown state, meters, attempts and retries) and owns the endpoints: it
 * listens to the name resolver, keeps each endpoint's connection slots ({@code connectionsPerEndpoint}) with
 * their reconnect backoff and the calls waiting for a connection, computes each endpoint's state for the load
 * balancer, and picks an endpoint and one of its connections per attempt. A transport with endpoints (Netty)
 * only connects ({@link #connect(Endpoint, Connection.Listener)}), says when a connection stops being usable
 * (its {@link Connection.Listener}), and carries an attempt over a connection the core chose
 * ({@link #startAttempt}). A transport without endpoints (in-process) is started with
 * {@link #connect(List)} and given each attempt with {@link #startCall}. The core closes its connections and
 * then the transport when it terminates ({@link #terminate}). Made by
 * {@link TransportProvider#newClientTransport} with the client's runtime, which its calls are made with.
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
   * Encodes the request and starts an attempt of the call on {@code connection} (one of this transport's, usable
   * a moment ago). The call has been counted and checked (client running, within maxPendingCalls, deadline not
   * passed). A marshaller's exception thrown from here fails the call with INVALID_ARGUMENT or INTERNAL, a
   * {@link StatusException} with its status, a {@link FrameSizes.TooLarge} with its RESOURCE_EXHAUSTED status and
   * "not sent"; once the request is handed on, the transport ends the attempt (by the call's deadline at the
   * latest: a response, a status, or {@link ClientCall#onClose} with how far it got: REFUSED when the connection
   * could not write it after all, so that the core sends it on another) and throws nothing. Called on the
   * caller's thread, or on the thread that completed the connect a waiting call waited for.
   */
  default <Req> void startAttempt(ClientCall<?> call, Connection connection, MethodDescriptor<Req, ?> method,
      Req request, CallOptions options) throws Exception {
    throw new UnsupportedOperationException(getClass().getName() + " does not connect to endpoints");
  }

  /**
   * Where the core runs its timers for this client's endpoints (reconnect backoff, the deadlines of calls waiting
   * for a connection): the transport's threads. Only asked of a transport with endpoints.
   */
  default ScheduledExecutorService scheduler() {
    throw new UnsupportedOperationException(getClass().getName() + " does not connect to endpoints");
  }

  /**
   * A transport without endpoints: connects now ({@code RpcClient.start()}) and waits up to the connect timeout;
   * throws {@link StatusException} UNAVAILABLE saying why it cannot, leaving the transport usable. The list is
   * always empty (the core connects the endpoints of a transport that has them). The default does nothing.
   */
  default void connect(List<ClientSubchannel> subchannels) {}

  /**
   * A new call of {@code method}, not yet counted or sent: the transport's {@link ClientCall}, made with the
   * runtime it was given and these arguments, and nothing else that could fail.
   */
  <Resp> ClientCall<Resp> newCall(MethodDescriptor<?, Resp> method, @Nullable Deadline deadline,
      @Nullable Consumer<Metadata> responseMetadata, @Nullable Executor executor);

  /**
   * A transport without endpoints: encodes the request and sends an attempt of the call ({@code subchannel} is
   * always null), or holds it until it can be sent; the rules of {@link #startAttempt} apply. The default throws:
   * a transport with endpoints gets its attempts through {@link #startAttempt}.
   */
  default <Req> void startCall(ClientCall<?> call, @Nullable ClientSubchannel subchannel,
      MethodDescriptor<Req, ?> method, Req request, CallOptions options) throws Exception {
    throw new UnsupportedOperationException(getClass().getName() + " carries attempts on connections");
  }

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
