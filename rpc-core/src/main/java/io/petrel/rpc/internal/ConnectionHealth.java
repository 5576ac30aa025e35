package io.petrel.rpc.internal;

import io.petrel.rpc.spi.Connection;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Whether one connection still carries anything, decided here for every transport that has PINGs (its
 * {@link Connection#executor()} is not null); a {@link ConnectionSlot}'s, one per connect attempt. Two checks:
 *
 * <ul>
 *   <li>keepalive: after {@code keepAliveTime} with nothing received, a PING; if the silence lasts as long again
 *       (nothing at all received since the PING), the connection is dead. Finds a peer that vanished without
 *       closing, or a black-holed network, on an idle connection as on a busy one;
 *   <li>the liveness check: a call's deadline passed while its request was on the connection
 *       ({@link Connection.Listener#deadlinePassed}): a PING, and if nothing at all is received within
 *       {@code livenessTimeout} the connection is dead. A network that stopped carrying packets (a partition,
 *       a link down) leaves TCP retransmitting into nothing, with backoff: the connection looks open, calls sent on
 *       it wait to their deadlines, and after the network heals it can take the kernel tens of seconds to
 *       retransmit, while a new connection would work at once. A live server answers the PING from its event loop
 *       within milliseconds, even while its handlers are slow.
 * </ul>
 *
 * A dead connection is closed with {@link Connection#closeDead} (Netty: a reset, so that the requests still in its
 * send buffer do not reach the server long after their callers gave up); its calls in flight fail with
 * UNAVAILABLE and the endpoint reconnects, unless its slot was closed meanwhile (the resolver removed the endpoint,
 * whose connections were draining; the client is shutting down): the transport's WARN says which ({@link #next}).
 *
 * <p>Threading: everything but {@link #answered()} and {@link #stop()} runs on the connection's executor, the
 * thread the transport reports reads on; {@link #received()}, the only thing on the per-read path, writes plain
 * fields (and reads the clock with keepalive on) that the checks' timers read on that same thread.
 */
final class ConnectionHealth {
  /** Why a connection found dead by the liveness check closes: its calls' message and the WARN line. */
  static String livenessFailed(long livenessNanos) {
    return "nothing received for " + TimeUnit.NANOSECONDS.toMillis(livenessNanos) + " ms after a call's deadline"
        + " passed and a PING was sent (a network that stopped carrying packets, or a server that stopped;"
        + " RpcClientBuilder.livenessTimeout sets how long)";
  }
  /** Why a connection found dead by keepalive closes, for its calls ("... no answer to keepalive PING"). */
  static final String KEEPALIVE_FAILED = "no answer to keepalive PING";
  /** What the WARN line says of a connection found dead by keepalive. */
  static final String KEEPALIVE_WARNING = "silent for two keepalive periods, a PING went unanswered";

  /** keepAliveTime; 0: no keepalive. */
  private final long keepAliveNanos;
  /**
   * livenessTimeout: how long a connection may receive nothing after a call's deadline passed on it (and a PING was
   * sent) before it counts as dead; 0: no liveness check.
   */
  private final long livenessNanos;
  /**
   * What follows for the endpoint once the connection is found dead, asked then, for the transport's WARN
   * ({@link Connection#closeDead}'s {@code next}): the slot's, which alone knows whether it reconnects.
   */
  private final Supplier<String> next;
  // The connection's executor only (set by begin, which runs there).
  private @Nullable Connection connection;
  private @Nullable ScheduledExecutorService executor;
  /** When the last batch of bytes was read (nanoTime), or the checks began; kept only with keepalive on. */
  private long lastRead;
  /** Bytes were read since the liveness check began (any bytes: a frame may be large). */
  private boolean readSinceCheck;
  /** A keepalive PING was sent at {@link #pingSentAt}; answered once anything is read after it. */
  private boolean pingSent;
  private long pingSentAt;
  /** A liveness check is under way, since {@link #livenessSince}. */
  private boolean livenessCheck;
  // Any thread.
  /** The server's first frame has arrived ({@code Listener.answered}). */
  private volatile boolean answered;
  /** The connection closed (or the checks never begin): timers stop. */
  private volatile boolean stopped;
  private volatile @Nullable ScheduledFuture<?> keepAliveTimer;
  private volatile @Nullable ScheduledFuture<?> livenessTimer;

  ConnectionHealth(long keepAliveNanos, long livenessNanos, Supplier<String> next) {
    this.keepAliveNanos = keepAliveNanos;
    this.livenessNanos = livenessNanos;
    this.next = next;
  }

  /**
   * Any thread: {@code c} is the attempt's connection, usable: the checks begin on its executor (none for a
   * transport without one).
   */
  void start(Connection c) {
    ScheduledExecutorService ex = c.executor();
    if (ex == null || stopped) {
      return;
    }
    try {
      ex.execute(() -> begin(c, ex));
    } catch (RejectedExecutionException e) {
      // The transport's threads are stopping: the client is shutting down and closes the connection.
    }
  }

  private void begin(Connection c, ScheduledExecutorService ex) {
    if (stopped) {
      return;
    }
    connection = c;
    executor = ex;
    lastRead = System.nanoTime(); // the silence is counted from now
    if (keepAliveNanos > 0) {
      keepAliveTimer(schedule(this::keepAliveDue, keepAliveNanos));
    }
  }

  /**
   * Executor: bytes were read (once per read batch): a plain field write, and with keepalive on a clock reading
   * (what Netty's IdleStateHandler, which kept the client's keepalive before, read per batch too).
   */
  void received() {
    readSinceCheck = true;
    if (keepAliveNanos > 0) {
      lastRead = System.nanoTime();
    }
  }

  /** Any thread: the server's first frame arrived. */
  void answered() {
    answered = true;
  }

  /**
   * Any thread: the connection closed; no check runs any more, and no timer stays scheduled (one set on the
   * executor as this runs is cancelled there, see {@link #keepAliveTimer(ScheduledFuture)}).
   */
  void stop() {
    stopped = true;
    ScheduledFuture<?> t = keepAliveTimer;
    if (t != null) {
      t.cancel(false);
    }
    t = livenessTimer;
    if (t != null) {
      t.cancel(false);
    }
  }

  /**
   * Executor: {@code keepAliveTime} since the checks began or since the last read, as far as the timer knew when it
   * was set: runs again at the end of the silence if something was read meanwhile; else (silent for a keepalive
   * period) a PING, or, if the PING sent one period ago has had no answer, the connection is dead.
   */
  private void keepAliveDue() {
    Connection c = connection;
    if (stopped || c == null) {
      return;
    }
    long now = System.nanoTime();
    long silent = now - lastRead;
    if (silent < keepAliveNanos) {
      keepAliveTimer(schedule(this::keepAliveDue, keepAliveNanos - silent));
      return;
    }
    if (pingSent && lastRead - pingSentAt < 0) {
      stopped = true;
      c.closeDead(KEEPALIVE_FAILED, KEEPALIVE_WARNING, next.get());
      return;
    }
    keepAliveTimer(schedule(this::keepAliveDue, keepAliveNanos));
    pingSent = true;
    pingSentAt = now;
    c.ping();
  }

  /**
   * Executor: a call's deadline passed while its request was on the connection: unless a check is under way, a
   * PING, and {@link #livenessDue} looks after {@code livenessTimeout} whether anything at all came back.
   */
  void deadlinePassed() {
    Connection c = connection;
    if (stopped || c == null || livenessCheck || !answered || livenessNanos == 0) {
      return;
    }
    livenessCheck = true;
    readSinceCheck = false;
    c.ping();
    ScheduledFuture<?> t = schedule(this::livenessDue, livenessNanos);
    if (t == null) {
      livenessCheck = false; // the executor is stopping, and the connection with it
    }
    livenessTimer = t;
    if (t != null && stopped) {
      t.cancel(false); // see keepAliveTimer(t)
    }
  }

  /**
   * Executor: {@code livenessTimeout} after a call's deadline passed and a PING was sent. If nothing was read
   * since (not the PONG, not a byte of any response), the connection is dead.
   */
  private void livenessDue() {
    livenessCheck = false;
    Connection c = connection;
    if (stopped || c == null || readSinceCheck) {
      return;
    }
    stopped = true;
    String why = livenessFailed(livenessNanos);
    c.closeDead(why, why, next.get());
  }

  /**
   * Executor: {@code t} is the keepalive timer now. A transport may report the close ({@link #stop}) on another
   * thread, which cancels the timer it sees: if it came as this one was being set, this one is cancelled here
   * (volatile write, then read of {@link #stopped}; stop writes it, then reads the timer), else it would stay
   * scheduled for a keepalive period, holding the connection.
   */
  private void keepAliveTimer(@Nullable ScheduledFuture<?> t) {
    keepAliveTimer = t;
    if (t != null && stopped) {
      t.cancel(false);
    }
  }

  // Executor: null if it is shutting down.
  private @Nullable ScheduledFuture<?> schedule(Runnable task, long delayNanos) {
    ScheduledExecutorService ex = executor;
    if (ex == null) {
      return null;
    }
    try {
      return ex.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      return null; // the transport's threads are stopping, and the connection with them
    }
  }
}
