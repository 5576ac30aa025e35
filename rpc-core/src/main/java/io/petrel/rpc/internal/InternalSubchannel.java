package io.petrel.rpc.internal;

import io.petrel.rpc.Endpoint;
import io.petrel.rpc.Status;
import io.petrel.rpc.spi.ClientConfig;
import io.petrel.rpc.spi.ClientTransport;
import io.petrel.rpc.ConnectivityState;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Supplier;

/**
 * The core's connections to one endpoint: {@code connectionsPerEndpoint} {@link ConnectionSlot}s, each with its
 * own reconnect backoff and waiting calls, over whatever transport the client has. It computes the endpoint's
 * {@link ConnectivityState} (the best of its slots') for the load balancer and hands each attempt to a slot,
 * round robin.
 */
public final class InternalSubchannel extends ClientSubchannel {
  private final String authority;
  private final ConnectionSlot[] slots;
  private final Supplier<String> whyStopped;
  private final String target;
  /** The client's endpoints now, this one among them. */
  private final Supplier<List<InternalSubchannel>> siblings;
  private int roundRobin;

  /**
   * @param whyStopped what a call that reaches a closed slot is told when the endpoint was not removed (the client
   *     is shut down)
   * @param siblings the client's endpoints now (this one among them)
   */
  InternalSubchannel(Endpoint endpoint, ClientTransport transport, ScheduledExecutorService scheduler,
      ClientConfig config, Supplier<String> whyStopped, Supplier<List<InternalSubchannel>> siblings) {
    super(endpoint);
    this.siblings = siblings;
    this.authority = endpoint.authority();
    this.whyStopped = whyStopped;
    this.target = config.target();
    this.slots = new ConnectionSlot[config.connectionsPerEndpoint()];
    for (int i = 0; i < slots.length; i++) {
      slots[i] = new ConnectionSlot(this, transport, scheduler, config);
    }
  }

  /** "host:port", for messages. */
  String authority() {
    return authority;
  }

  String whyStopped() {
    return whyStopped.get();
  }

  @Override
  public boolean isAvailable() {
    for (ConnectionSlot s : slots) {
      if (s.isAvailable()) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether another endpoint of the client is available now: then a call picked for this one while it is failing
   * goes there rather than wait here (see {@link ConnectionSlot#send}).
   */
  boolean othersAvailable() {
    for (InternalSubchannel other : siblings.get()) {
      if (other != this && other.isAvailable()) {
        return true;
      }
    }
    return false;
  }

  /** The slot for the next attempt: round robin over the endpoint's connections. */
  private ConnectionSlot nextSlot() {
    if (slots.length == 1) {
      return slots[0];
    }
    int i = roundRobin++; // racy on purpose: any spread is fine, no contention
    return slots[Math.floorMod(i, slots.length)];
  }

  /** Sends an attempt of {@code call} over one of the endpoint's connections (see {@link ConnectionSlot#send}). */
  void send(ClientCall<?> call) throws Exception {
    nextSlot().send(call);
  }

  /** For {@code RpcClient.start()}: each slot's connection, or its attempt to make one. */
  CompletableFuture<?>[] connectNow() {
    CompletableFuture<?>[] attempts = new CompletableFuture<?>[slots.length];
    for (int i = 0; i < slots.length; i++) {
      attempts[i] = slots[i].connectNow();
    }
    return attempts;
  }

  /**
   * A slot's state may have changed: reports the endpoint's (the best of its slots') to the core. Called holding
   * no slot lock. Two slots changing at once may report out of order; each caller checks after reporting and
   * reports again until what it reported is what it sees, so the last report is the current state.
   */
  void slotChanged() {
    for (int i = 0; i < 4; i++) {
      ConnectivityState best = ConnectivityState.SHUTDOWN;
      String failure = null;
      for (ConnectionSlot s : slots) {
        ConnectivityState st = s.state();
        if (rank(st) > rank(best)) {
          best = st;
        }
        if (st == ConnectivityState.BACKING_OFF && failure == null) {
          failure = s.failure();
        }
      }
      String why = best == ConnectivityState.BACKING_OFF && failure != null ? "cannot connect to " + authority
          + ": " + failure : null;
      Status now = stateCause();
      if (best == state() && Objects.equals(why, now == null ? null : now.description())) {
        return;
      }
      stateChanged(best, why == null ? null : Status.UNAVAILABLE.withDescription(why));
      if (best == ConnectivityState.SHUTDOWN) {
        return;
      }
    }
  }

  @Override
  protected void anotherEndpointReady() {
    for (ConnectionSlot s : slots) {
      s.moveWaitersElsewhere();
    }
  }

  @Override
  protected boolean hasWaiters() {
    for (ConnectionSlot s : slots) {
      if (s.hasWaiters()) {
        return true;
      }
    }
    return false;
  }

  /** A slot's first waiting call may be queued (holding that slot's lock, before the call is queued). */
  void slotWaiting() {
    waitersAdded();
  }

  /**
   * A slot's connection was lost or went away (GOAWAY). With one slot the endpoint's state change asks for the
   * resolver's refresh; with several, the others may keep it READY, so ask here.
   */
  void slotLostConnection() {
    if (slots.length > 1) {
      oneConnectionLost();
    }
  }

  private static int rank(ConnectivityState s) {
    return switch (s) {
      case READY -> 4;
      case CONNECTING -> 3;
      case IDLE -> 2;
      case BACKING_OFF -> 1;
      case SHUTDOWN -> 0;
    };
  }

  /** Closes every connection (their calls in flight fail with UNAVAILABLE); completes when all are closed. */
  @Override
  public CompletableFuture<Void> close() {
    CompletableFuture<?>[] each = new CompletableFuture<?>[slots.length];
    for (int i = 0; i < slots.length; i++) {
      each[i] = slots[i].close();
    }
    return CompletableFuture.allOf(each);
  }

  /** The endpoint is gone: each connection closes once its calls have ended (see ConnectionSlot#drain). */
  @Override
  public CompletableFuture<Void> drain() {
    return drain(authority + " was removed from " + target + " by its resolver");
  }

  @Override
  public CompletableFuture<Void> drain(String why) {
    CompletableFuture<?>[] each = new CompletableFuture<?>[slots.length];
    for (int i = 0; i < slots.length; i++) {
      each[i] = slots[i].drain(why);
    }
    return CompletableFuture.allOf(each);
  }

  @Override
  public String toString() {
    return "Subchannel{" + endpoint() + ", pending=" + pendingCalls() + ", slots=" + java.util.Arrays.toString(slots)
        + "}";
  }
}
