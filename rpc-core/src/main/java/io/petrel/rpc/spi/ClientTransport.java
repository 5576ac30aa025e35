package io.petrel.rpc.spi;

import io.petrel.rpc.CallOptions;
import io.petrel.rpc.Deadline;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.StatusException;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The transport side of a client: it carries calls to the server and back. The client users hold is the core's
 * ({@link io.petrel.rpc.RpcClient}); it runs every call (interceptors, deadline, the pending-call limit, the
 * shutdown state, meters) and hands it here to be made ({@link #newCall}) and sent ({@link #startCall}), and
 * closes the transport when it terminates ({@link #terminate}). Made by
 * {@link TransportProvider#newClientTransport} with the client's runtime, which its calls are made with.
 */
public interface ClientTransport {

  /**
   * Connects now and waits up to the connect timeout ({@code RpcClient.start()}); throws {@link StatusException}
   * UNAVAILABLE naming each endpoint that cannot be reached, leaving the transport usable (later calls reach a
   * server that comes up).
   */
  void connect();

  /**
   * A new call of {@code method}, not yet counted or sent: the transport's {@link ClientCall}, made with the
   * runtime it was given and these arguments, and nothing else that could fail.
   */
  <Resp> ClientCall<Resp> newCall(MethodDescriptor<?, Resp> method, @Nullable Deadline deadline,
      @Nullable Consumer<Metadata> responseMetadata, @Nullable Executor executor);

  /**
   * Encodes the request and sends it, or holds it until it can be sent. The call has been counted and checked
   * (client running, within maxPendingCalls, deadline not passed). A marshaller's exception thrown from here
   * fails the call with INVALID_ARGUMENT or INTERNAL, a {@link StatusException} with its status, a
   * {@link FrameSizes.TooLarge} with its RESOURCE_EXHAUSTED status and "not sent"; once the request is handed on,
   * the transport ends the call (by its deadline at the latest) and throws nothing.
   */
  <Req> void startCall(ClientCall<?> call, MethodDescriptor<Req, ?> method, Req request, CallOptions options)
      throws Exception;

  /**
   * The client terminates (shut down with no call pending, or shut down now): close every connection (calls
   * still in flight fail with UNAVAILABLE), release threads, then run {@code done}. Called once.
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
