package io.petrel.rpc.spi;

/**
 * How far an attempt of a call got before it failed, as its transport knows it: what decides whether the core
 * may send the call again. A request that no handler can have seen ({@link #NOT_SENT}, {@link #REFUSED}) is sent
 * again on another connection without the caller seeing it; one that may have run ({@link #PROCESSED}) is sent
 * again only if its method is idempotent (docs/cluster.md, "Retry rules").
 */
public enum AttemptProgress {
  /** The request was never written to a connection (no connection could be had, or it closed first). */
  NOT_SENT,
  /**
   * The request was written, and the server refused it before any handler saw it: a GOAWAY whose last request
   * id is below the request's, or an answer the server marked refused (docs/protocol.md, "Refusals"): it was
   * shutting down (UNAVAILABLE), or one of its limits refused the call (RESOURCE_EXHAUSTED; sent again only to
   * another endpoint). The status is the server's, as it came.
   */
  REFUSED,
  /** The request reached the server, which may have run it (a connection lost with the call in flight, an answer). */
  PROCESSED
}
