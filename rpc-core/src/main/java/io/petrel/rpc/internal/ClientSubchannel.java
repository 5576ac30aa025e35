package io.petrel.rpc.internal;

import io.petrel.rpc.Endpoint;
import io.petrel.rpc.Status;
import io.petrel.rpc.ConnectivityState;
import io.petrel.rpc.Subchannel;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * The client's connections to one endpoint, as the core's client channel keeps them: made when the resolver
 * names the endpoint, closed when it no longer does. Extended by the core only ({@code internal.InternalSubchannel},
 * which owns the connections, their reconnect backoff and the calls waiting for them, over the transport's
 * {@link io.petrel.rpc.spi.Connection}s). The core counts the calls sent through it (when the client has several endpoints), which
 * is what a least-pending balancer compares; it says whether it can take calls now ({@link #isAvailable()}) and
 * reports its connections' state ({@link #stateChanged}).
 */
public abstract class ClientSubchannel implements Subchannel {
  private volatile Endpoint endpoint;
  private final AtomicInteger pending = new AtomicInteger();
  private volatile ConnectivityState state = ConnectivityState.IDLE;
  private volatile @Nullable Status stateCause;
  /** Whether a connect attempt failed here since it was last READY: see {@link #isFailing}. */
  private volatile boolean failing;
  /** The core's side that keeps this subchannel, told of its state and calls; set once it is adopted. */
  private volatile @Nullable Owner owner;
  /**
   * How long an endpoint is refusing ({@link #isRefusing}) after its server refused a call for a limit, the first
   * time; each pause that ends in another refusal doubles it, up to {@link #MAX_REFUSAL_PAUSE_NANOS}.
   */
  static final long REFUSAL_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
  static final long MAX_REFUSAL_PAUSE_NANOS = TimeUnit.SECONDS.toNanos(1);
  /** {@link System#nanoTime()} at which the current refusal pause ends; 0 when there is none. */
  private final AtomicLong refusingUntil = new AtomicLong();
  /**
   * Pauses since the server last answered a call here; sets the next pause's length. Racy on purpose (two refusals
   * at once may both count): it only chooses between 10 ms and 1 s.
   */
  private int pausesInARow;

  /** What the core's channel hears from a subchannel it keeps (implemented by the core only). */
  public interface Owner {
    /** The subchannel's state changed (called under its lock, so in order). */
    void stateChanged(ClientSubchannel s, ConnectivityState state, @Nullable Status cause);

    /** A connection was lost or an attempt failed: the endpoints may have changed (called holding no lock). */
    void connectionLost();

    /**
     * {@code s} has just become {@link ConnectivityState#READY} (called holding no lock): calls waiting for a
     * connect attempt to another endpoint may go there instead.
     */
    default void becameReady(ClientSubchannel s) {}

    /**
     * Calls may start to wait at {@code s} for a connect attempt ({@link #waitersAdded}): {@link #becameReady}
     * of another endpoint looks at it. Called holding a lock of {@code s}'s: only notes {@code s}.
     */
    default void waitersAdded(ClientSubchannel s) {}

    /** An attempt counted on {@code s} ended with {@code outcome}, {@code latencyNanos} after its call started. */
    void callEnded(ClientSubchannel s, Status outcome, long latencyNanos);
  }

  protected ClientSubchannel(Endpoint endpoint) {
    this.endpoint = endpoint;
  }

  @Override
  public final Endpoint endpoint() {
    return endpoint;
  }

  /** The core's: the same address with new attributes (a weight), as the resolver said. */
  public final void updateEndpoint(Endpoint e) {
    this.endpoint = e;
  }

  /** Calls sent through here and not yet ended; counted only when the client has several endpoints. */
  @Override
  public final int pendingCalls() {
    return pending.get();
  }

  /** The core's: an attempt is counted here until it ends. */
  public final void callStarted() {
    pending.incrementAndGet();
  }

  /** A call counted here ended with {@code outcome}, {@code latencyNanos} after it started. */
  final void callEnded(Status outcome, long latencyNanos) {
    pending.decrementAndGet();
    if (pausesInARow != 0 && answered(outcome.code())) {
      pausesInARow = 0; // the server took a call again: a next refusal pauses it for the shortest time
    }
    Owner o = owner;
    if (o != null) {
      o.callEnded(this, outcome, latencyNanos);
    }
  }

  // Whether a call that ended with this code was answered by a server that took it (an answer, an application's
  // error), rather than refused by a limit, cut off, or ended by the client.
  private static boolean answered(Status.Code code) {
    return code != Status.Code.RESOURCE_EXHAUSTED && code != Status.Code.UNAVAILABLE
        && code != Status.Code.DEADLINE_EXCEEDED && code != Status.Code.CANCELLED;
  }

  /**
   * The core's, for a client of several endpoints: the endpoint's server refused an attempt for a limit, unread
   * (its business pool full, or its calls per connection). It answers such calls at once, so by calls pending it
   * would look the least loaded of all and draw still more calls, each refused, sent again and charged to the
   * retry budget, until the budget ran out and the refusals reached the callers while other servers had room. So
   * the endpoint is refusing ({@link #isRefusing()}) for {@link #REFUSAL_PAUSE_NANOS}; a refusal after that pause
   * has ended starts one twice as long, up to {@link #MAX_REFUSAL_PAUSE_NANOS}, until a call is answered here again.
   * Refusals during a pause (of calls sent before it began) neither lengthen nor shorten it.
   */
  final void refused() {
    long now = System.nanoTime();
    long until = refusingUntil.get();
    if (until != 0 && now - until < 0) {
      return; // within the pause: the calls already sent here come back refused, one after the other
    }
    int n = Math.min(++pausesInARow, 30);
    long pause = Math.min(MAX_REFUSAL_PAUSE_NANOS, REFUSAL_PAUSE_NANOS << Math.min(n - 1, 20));
    long next = now + pause;
    refusingUntil.compareAndSet(until, next == 0 ? 1 : next); // lost to another refusal at once: its pause holds
  }

  @Override
  public final boolean isRefusing() {
    long until = refusingUntil.get();
    if (until == 0) {
      return false;
    }
    if (System.nanoTime() - until < 0) {
      return true;
    }
    refusingUntil.compareAndSet(until, 0); // over; a refusal that set a new pause meanwhile keeps it
    return false;
  }

  /** The core's: the channel that keeps this subchannel, once (before any call is sent through it). */
  public final void adoptedBy(Owner channel) {
    owner = channel;
  }

  /**
   * True once a connect attempt to the endpoint failed, until a connection is ready again: it stays so while it
   * backs off and when it is idle or connecting again after that (see {@link ClientRuntime#anotherEndpointMayTakeIt}).
   */
  public final boolean isFailing() {
    return failing;
  }

  @Override
  public final ConnectivityState state() {
    return state;
  }

  @Override
  public final @Nullable Status stateCause() {
    return stateCause;
  }

  /**
   * The connections' state is now {@code next} ({@code cause}: why it is
   * {@link ConnectivityState#BACKING_OFF}, else null). The core tells the balancer, and asks the resolver to
   * refresh when a connection was lost or an attempt failed. Nothing changes after {@code SHUTDOWN}. Call it
   * holding no lock of the transport's: the resolver may answer at once, on this thread.
   */
  protected final void stateChanged(ConnectivityState next, @Nullable Status cause) {
    ConnectivityState previous;
    synchronized (this) {
      previous = state;
      String was = stateCause == null ? null : stateCause.description();
      if (previous == ConnectivityState.SHUTDOWN
          || (previous == next && Objects.equals(was, cause == null ? null : cause.description()))) {
        return;
      }
      stateCause = next == ConnectivityState.BACKING_OFF ? cause : null;
      state = next;
      if (next == ConnectivityState.BACKING_OFF) {
        failing = true;
      } else if (next == ConnectivityState.READY) {
        failing = false;
      }
      Owner o = owner;
      if (o != null) {
        o.stateChanged(this, next, stateCause); // under this lock: the balancer hears changes in order
      }
    }
    Owner o = owner;
    if (o != null && next != previous && (previous == ConnectivityState.READY
        || next == ConnectivityState.BACKING_OFF) && next != ConnectivityState.SHUTDOWN) {
      o.connectionLost();
    }
    if (o != null && next == ConnectivityState.READY && previous != ConnectivityState.READY) {
      o.becameReady(this);
    }
  }

  /**
   * Another endpoint of the client has just become READY: calls waiting here for a connect attempt (none of this
   * endpoint's connections usable yet) that may go elsewhere end NOT_SENT, and the core sends them again through
   * the balancer. A host that drops connects (gone from the network) would otherwise hold them until the connect
   * timeout. Default: nothing.
   */
  protected void anotherEndpointReady() {}

  /**
   * Whether calls wait here for a connect attempt (that {@link #anotherEndpointReady} might move). Default: false.
   */
  protected boolean hasWaiters() {
    return false;
  }

  /**
   * Calls may start to wait here for a connect attempt (the first of a connection's waiting calls): tells the
   * owner, whose {@link Owner#becameReady} then looks only at the endpoints where calls may wait, not at all of them.
   * Called before the call is queued, holding the lock under which it is queued and under which
   * {@link #anotherEndpointReady} takes the calls that may move, and before the call checks whether another
   * endpoint is available: a becameReady that does not find this subchannel in its set was for an endpoint that
   * call sees available.
   */
  protected final void waitersAdded() {
    Owner o = owner;
    if (o != null) {
      o.waitersAdded(this);
    }
  }

  /**
   * One of the endpoint's connections was lost or told to go away (GOAWAY) while the endpoint stays
   * {@link ConnectivityState#READY} on others: asks the resolver to refresh, as {@link #stateChanged} does when
   * the endpoint's state leaves READY (a server retiring connections by age, or draining, may have moved).
   */
  protected final void oneConnectionLost() {
    Owner o = owner;
    if (o != null && state() == ConnectivityState.READY) {
      o.connectionLost();
    }
  }

  /**
   * Closes every connection to the endpoint: calls still in flight there fail with UNAVAILABLE. Completes when
   * all are closed. Called once.
   */
  public abstract CompletionStage<Void> close();

  /**
   * The endpoint is gone from the resolver's list: take no new call (calls not yet sent go to another endpoint),
   * let the calls in flight finish, and close each connection once it has none (by their deadlines at the
   * latest). Completes when all are closed. {@link #close()} may still follow (the client is shut down now).
   * The default closes at once.
   */
  public CompletionStage<Void> drain() {
    return close();
  }

  /** As {@link #drain()}, {@code why} saying why the client no longer uses the endpoint (for its calls' errors). */
  public CompletionStage<Void> drain(String why) {
    return drain();
  }
}
