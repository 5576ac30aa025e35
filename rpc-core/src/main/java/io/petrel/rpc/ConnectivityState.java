package io.petrel.rpc;

/**
 * The state of a client's connections to one endpoint ({@link Subchannel#state()}), as its transport reports it.
 * With several connections per endpoint it is the best of theirs: {@code READY} if one is, else
 * {@code CONNECTING} if one is trying, else {@code IDLE} if one would try at the next call, else
 * {@code BACKING_OFF}.
 */
public enum ConnectivityState {
  /** No connection and no attempt: the next call starts one. */
  IDLE,
  /** A connection attempt is under way (TCP connect, TLS handshake). */
  CONNECTING,
  /** A connection takes calls. */
  READY,
  /** The last attempt failed (the cause says why); the next comes when the reconnect backoff ends. */
  BACKING_OFF,
  /** Closed for good: the client shut down or the resolver dropped the endpoint. */
  SHUTDOWN
}
