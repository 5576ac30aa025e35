package io.petrel.rpc.spi;

import org.jspecify.annotations.Nullable;

/**
 * One connection of a client transport to an endpoint, made by {@link ClientTransport#connect} when the core
 * asks for it. The core keeps it in one of the endpoint's connection slots, starts attempts on it
 * (streams, {@link ClientTransport#newStream}) while it {@linkplain #isUsable() is usable}, and hears through its
 * {@link Listener} when it stops being so; the reconnect backoff, the calls waiting for a connection and the
 * endpoint's state are the core's. A transport implements it; the core never blocks on it.
 */
public interface Connection {

  /**
   * True while new attempts may start here: open, and neither drained nor told by the server to go away.
   * Lock-free: read on every call.
   */
  boolean isUsable();

  /**
   * No new attempt here (the endpoint left its resolver's list): attempts not yet written end
   * {@link AttemptProgress#REFUSED} (the core sends them again elsewhere), those in flight finish, and the
   * connection closes after the last (by their deadlines at the latest). Any thread; the listener hears
   * {@link Listener#closed} when it has closed.
   */
  void drain(String why);

  /**
   * Closes now: attempts in flight end with UNAVAILABLE ({@link AttemptProgress#PROCESSED}). Any thread; the
   * listener hears {@link Listener#closed}.
   */
  void close();

  /**
   * Closes the connection unless its server has answered meanwhile: the core's first-frame timeout, which runs on
   * a thread of its own, found no first frame, and a transport that reads on another thread must check again
   * there (a first frame racing the timer keeps the connection, whose calls may already be on their way).
   * {@code reason} says why, for the attempts it ends and {@link Listener#closed}. The default closes at once,
   * without the check (the core still knows why).
   */
  default void closeIfUnanswered(String reason) {
    close();
  }

  /**
   * What a connection tells the core, given to {@link ClientTransport#connect} (implemented by the core only).
   * Called on the transport's threads, holding none of its locks.
   */
  interface Listener {
    /**
     * The server's first frame arrived: it is really there. The core starts the endpoint's backoff over, and only
     * from now on counts the endpoint READY and lets balancers pick it. The core closes
     * ({@link Connection#closeIfUnanswered}) a connection that has not said this within the connect timeout of its
     * connect future's completion, as a failed connect attempt: every transport must call it, once the server has
     * shown it is there (a transport whose protocol has the server speak first: at its first frame).
     */
    void answered();

    /**
     * The server said it takes no new call here (GOAWAY): new attempts go to another connection; attempts in
     * flight finish here. Said before the transport ends the attempts the server refused.
     */
    void goaway();

    /**
     * The connection closed. {@code reason} says why when the transport knows more than "closed" (a TLS error,
     * a keepalive PING unanswered), else null; {@code answered}: whether the server had sent anything (a
     * connection closed before that counts as a failed connect attempt). Said before the transport ends the
     * attempts it had on this connection, and also for a connection whose {@link ClientTransport#connect}
     * failed or was cancelled (the core ignores it then).
     */
    void closed(@Nullable String reason, boolean answered);
  }
}
