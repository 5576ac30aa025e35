package io.petrel.rpc;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A client of one Petrel server endpoint, over one or more connections. Thread-safe; share one per endpoint.
 * Create with {@link #builder()}.
 *
 * <p>Every call ends: with a response, or a {@link StatusException} no later than its deadline. A call on a
 * connection that closes fails at once with UNAVAILABLE; lost connections are re-established with backoff.
 * A call made while serving another call (inside a handler) never gets a later deadline than the call being
 * served. Generated stubs call these methods; they are also usable directly with hand-written descriptors.
 *
 * <p>This class is the API only. Its one implementation is the core's ({@code internal.ClientChannel}): the
 * client's runtime, the same whatever the transport (interceptors, deadlines, the pending-call limit, shutdown and
 * termination, call meters, each call's attempts and its single completion), which hands each attempt to its
 * transport; transports do not subclass it.
 */
public abstract class RpcClient implements AutoCloseable {

  /** For the core's client only. */
  protected RpcClient() {}

  public static RpcClientBuilder builder() {
    return RpcProvider.get().newClientBuilder();
  }

  /**
   * Connects now and waits until each endpoint's server has answered (its first frame, not only the TCP connect: a
   * frozen server whose kernel still accepts counts as unreachable) or failed: each connect, TLS handshake and first
   * frame within the connect timeout. Optional: calls connect on demand. If no endpoint can be reached, throws
   * {@link StatusException} UNAVAILABLE naming each address and why; the client stays usable and
   * recovers as after any failed connection attempt (its later calls reach a server that has come up since).
   * A client dropped after a failed {@code builder().build().start()} leaks nothing: it holds no connection, and
   * its share of the transport's threads is released when it is garbage collected.
   */
  public abstract RpcClient start();

  /** Sends a request and returns the future response. The future fails with {@link StatusException}. */
  public abstract <Req, Resp> CompletableFuture<Resp> unaryCallAsync(MethodDescriptor<Req, Resp> method,
      Req request, CallOptions options);

  /**
   * Sends a oneway request. The future completes once the request is written to the socket (not when the
   * server has run it), or fails with {@link StatusException} if it could not be sent.
   */
  public abstract <Req> CompletableFuture<Void> oneway(MethodDescriptor<Req, ?> method, Req request,
      CallOptions options);

  /**
   * The deadline of a call starting now: from its options, else the method's default, else the client's
   * default; and never later than the deadline of the call this thread is serving, if any.
   */
  public abstract Deadline deadlineOf(MethodDescriptor<?, ?> method, CallOptions options);

  /**
   * Sends a request and waits for the response; throws {@link StatusException} on failure. The response is
   * decoded, and the call's callbacks run, on the calling thread (see {@link CallOptions#withExecutor}).
   */
  public abstract <Req, Resp> Resp unaryCall(MethodDescriptor<Req, Resp> method, Req request, CallOptions options);

  public <Req, Resp> Resp unaryCall(MethodDescriptor<Req, Resp> method, Req request) {
    return unaryCall(method, request, CallOptions.DEFAULT);
  }

  /**
   * True when this client was built with {@code RpcClientBuilder.tls(...)}: every connection it makes is TLS,
   * so nothing it sends (metadata such as tokens, requests) travels in plaintext. Also true for an in-process
   * client ({@code RpcClientBuilder.inProcess(...)}), whose calls never leave the process. Interceptors see the
   * same through {@link ClientInterceptor.Chain#isSecure()}.
   */
  public abstract boolean isSecure();

  /**
   * Loads the TLS material of this client's {@link TlsConfig} again (its files, or its key stores' current
   * entries); connections made from now on use it, open ones keep theirs. If the new material cannot be loaded
   * the client keeps the previous one.
   *
   * @throws IllegalStateException if the client has no TLS
   * @throws java.io.IOException naming the file and the problem, if the material cannot be loaded
   */
  public abstract void reloadTls() throws java.io.IOException;

  /** Stops accepting new calls and closes connections once pending calls have ended. Returns at once. */
  public abstract RpcClient shutdown();

  /** Fails pending calls with UNAVAILABLE and closes at once. */
  public abstract RpcClient shutdownNow();

  public abstract boolean isShutdown();

  public abstract boolean isTerminated();

  public abstract boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException;

  /** Calls started and not yet ended, for operators and tests. */
  public abstract int pendingCalls();

  /**
   * How many of the client's endpoints are in each state now, for health checks and operators (what the
   * {@code rpc.client.endpoints} gauges show, without a meter registry): every state but
   * {@link ConnectivityState#SHUTDOWN}, each with its count (0 included), READY meaning a connection whose server
   * has answered. Empty for an in-process client, which has no endpoints. A client with no READY endpoint and some
   * BACKING_OFF cannot reach its servers now (its last connect attempts failed); one whose endpoints are all IDLE
   * has not needed a connection yet.
   */
  public java.util.Map<ConnectivityState, Integer> endpointStates() {
    return java.util.Map.of();
  }

  /**
   * The client's state as a whole, for health checks (grpc-java's {@code ManagedChannel.getState}): READY when an
   * endpoint is; else BACKING_OFF when it cannot reach its servers now: it has no endpoint (the resolver lists none
   * or failed, or the endpoint filter leaves none) or one that has failed since it was last READY and is backing
   * off or trying again (CONNECTING to a host that drops connects); else CONNECTING when an attempt is under way;
   * else IDLE (no call needs a connection now: after a failed attempt's backoff, with no call waiting, the endpoint
   * is IDLE and the client too). SHUTDOWN once shut down. An in-process client is IDLE.
   */
  public ConnectivityState state() {
    return isShutdown() ? ConnectivityState.SHUTDOWN : ConnectivityState.IDLE;
  }

  @Override
  public void close() {
    shutdown();
    try {
      if (!awaitTermination(30, TimeUnit.SECONDS)) {
        shutdownNow();
        awaitTermination(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      shutdownNow();
      Thread.currentThread().interrupt();
    }
  }
}
