package io.petrel.rpc.spi;

import io.petrel.rpc.MethodDescriptor;

/**
 * What the core gives a client transport for its calls: one per client, passed to
 * {@link TransportProvider#newClientTransport} and to each {@link ClientCall}'s constructor. Implemented by the
 * core only. A transport reads the first group; the second is how a call reaches the core's client (pending
 * count, meters, attempts and the retry budget), used by {@link ClientCall} itself.
 */
public interface ClientCallRuntime {
  /** The client's name, as given to its builder. */
  String name();

  /** What the client calls, for messages. */
  String target();

  /** True once the client was shut down: no new call. */
  boolean isShutdown();

  /** Calls started and not yet ended. */
  int pendingCalls();

  // ---- for ClientCall ----

  /** The meters of {@code method}'s calls. */
  CallRecorder metricsFor(MethodDescriptor<?, ?> method);

  /** A call ended (exactly once per started call). */
  void callEnded();

  /** Starts an attempt of {@code call} on the transport (the first, or another after a failed one). */
  void startAttempt(ClientCall<?> call, Object request) throws Exception;

  /** More attempts an idempotent call may make after its first one failed with UNAVAILABLE. */
  int maxRetries();

  /** The client is closing its transport: no new attempt. */
  boolean isTerminating();

  /** An attempt failed with UNAVAILABLE: the retry budget takes a token. */
  void attemptFailed();

  /** A call succeeded: the retry budget gets back a fraction of a token. */
  void callSucceeded();

  /** Whether the retry budget allows a retry now. */
  boolean mayRetry();
}
