package io.petrel.rpc.spi;

import io.petrel.rpc.CallOptions;
import io.petrel.rpc.Deadline;
import io.petrel.rpc.Endpoint;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.StatusException;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The transport side of a client: it connects to endpoints and carries calls over those connections. The client
 * users hold is the core's ({@link io.petrel.rpc.RpcClient}); the core runs every call (interceptors, deadline,
 * the pending-call limit, the shutdown state, meters, attempts and retries) and owns the endpoints: it listens
 * to the name resolver, asks the transport for one {@link ClientSubchannel} per endpoint
 * ({@link #newSubchannel}), which reports its connections' state, picks one per attempt with the load balancer,
 * and hands the attempt here to be made ({@link #newCall}) and sent ({@link #startCall}); it closes the
 * subchannels and then the transport when it terminates ({@link #terminate}). Made by
 * {@link TransportProvider#newClientTransport} with the client's runtime, which its calls are made with.
 */
public interface ClientTransport {

  /**
   * The transport's connections to {@code endpoint}, not yet connected: the core keeps the subchannel while its
   * resolver lists the endpoint, and closes or drains it when it goes. Called by the core under its own lock;
   * it must not call back into the core. The default throws: a transport without endpoints (in-process) is
   * never asked.
   */
  default ClientSubchannel newSubchannel(Endpoint endpoint) {
    throw new UnsupportedOperationException(getClass().getName() + " does not connect to endpoints");
  }

  /**
   * Connects to {@code subchannels} now and waits up to the connect timeout ({@code RpcClient.start()}); throws
   * {@link StatusException} UNAVAILABLE naming each endpoint that cannot be reached, leaving the transport
   * usable (later calls reach a server that comes up). The list is empty for a transport without endpoints.
   */
  void connect(List<ClientSubchannel> subchannels);

  /**
   * A new call of {@code method}, not yet counted or sent: the transport's {@link ClientCall}, made with the
   * runtime it was given and these arguments, and nothing else that could fail.
   */
  <Resp> ClientCall<Resp> newCall(MethodDescriptor<?, Resp> method, @Nullable Deadline deadline,
      @Nullable Consumer<Metadata> responseMetadata, @Nullable Executor executor);

  /**
   * Encodes the request and sends an attempt of the call over {@code subchannel} (one of this transport's, as
   * the core picked it; null for a transport without endpoints), or holds it until it can be sent. The call has
   * been counted and checked (client running, within maxPendingCalls, deadline not passed). A marshaller's
   * exception thrown from here fails the call with INVALID_ARGUMENT or INTERNAL, a {@link StatusException} with
   * its status, a {@link FrameSizes.TooLarge} with its RESOURCE_EXHAUSTED status and "not sent"; once the request
   * is handed on, the transport ends the attempt (by the call's deadline at the latest: a response, a status,
   * or {@link ClientCall#onClose} with how far it got) and throws nothing.
   */
  <Req> void startCall(ClientCall<?> call, @Nullable ClientSubchannel subchannel, MethodDescriptor<Req, ?> method,
      Req request, CallOptions options) throws Exception;

  /**
   * The client terminates (shut down with no call pending, or shut down now), after the core closed every
   * subchannel: release what is left (threads), then run {@code done}. Called once.
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
