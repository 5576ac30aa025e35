package io.petrel.rpc.transport.netty;

import io.netty.channel.EventLoopGroup;
import io.petrel.rpc.Endpoint;
import io.petrel.rpc.spi.ClientConfig;
import io.petrel.rpc.Status;
import io.petrel.rpc.spi.ClientSubchannel;
import io.petrel.rpc.spi.ConnectivityState;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The client's connections to one endpoint ({@code connectionsPerEndpoint} {@link ClientSlot}s, each with its
 * own reconnect backoff), as the core's load balancer sees them: the endpoint, its pending calls, whether it is
 * backing off.
 */
final class NettySubchannel extends ClientSubchannel {
  private final InetSocketAddress address;
  private final String authority;
  private final ClientSlot[] slots;
  private final NettyRpcClient client;
  private int roundRobin;

  NettySubchannel(NettyRpcClient client, Endpoint endpoint, EventLoopGroup group, IoSupport io,
      ClientConfig config) {
    super(endpoint);
    this.client = client;
    this.address = InetSocketAddress.createUnresolved(endpoint.host(), endpoint.port());
    this.authority = endpoint.authority();
    this.slots = new ClientSlot[config.connectionsPerEndpoint()];
    for (int i = 0; i < slots.length; i++) {
      slots[i] = new ClientSlot(client, this, group.next(), io, config);
    }
  }

  /** Where to connect (resolved at each connect, so a DNS change is seen on reconnect). */
  InetSocketAddress address() {
    return address;
  }

  /** "host:port", for messages. */
  String authority() {
    return authority;
  }

  ClientSlot[] slots() {
    return slots;
  }

  @Override
  public boolean isAvailable() {
    for (ClientSlot s : slots) {
      if (!s.isBackingOff()) {
        return true;
      }
    }
    return false;
  }

  /** The slot for the next call: round robin over the endpoint's connections. */
  ClientSlot nextSlot() {
    if (slots.length == 1) {
      return slots[0];
    }
    int i = roundRobin++; // racy on purpose: any spread is fine, no contention
    return slots[Math.floorMod(i, slots.length)];
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
      for (ClientSlot s : slots) {
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
      if (best == state() && java.util.Objects.equals(why, now == null ? null : now.description())) {
        return;
      }
      stateChanged(best, why == null ? null : Status.UNAVAILABLE.withDescription(why));
      if (best == ConnectivityState.SHUTDOWN) {
        return;
      }
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

  /** Connections open now. */
  int connected() {
    int n = 0;
    for (ClientSlot s : slots) {
      n += s.current() != null ? 1 : 0;
    }
    return n;
  }

  /** Closes every connection (their pending calls fail with UNAVAILABLE); completes when all are closed. */
  @Override
  public CompletableFuture<Void> close() {
    return each(false);
  }

  /** The endpoint is gone: each connection closes once its calls have ended (see ClientSlot#drain). */
  @Override
  public CompletableFuture<Void> drain() {
    return each(true);
  }

  private CompletableFuture<Void> each(boolean drain) {
    CompletableFuture<Void> all = new CompletableFuture<>();
    AtomicInteger remaining = new AtomicInteger(slots.length);
    for (ClientSlot s : slots) {
      (drain ? s.drain() : s.close()).addListener(f -> {
        if (remaining.decrementAndGet() == 0) {
          client.closed(this);
          all.complete(null);
        }
      });
    }
    return all;
  }

  @Override
  public String toString() {
    return "Subchannel{" + endpoint() + ", pending=" + pendingCalls() + ", slots=" + java.util.Arrays.toString(slots)
        + "}";
  }
}
