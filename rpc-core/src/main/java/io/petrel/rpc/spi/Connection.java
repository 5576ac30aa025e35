package io.petrel.rpc.spi;

import java.util.concurrent.ScheduledExecutorService;
import org.jspecify.annotations.Nullable;

/**
 * One connection of a client transport to an endpoint, made by {@link ClientTransport#connect} when the core
 * asks for it. The core keeps it in one of the endpoint's connection slots, starts attempts on it
 * (streams, {@link ClientTransport#newStream}) while it {@linkplain #isUsable() is usable}, and hears through its
 * {@link Listener} when it stops being so; the reconnect backoff, the calls waiting for a connection and the
 * endpoint's state are the core's. A transport implements it; the core never blocks on it.
 *
 * <p>The connection's health is the core's too: the first-frame timeout ({@link #closeIfUnanswered}), keepalive
 * (after {@code keepAliveTime} with nothing received a PING, and the connection is dead if the silence lasts as long
 * again) and the liveness check (a call's deadline passed here: a PING, and the connection is dead if nothing at
 * all is received within the client's livenessTimeout, 2 s by default). A transport with PINGs gives the core their
 * primitives: {@link #executor()} (the thread it reports reads on), {@link Listener#received()} once per batch of
 * bytes read, {@link Listener#deadlinePassed()}, {@link #ping()} and {@link #closeDead}. One without PINGs leaves
 * {@link #executor()} null, and its connections get neither check.
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
   * The thread this connection reads on, as an executor (Netty: the channel's event loop), for the core's
   * keepalive and liveness checks: the transport calls {@link Listener#received()} and
   * {@link Listener#deadlinePassed()} on it and nowhere else, and the core runs its checks there, so that what
   * {@code received} notes is a plain field read on the thread that wrote it; the core calls {@link #ping()} and
   * {@link #closeDead} from it. It must run its tasks one at a time, in order (one thread, as an event loop is),
   * and be the same for the connection's life; the core asks for it once, on any thread, when the connection
   * becomes usable. {@link Listener#closed} may come on any thread (the checks stop, and no timer of theirs stays
   * scheduled). Null (the default): the transport has no PINGs, and its connections get neither check (the
   * first-frame timeout still applies).
   */
  default @Nullable ScheduledExecutorService executor() {
    return null;
  }

  /**
   * Sends a PING, whose answer (or any other byte) the transport reports with {@link Listener#received()} like
   * anything read. Called by the core on {@link #executor()}, for keepalive and the liveness check; a closed
   * connection ignores it. The default does nothing (a transport without PINGs is never asked).
   */
  default void ping() {}

  /**
   * The core found the connection dead (a PING unanswered: keepalive, or the liveness check): close it at once and
   * so that nothing more is sent, dropping what is still queued to the peer rather than delivering it late (Netty:
   * a reset, {@code SO_LINGER} 0); attempts in flight end with UNAVAILABLE ({@link AttemptProgress#PROCESSED})
   * saying {@code reason}, which {@link Listener#closed} passes on too. The transport logs at WARN {@code warning}
   * (what was found, e.g. "silent for two keepalive periods, a PING went unanswered"), how many attempts it ends,
   * and {@code next}: what follows for the endpoint, which only the core knows ("reconnecting", or "not
   * reconnecting: " and why, e.g. the resolver removed the endpoint and its connections were draining, or the
   * client is shutting down). As for any close, {@link Listener#closed} comes before the attempts end: an attempt
   * the core sends again (an idempotent call) must find this connection gone from its slot, or it is not sent on a
   * new one. Called by the core on {@link #executor()}; a closed connection ignores it. The default closes
   * ({@link #close()}).
   */
  default void closeDead(String reason, String warning, String next) {
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
     * Something was read on the connection (any bytes: part of a frame counts). Called once per batch of reads
     * (Netty: at each {@code channelReadComplete}), not per frame, on {@link Connection#executor()}; a transport
     * whose {@code executor()} is null need not call it. Cheap (plain field writes, and a clock reading with
     * keepalive on), for the core's keepalive and liveness checks.
     */
    void received();

    /**
     * The deadline of a call passed while its request was on this connection (written, no answer yet): the
     * core checks that the connection still carries anything ({@link Connection#ping()}, then
     * {@link Connection#closeDead} if nothing at all is received within the client's livenessTimeout). Called on
     * {@link Connection#executor()} as the transport gives the attempt up (not for a cancel, nor for an attempt never
     * written); a transport whose {@code executor()} is null need not call it.
     */
    void deadlinePassed();

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
