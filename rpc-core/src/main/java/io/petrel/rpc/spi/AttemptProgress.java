package io.petrel.rpc.spi;

/**
 * How far an attempt of a call got before it failed, as its transport knows it: what decides whether the core
 * may send the call again. A request that no handler can have seen ({@link #NOT_SENT}, {@link #REFUSED}) is sent
 * again on another connection without the caller seeing it; one that may have run ({@link #PROCESSED}) is sent
 * again only if its method is idempotent (docs/cluster.md, "Retry rules").
 */
public enum AttemptProgress {
  /**
   * No connection to the endpoint could be had for the request (the connect attempt it waited for failed, or the
   * endpoint backs off): the core's own verdict, sent again only to another endpoint.
   */
  NOT_SENT,
  /**
   * No handler saw the request, although it was handed to a connection: the server refused it unread (a GOAWAY
   * whose last request id is below the request's, or an answer the server marked refused, docs/protocol.md,
   * "Refusals": it was shutting down (UNAVAILABLE), or one of its limits refused the call (RESOURCE_EXHAUSTED)),
   * or the connection went away (GOAWAY, closed, drained) before writing it. Sent again, to this endpoint or
   * another; a limit's refusal (a status other than UNAVAILABLE) only to another endpoint. The status is the
   * server's, as it came.
   */
  REFUSED,
  /** The request reached the server, which may have run it (a connection lost with the call in flight, an answer). */
  PROCESSED
}
