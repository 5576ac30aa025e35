package io.petrel.rpc.internal;

import io.petrel.rpc.CallOptions;
import io.petrel.rpc.Deadline;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.spi.AttemptProgress;
import io.petrel.rpc.spi.ClientConfig;
import io.petrel.rpc.spi.ClientTransport;
import io.petrel.rpc.spi.Connection;
import io.petrel.rpc.ConnectivityState;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One of an endpoint's connections, kept across failures, the same for every transport (grpc-java's
 * {@code InternalSubchannel} and {@code DelayedClientTransport} together, for one connection). A call that finds
 * no usable connection starts a connect attempt at once (one attempt at a time) and waits for it, unless the last
 * attempt failed: then the slot backs off (exponential, with jitter), and a call made meanwhile waits for the
 * next attempt, which the slot makes by itself when the backoff ends, if the call's deadline comes later (else,
 * or when the call is {@link CallOptions#withFailFast fail-fast}, its attempt ends {@link AttemptProgress#NOT_SENT}
 * at once naming the cause). A call waits for one connect attempt at most: if that fails, so does its attempt
 * (NOT_SENT; the core may send it to another endpoint). While another endpoint of the client is available, the
 * balancers skip this one as long as a connect attempt to it is under way or it backs off ({@link #isAvailable}):
 * a host that drops connects would hold a call for the whole connectTimeout; a call that is picked for it all the
 * same (a race with the balancer) and may be sent again ends NOT_SENT at once, and after a failed attempt the slot
 * makes the next one by itself when its backoff ends, since no call comes to start it. Otherwise, with nobody
 * waiting the slot makes no attempt of its own, so a client nobody calls holds no timer and no connection. The
 * transport only opens the connection
 * ({@link ClientTransport#connect}) and says when it stops being usable ({@link Connection.Listener}). The
 * connection's health is decided here too: the first-frame timeout ({@link #watchFirstFrame}), keepalive and the
 * liveness check ({@link ConnectionHealth}, for a transport with PINGs); the transport only sends PINGs, says when
 * it reads, and closes a connection found dead.
 *
 * <p>The per-call path reads one volatile field ({@link #current()}) and takes no lock; everything else (connect
 * attempts, backoff, waiting calls) is under this object's lock, never held while calling the transport or
 * ending a call (under it a call and the other endpoints are only read).
 */
final class ConnectionSlot {
  private static final Logger log = LoggerFactory.getLogger(ConnectionSlot.class);

  private final InternalSubchannel owner;
  private final ClientTransport transport;
  private final ScheduledExecutorService scheduler;
  private final ClientConfig config;
  /** The connection new attempts go to while it is usable; the per-call fast path reads it. */
  private volatile @Nullable Connection connection;
  /** True while a reconnect waits out its backoff after a failed attempt; read lock-free by the balancer. */
  private volatile boolean backingOff;
  /**
   * True while a connect attempt is under way: the balancer sends calls elsewhere meanwhile when it can (a host
   * that drops connects holds an attempt for the whole connectTimeout); read lock-free by the balancer.
   */
  private volatile boolean attempting;
  /**
   * True while the connection is open but the server's first frame has not arrived (up to the connect timeout: a
   * frozen server's kernel still accepts): the balancer sends calls elsewhere meanwhile, as during a connect.
   */
  private volatile boolean awaitingFirstFrame;
  /** Why the slot was closed, for calls that still reach it; null: the client was shut down. */
  private volatile @Nullable String closedWhy;
  // Guarded by this.
  /** The link of {@link #connection}, which hears what happens to it. */
  private @Nullable Link connectionLink;
  /** The connect attempt under way, or null. */
  private @Nullable Link connecting;
  private long backoffNanos;
  private @Nullable ScheduledFuture<?> reconnectTimer;
  /** When {@link #reconnectTimer} fires (nanoTime). */
  private long nextAttemptAt;
  /**
   * Why the last attempt failed, while the slot backs off after it; null otherwise. Calls made meanwhile fail at
   * once naming it (unless they wait for the next attempt), instead of each starting an attempt of its own.
   */
  private @Nullable String lastFailure;
  /** The local exception behind {@link #lastFailure}, if there was one (a refused connect, say). */
  private @Nullable Throwable lastFailureCause;
  /**
   * A connection of this slot got GOAWAY since the last connect succeeded: a connect that fails now says so (the
   * server is going away or restarting, which "connection refused" alone does not tell). Guarded by this.
   */
  private boolean goawaySeen;
  /** Calls waiting for the attempt under way or the next one, in the order they came. */
  private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();
  private boolean closed;

  ConnectionSlot(InternalSubchannel owner, ClientTransport transport, ScheduledExecutorService scheduler,
      ClientConfig config) {
    this.owner = owner;
    this.transport = transport;
    this.scheduler = scheduler;
    this.config = config;
    this.backoffNanos = config.reconnectInitialBackoffNanos();
  }

  /** The usable connection, or null. Lock-free: the per-call fast path. */
  @Nullable Connection current() {
    Connection c = connection;
    return c != null && c.isUsable() ? c : null;
  }

  /**
   * False while a reconnect waits out its backoff after a failed attempt, and while a connect attempt is under way
   * (calls here would wait or fail): the balancer sends calls elsewhere when it can.
   */
  boolean isAvailable() {
    return !backingOff && !attempting && !awaitingFirstFrame;
  }

  /**
   * Sends an attempt of {@code call} on a usable connection, or makes it wait for one (see the class comment),
   * or ends it NOT_SENT. What starting the stream throws on this thread (a marshaller's failure)
   * is thrown from here.
   */
  void send(ClientCall<?> call) throws Exception {
    Connection c = current();
    if (c != null) {
      call.startStream(transport, c);
      return;
    }
    CallOptions options = call.options();
    Waiter w = new Waiter(call);
    Link start = null;
    Status failure = null;
    synchronized (this) {
      c = current();
      if (c == null && !closed && waiters.isEmpty()) {
        // The call may be the first to wait here: the endpoint joins the set another endpoint's becoming READY
        // looks at (ClientEndpoints.becameReady) now, before othersAvailable is read below and the call queued, not
        // after. Either that walk sees this endpoint (and moves the call, taking this lock), or the endpoint it
        // reports is READY before the read below (and the call goes there). Joined too early, if the call does not
        // wait: the next walk takes it out.
        owner.slotWaiting();
      }
      if (c == null) {
        if (closed) {
          failure = shutDown();
        } else if (connecting != null) {
          if (call.mayMoveElsewhere() && owner.othersAvailable()) {
            failure = elsewhere(); // picked while it connects (a race with the balancer): go where no call waits
          } else {
            enqueue(w); // an attempt is under way: wait for it
          }
        } else if (connection != null) {
          // Closed a moment ago, and the transport has not yet said why: whether to reconnect at once or back off
          // depends on that, so no attempt is started from here; the listener's closed (or goaway) starts it.
          if (options.isFailFast()) {
            failure = Status.UNAVAILABLE.withDescription("the connection to " + owner.authority()
                + " has just closed; retry");
          } else {
            enqueue(w);
          }
        } else if (reconnectTimer != null && lastFailure != null) {
          Deadline d = call.deadline();
          boolean inTime = d == null || nextAttemptAt - d.nanoTime() < 0;
          if (call.mayMoveElsewhere() && owner.othersAvailable()) {
            failure = elsewhere(); // picked while it backs off (a race with the balancer): go elsewhere
          } else if (!options.isFailFast() && inTime) {
            enqueue(w);
          } else {
            failure = cannotConnect("; next attempt in " + msToNextAttempt() + " ms"
                + (options.isFailFast() ? "" : ", after the call's deadline")
                + " (RpcClient.builder().reconnectBackoff)");
          }
        } else {
          enqueue(w);
          start = startConnect();
        }
      }
    }
    if (start != null) {
      launch(start);
    }
    if (c != null) {
      call.startStream(transport, c);
    } else if (failure != null) {
      call.onClose(failure, Metadata.EMPTY, AttemptProgress.NOT_SENT); // the core may send it to another endpoint
    }
  }

  /**
   * Another endpoint became READY while calls wait here for a connect attempt (the balancer had nowhere better to
   * send them then): those that may go elsewhere end NOT_SENT now, and the core sends them again through the
   * balancer, rather than wait up to the connect timeout on a host that may drop connects.
   */
  void moveWaitersElsewhere() {
    List<Waiter> moving;
    Status why;
    synchronized (this) {
      if (closed || waiters.isEmpty() || current() != null || connection != null) {
        return; // nothing waits, or a connection is here (or has just closed: its listener decides)
      }
      moving = new ArrayList<>();
      for (java.util.Iterator<Waiter> it = waiters.iterator(); it.hasNext(); ) {
        Waiter w = it.next();
        if (w.call.mayMoveElsewhere()) {
          it.remove();
          ScheduledFuture<?> t = w.timer;
          if (t != null) {
            t.cancel(false);
          }
          moving.add(w);
        }
      }
      if (moving.isEmpty()) {
        return;
      }
      why = elsewhere();
    }
    log.debug("{} call(s) waiting to connect to {} moved: another endpoint is ready", moving.size(),
        owner.authority());
    for (Waiter w : moving) {
      w.call.onClose(why, Metadata.EMPTY, AttemptProgress.NOT_SENT); // the core sends it again
    }
  }

  /** Whether calls wait here (for a connect attempt, or a connection after the last one closed). */
  synchronized boolean hasWaiters() {
    return !waiters.isEmpty();
  }

  // Holding the lock: why a call that could wait here for a connection is sent to another endpoint instead.
  private Status elsewhere() {
    if (lastFailure == null) {
      return Status.UNAVAILABLE.withDescription("connecting to " + owner.authority() + "; sent to another endpoint");
    }
    return cannotConnect((connecting != null ? "; reconnecting" : nextAttemptDescribedLocked())
        + "; sent to another endpoint");
  }

  // Holding the lock, after a failed attempt: "cannot connect to host:port: <why>" and {@code more}, with the
  // connect's own exception as the cause when there was one.
  private Status cannotConnect(String more) {
    Status s = Status.UNAVAILABLE.withDescription("cannot connect to " + owner.authority() + ": " + lastFailure
        + more);
    return lastFailureCause != null ? s.withCause(lastFailureCause) : s;
  }

  // Holding the lock: milliseconds until the reconnect timer fires (0 if it is due).
  private long msToNextAttempt() {
    return Math.max(0, TimeUnit.NANOSECONDS.toMillis(nextAttemptAt - System.nanoTime()));
  }

  // Holding the lock: the call waits for the attempt under way or the next one, by its deadline at the latest.
  private void enqueue(Waiter w) {
    waiters.add(w);
    Deadline d = w.call.deadline();
    if (d == null) {
      return;
    }
    try {
      w.timer = scheduler.schedule(() -> expired(w), Math.max(0, d.remainingNanos()), TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      // The transport's threads are stopping: the client is shutting down; the close that follows ends the call.
    }
  }

  /** A waiting call's deadline passed before a connection could take it. */
  private void expired(Waiter w) {
    boolean removed;
    String why;
    synchronized (this) {
      removed = waiters.remove(w);
      why = waitedFor();
    }
    if (removed) {
      w.call.deadlineExceeded(" (the request was not sent yet: " + why + ")");
    }
  }

  /**
   * For {@code RpcClient.start()}: a usable connection, or the attempt to make one (the one under way, or one
   * started now); while the slot backs off after a failed attempt, a future failed with UNAVAILABLE saying why
   * and when the next attempt is due.
   */
  CompletableFuture<Connection> connectNow() {
    Link start;
    synchronized (this) {
      Connection c = current();
      if (c != null) {
        Link l = connectionLink;
        // Connected, and waiting for the server's first frame: done when it comes (or the connection closes).
        return l != null && !l.result.isDone() ? l.result : CompletableFuture.completedFuture(c);
      }
      if (closed) {
        return CompletableFuture.failedFuture(shutDown().asException());
      }
      if (connecting != null) {
        return connecting.result;
      }
      if (connection != null) {
        return CompletableFuture.failedFuture(Status.UNAVAILABLE.withDescription("the connection to "
            + owner.authority() + " has just closed; retry").asException());
      }
      if (reconnectTimer != null && lastFailure != null) {
        return CompletableFuture.failedFuture(cannotConnect(nextAttemptDescribedLocked()).asException());
      }
      start = startConnect();
    }
    launch(start);
    return start.result;
  }

  /** The state of this connection, for the endpoint's {@link ConnectivityState}. */
  synchronized ConnectivityState state() {
    if (closed) {
      return ConnectivityState.SHUTDOWN;
    }
    if (current() != null) {
      Link l = connectionLink;
      // Connected but not yet answered (the server's first frame): still connecting, as far as anyone can tell.
      return l == null || l.answered ? ConnectivityState.READY : ConnectivityState.CONNECTING;
    }
    if (connecting != null) {
      return ConnectivityState.CONNECTING;
    }
    return backingOff ? ConnectivityState.BACKING_OFF : ConnectivityState.IDLE;
  }

  /** Why the last attempt failed, while backing off; else null. */
  synchronized @Nullable String failure() {
    return backingOff ? lastFailure : null;
  }

  // Holding the lock: what a call that waits here waits for, in words (for its DEADLINE_EXCEEDED).
  private String waitedFor() {
    String failed = lastFailure != null ? "; the last attempt failed: " + lastFailure : "";
    if (connecting != null) {
      return "it waited for the connect attempt to " + owner.authority() + " under way" + failed;
    }
    if (reconnectTimer != null && lastFailure != null) {
      return "it waited for the next connect attempt to " + owner.authority() + ", due in " + msToNextAttempt()
          + " ms" + failed
          + " (RpcClient.builder().reconnectBackoff)";
    }
    if (connection != null) {
      return "it waited for a new connection to " + owner.authority() + " after the last one closed";
    }
    return "it waited for a connection to " + owner.authority() + failed;
  }

  /** "; next attempt in N ms (...)" while the slot backs off after a failed attempt, else "". */
  private synchronized String nextAttemptDescribed() {
    return nextAttemptDescribedLocked();
  }

  // Holding the lock.
  private String nextAttemptDescribedLocked() {
    if (reconnectTimer == null || lastFailure == null) {
      return "";
    }
    return "; next attempt in " + msToNextAttempt() + " ms (RpcClient.builder().reconnectBackoff)";
  }

  private Status shutDown() {
    String why = closedWhy;
    return Status.UNAVAILABLE.withDescription(why != null ? why : owner.whyStopped());
  }

  // Holding the lock: a new attempt; the caller launches it once it has let go of the lock.
  private Link startConnect() {
    if (reconnectTimer != null) {
      reconnectTimer.cancel(false);
      reconnectTimer = null;
      backoffChanged();
    }
    Link a = new Link();
    connecting = a;
    attempting = true;
    return a;
  }

  /** Asks the transport for the connection of attempt {@code a} (holding no lock). */
  private void launch(Link a) {
    owner.slotChanged(); // CONNECTING, before the transport may already have answered
    CompletableFuture<Connection> f;
    try {
      f = transport.connect(owner.endpoint(), a);
    } catch (RuntimeException e) {
      f = CompletableFuture.failedFuture(e);
    }
    boolean giveUp;
    synchronized (this) {
      a.future = f;
      giveUp = closed;
    }
    if (giveUp) {
      f.cancel(false);
    }
    f.whenComplete((c, t) -> connected(a, c, t));
  }

  /** Ends connect attempt {@code a}: with the new connection, or with {@code error}. */
  private void connected(Link a, @Nullable Connection c, @Nullable Throwable error) {
    Connection usable = null;
    Connection toClose = null;
    Status failure = null;
    List<Waiter> ready;
    synchronized (this) {
      if (connecting == a) {
        connecting = null;
        attempting = false;
      }
      String why = null;
      Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
      if (cause == null && c != null) {
        if (closed) {
          toClose = c;
        } else if (!c.isUsable()) {
          // Closed between connect (or handshake) and now, e.g. by a TLS alert: a failed attempt.
          why = a.closeReason != null ? a.closeReason : "the connection closed as soon as it opened";
        } else {
          usable = c;
          a.connection = c;
          connection = c;
          connectionLink = a;
          awaitingFirstFrame = !a.answered;
          if (!a.answered) {
            watchFirstFrame(a);
          }
          lastFailure = null;
          lastFailureCause = null;
          goawaySeen = false;
        }
      } else if (!(cause instanceof CancellationException) && !closed) {
        String described = cause instanceof StatusException se ? se.status().description() : null;
        why = described != null ? described : connectFailed(cause, config.connectTimeoutNanos());
      }
      if (why != null) {
        if (goawaySeen) {
          why += " (the server there sent GOAWAY on the last connection: it is shutting down or restarting)";
        }
        Throwable statusCause = cause instanceof StatusException se ? se.getCause() : cause;
        failure = Status.UNAVAILABLE.withDescription("cannot connect to " + owner.authority() + ": " + why);
        if (statusCause != null) {
          failure = failure.withCause(statusCause);
        }
        lastFailure = why;
        lastFailureCause = statusCause;
        scheduleReconnect();
      }
      backoffChanged();
      ready = usable != null || failure != null ? takeWaiters() : List.of();
    }
    owner.slotChanged();
    if (toClose != null) {
      toClose.close();
    }
    if (usable != null) {
      log.debug("connected to {}", owner.authority());
      a.health.start(usable); // keepalive and the liveness check, on the connection's own thread
      boolean answeredAlready;
      synchronized (this) {
        answeredAlready = a.answered;
      }
      if (answeredAlready) {
        a.result.complete(usable); // else when the server's first frame comes (answered)
      }
      for (Waiter w : ready) {
        w.send(usable);
      }
      return;
    }
    Status s = failure != null ? failure : shutDown();
    log.debug("{}", s.description()); // "cannot connect to host:port: why" (or why the client stopped)
    a.result.completeExceptionally(s.asException());
    if (failure != null && !ready.isEmpty()) {
      // The attempt they waited for failed (a call waits for one attempt at most): say when the next is due.
      Status told = failure.withDescription(failure.description() + nextAttemptDescribed());
      for (Waiter w : ready) {
        w.fail(told);
      }
    }
  }

  /** What a refused connect says (after "cannot connect to host:port: "): what happened and what to check. */
  static final String REFUSED = "connection refused: nothing listens on that port (is the server running, and is"
      + " the address right?)";

  /**
   * A connect's own exception in words. A refused one, or one that timed out, says so and what to check, rather
   * than the transport's exception class and the system call that failed
   * ("io.netty.channel.AbstractChannel$AnnotatedConnectException: finishConnect(..) failed with error(-111):
   * Connection refused: /127.0.0.1:7000"); it stays the failure's cause.
   */
  private static String connectFailed(@Nullable Throwable cause, long connectTimeoutNanos) {
    if (cause == null) {
      return "no connection";
    }
    String m = cause.getMessage();
    String lower = m == null ? "" : m.toLowerCase(java.util.Locale.ROOT);
    if (cause instanceof java.net.ConnectException && lower.contains("connection refused")) {
      return REFUSED;
    }
    if (cause instanceof java.net.ConnectException && lower.contains("timed out")) {
      // The transport's own connect timeout (Netty's ConnectTimeoutException is a ConnectException).
      return "connection timed out after " + TimeUnit.NANOSECONDS.toMillis(connectTimeoutNanos) + " ms: "
          + TIMED_OUT;
    }
    return cause.toString();
  }

  /** What a connect that timed out says (after "connection timed out after N ms: "): what to check. */
  static final String TIMED_OUT = "no answer from that address (is the host up and the port open, or does a"
      + " firewall drop the packets?); the wait is RpcClient.builder().connectTimeout";

  // Holding the lock: the waiting calls, each without its deadline timer, that have not ended meanwhile.
  private List<Waiter> takeWaiters() {
    if (waiters.isEmpty()) {
      return List.of();
    }
    List<Waiter> taken = new ArrayList<>(waiters.size());
    Waiter w;
    while ((w = waiters.poll()) != null) {
      ScheduledFuture<?> t = w.timer;
      if (t != null) {
        t.cancel(false);
      }
      if (!w.call.isFinished()) {
        taken.add(w);
      }
    }
    return taken;
  }

  // Holding the lock, after reconnectTimer or lastFailure changed.
  private void backoffChanged() {
    backingOff = reconnectTimer != null && lastFailure != null;
  }

  // Holding the lock.
  private void scheduleReconnect() {
    if (closed || reconnectTimer != null || connecting != null) {
      return;
    }
    long jittered = (long) (backoffNanos * (0.8 + 0.4 * ThreadLocalRandom.current().nextDouble()));
    backoffNanos = Math.min(backoffNanos * 2, config.reconnectMaxBackoffNanos());
    try {
      nextAttemptAt = System.nanoTime() + jittered;
      reconnectTimer = scheduler.schedule(this::backoffEnded, jittered, TimeUnit.NANOSECONDS);
      backoffChanged();
    } catch (RejectedExecutionException e) {
      // The transport's threads are gone (the client is shutting down, or the caller stopped the threads it gave
      // it): no timer; the next call's attempt fails at once saying why.
    }
  }

  /**
   * The backoff is over: the next attempt, for calls waiting, or by itself while other endpoints of the client are
   * available (else the next call starts it).
   */
  private void backoffEnded() {
    Link start = null;
    synchronized (this) {
      reconnectTimer = null;
      backoffChanged();
      waiters.removeIf(Waiter::dropIfFinished);
      // With calls waiting, or while other endpoints take the calls (the balancers skip this one until it
      // connects, so no call would come to start the attempt): the next attempt, made by the slot itself.
      if (!closed && current() == null && connecting == null
          && (!waiters.isEmpty() || (lastFailure != null && owner.othersAvailable()))) {
        start = startConnect();
      }
    }
    if (start != null) {
      launch(start);
    } else {
      owner.slotChanged();
    }
  }

  // Holding the lock: calls wait for a connection and nothing plans one (no attempt, no backoff): start it now.
  private @Nullable Link connectForWaiters() {
    waiters.removeIf(Waiter::dropIfFinished);
    if (!waiters.isEmpty() && connecting == null && reconnectTimer == null && current() == null) {
      return startConnect();
    }
    return null;
  }

  /**
   * The connection of {@code a} received its first frame: the server is really there, so backoff starts over, and
   * the endpoint is READY (not before: a frozen server's kernel still accepts connections).
   */
  private void answered(Link a) {
    Connection c;
    synchronized (this) {
      backoffNanos = config.reconnectInitialBackoffNanos();
      a.answered = true;
      cancelFirstFrameTimer(a);
      if (connectionLink == a) {
        awaitingFirstFrame = false;
      }
      c = a.connection;
    }
    owner.slotChanged();
    if (c != null) {
      a.result.complete(c); // RpcClient.start() counts the endpoint connected from now (not at TCP connect)
    }
  }

  // Holding the lock: closes a's new connection if its server's first frame does not come within the connect
  // timeout. A server that accepts and then says nothing (a frozen process, whose kernel still accepts connections;
  // an overloaded one; something that is not a Petrel server) would otherwise hold the calls sent there until their
  // deadlines while its endpoint looked connected: the connection closes instead, as a failed connect attempt (its
  // calls were not written: they go to another endpoint or wait for the next attempt), and the endpoint backs off.
  private void watchFirstFrame(Link a) {
    long timeout = config.connectTimeoutNanos();
    try {
      a.firstFrameTimer = scheduler.schedule(() -> firstFrameDue(a, timeout), timeout, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      // The transport's threads are stopping: the client is shutting down and closes the connection.
    }
  }

  // Holding the lock.
  private static void cancelFirstFrameTimer(Link a) {
    ScheduledFuture<?> t = a.firstFrameTimer;
    if (t != null) {
      t.cancel(false);
      a.firstFrameTimer = null;
    }
  }

  /** The connect timeout has passed since {@code a}'s connection opened, and its server has said nothing. */
  private void firstFrameDue(Link a, long timeoutNanos) {
    Connection c;
    String why = "connected, but the server sent nothing within the connect timeout of "
        + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms: is the server frozen or overloaded, or not a Petrel"
        + " server? (RpcClient.builder().connectTimeout)";
    synchronized (this) {
      a.firstFrameTimer = null;
      if (a.answered || connectionLink != a || closed) {
        return;
      }
      a.firstFrameDue = why;
      c = a.connection;
    }
    if (c != null) {
      log.debug("closing the connection to {}: {}", owner.authority(), why);
      c.closeIfUnanswered(why); // the transport checks again on its own thread: a first frame may be racing this
    }
  }

  /** The server of {@code a}'s connection takes no new call there: new calls go to a new connection. */
  private void goaway(Link a) {
    Link start = null;
    boolean lost = false;
    synchronized (this) {
      goawaySeen = true;
      if (a.connection != null && connectionLink == a) {
        connection = null;
        connectionLink = null;
        awaitingFirstFrame = false;
        if (!closed) {
          lost = true;
          start = connectForWaiters();
        }
      }
    }
    if (start != null) {
      launch(start);
    } else {
      owner.slotChanged();
    }
    if (lost) {
      owner.slotLostConnection();
    }
  }

  /** {@code a}'s connection (or connect attempt) closed. */
  private void closed(Link a, @Nullable String reason, boolean answered) {
    Link start = null;
    boolean lost = false;
    String unanswered = null;
    synchronized (this) {
      cancelFirstFrameTimer(a);
      if (a.connection == null) {
        a.closeReason = reason; // the attempt's own channel: connected() says why it failed
      } else if (connectionLink == a) {
        connection = null;
        connectionLink = null;
        awaitingFirstFrame = false;
        if (!closed) {
          if (!answered) {
            // Accepted, then closed before the server said anything: as good as a failed attempt.
            String due = a.firstFrameDue; // the core closed it: its reason, whatever the transport passed on
            lastFailure = due != null ? due
                : reason != null ? reason : "the connection was closed before the server answered anything";
            lastFailureCause = null;
            unanswered = lastFailure;
            log.debug("connection to {} closed before the server answered; next attempt after the backoff",
                owner.authority());
            scheduleReconnect();
            backoffChanged();
          } else {
            log.debug("connection to {} lost; the next call reconnects", owner.authority());
            lost = true;
            start = connectForWaiters();
          }
        }
      }
    }
    a.closed.complete(null);
    if (a.connection != null && !a.result.isDone()) {
      // Connected, then closed before the server's first frame: RpcClient.start() hears it as a failed connect.
      String why = unanswered != null ? unanswered : closedWhy;
      a.result.completeExceptionally(Status.UNAVAILABLE.withDescription("cannot connect to " + owner.authority()
          + ": " + (why != null ? why : "the connection was closed before the server answered anything"))
          .asException());
    }
    if (start != null) {
      launch(start);
    } else {
      owner.slotChanged();
    }
    if (lost) {
      owner.slotLostConnection();
    }
  }

  /**
   * What follows for the endpoint when one of this slot's connections is found dead ({@link ConnectionHealth}), for
   * the transport's WARN ({@link Connection#closeDead}'s {@code next}): "reconnecting" while the slot is open (the
   * calls waiting here, those sent again, or the next call connect again), else "not reconnecting: " and why (the
   * endpoint left the resolver's list and its connections were draining; the client is shutting down). On the
   * connection's executor.
   */
  private String afterDead() {
    String why;
    synchronized (this) {
      why = closedWhy; // set by drain, just before it closes the slot
      if (!closed && why == null) {
        return "reconnecting";
      }
    }
    return "not reconnecting: " + (why != null ? why : owner.whyStopped());
  }

  /**
   * The endpoint left the resolver's list: no reconnect, nothing new sent here; the connection's calls in flight
   * finish and it closes after the last (the transport's {@link Connection#drain}). Calls waiting for a
   * connection end NOT_SENT, so the core sends them to another endpoint. Completes when the connection closed.
   */
  CompletableFuture<Void> drain(String why) {
    Connection c;
    Link link;
    synchronized (this) {
      closedWhy = why;
      c = closed ? null : connection;
      link = closed ? null : connectionLink;
      connection = null;
      connectionLink = null;
      awaitingFirstFrame = false;
    }
    CompletableFuture<Void> closing = close(); // no reconnect, no attempt left; the connection is no longer ours
    if (c == null || link == null) {
      return closing;
    }
    c.drain(why);
    return link.closed;
  }

  /** Stops reconnecting and closes the connection (its calls in flight fail with UNAVAILABLE). */
  CompletableFuture<Void> close() {
    Connection c;
    Link link;
    Link attempt;
    List<Waiter> waiting;
    synchronized (this) {
      closed = true;
      if (reconnectTimer != null) {
        reconnectTimer.cancel(false);
        reconnectTimer = null;
      }
      c = connection;
      link = connectionLink;
      connection = null;
      connectionLink = null;
      awaitingFirstFrame = false;
      attempt = connecting;
      connecting = null;
      waiting = takeWaiters();
      backoffChanged();
    }
    owner.slotChanged();
    if (attempt != null) {
      CompletableFuture<Connection> f = attempt.future;
      if (f != null) {
        f.cancel(false); // the transport closes what it opened; its terminate waits for that
      }
      attempt.result.completeExceptionally(shutDown().asException());
    }
    Status s = shutDown();
    for (Waiter w : waiting) {
      w.fail(s); // not sent: the core sends it to another endpoint unless the client is going away
    }
    if (c == null || link == null) {
      return CompletableFuture.completedFuture(null);
    }
    c.close();
    return link.closed;
  }

  /**
   * One connect attempt and, once it succeeded, its connection: what the transport tells the core about it
   * arrives here.
   */
  private final class Link implements Connection.Listener {
    /** Completed when the attempt ends (for {@code RpcClient.start()}). */
    final CompletableFuture<Connection> result = new CompletableFuture<>();
    /** Completed when the connection (or the attempt's channel) has closed. */
    final CompletableFuture<Void> closed = new CompletableFuture<>();
    // Guarded by the slot's lock.
    @Nullable CompletableFuture<Connection> future;
    @Nullable Connection connection;
    @Nullable String closeReason;
    /** The connection's first frame arrived ({@link #answered()}). */
    boolean answered;
    /** Closes the connection if its first frame does not come in time ({@link #watchFirstFrame}). */
    @Nullable ScheduledFuture<?> firstFrameTimer;
    /** Why the core closed the connection before its first frame came, or null. */
    @Nullable String firstFrameDue;
    /** Keepalive and the liveness check of the connection (not guarded: see {@link ConnectionHealth}). */
    final ConnectionHealth health = new ConnectionHealth(config.keepAliveTimeNanos(), config.livenessTimeoutNanos(),
        ConnectionSlot.this::afterDead);

    @Override
    public void answered() {
      health.answered();
      ConnectionSlot.this.answered(this);
    }

    /** Once per read batch, on the connection's thread: the per-read path. */
    @Override
    public void received() {
      health.received();
    }

    @Override
    public void deadlinePassed() {
      health.deadlinePassed();
    }

    @Override
    public void goaway() {
      ConnectionSlot.this.goaway(this);
    }

    @Override
    public void closed(@Nullable String reason, boolean answered) {
      health.stop();
      ConnectionSlot.this.closed(this, reason, answered);
    }
  }

  /** A call waiting for a connection (it keeps its request and options). */
  private final class Waiter {
    final ClientCall<?> call;
    @Nullable ScheduledFuture<?> timer;

    Waiter(ClientCall<?> call) {
      this.call = call;
    }

    void send(Connection c) {
      try {
        call.startStream(transport, c);
      } catch (Throwable t) {
        call.startFailed(t);
      }
    }

    void fail(Status s) {
      call.onClose(s, Metadata.EMPTY, AttemptProgress.NOT_SENT);
    }

    /**
     * True if the call already ended (cancelled, or its deadline passed): it leaves the queue, and its deadline
     * timer is cancelled so that it no longer holds the call and its request until the deadline.
     */
    boolean dropIfFinished() {
      if (!call.isFinished()) {
        return false;
      }
      ScheduledFuture<?> t = timer;
      if (t != null) {
        t.cancel(false);
        timer = null;
      }
      return true;
    }
  }

  @Override
  public synchronized String toString() {
    return "ConnectionSlot{connection=" + connection + ", connecting=" + (connecting != null) + ", reconnectTimer="
        + reconnectTimer + ", waiting=" + waiters.size() + ", lastFailure=" + lastFailure + ", closed=" + closed
        + "}";
  }
}
