package io.petrel.rpc.spi;

/**
 * What the core tells a client transport about its client: one per client, passed to
 * {@link TransportProvider#newClientTransport}. Implemented by the core only.
 */
public interface ClientTransportContext {
  /** The client's name, as given to its builder. */
  String name();

  /** What the client calls, for messages. */
  String target();

  /** True once the client was shut down: no new call. */
  boolean isShutdown();

  /** Calls started and not yet ended. */
  int pendingCalls();

  /**
   * A new batch of deferred wake-ups for one transport thread's reads (one per connection), which its streams
   * return from {@link ClientStream#wakeBatch()}.
   */
  WakeBatch newWakeBatch();
}
