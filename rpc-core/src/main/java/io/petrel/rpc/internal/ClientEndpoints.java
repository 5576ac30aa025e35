package io.petrel.rpc.internal;

import io.petrel.rpc.spi.RateLimitedLog;
import io.petrel.rpc.Endpoint;
import io.petrel.rpc.Status;
import io.petrel.rpc.spi.ClientConfig;
import io.petrel.rpc.ConnectivityState;
import io.petrel.rpc.LoadBalancer;
import io.petrel.rpc.NameResolver;
import io.petrel.rpc.Subchannel;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A client's endpoints and the choice among them, the same whatever the transport: it listens to the
 * {@link NameResolver}, keeps one {@link ClientSubchannel} per endpoint (an {@link InternalSubchannel}, kept while
 * the endpoint stays, closed when it goes), tells the {@link LoadBalancer} of every change (endpoints, their
 * states, the end of each call), picks a subchannel per call, and asks the resolver to refresh when a
 * connection is lost. With one endpoint the pick is a field read: no balancer, no counting, no events.
 *
 * @param <S> the subchannel type
 */
public final class ClientEndpoints<S extends ClientSubchannel> implements NameResolver.Listener,
    ClientSubchannel.Owner {
  private static final Logger log = LoggerFactory.getLogger(ClientEndpoints.class);

  private final String name;
  private final String target;
  private final NameResolver resolver;
  private final LoadBalancer balancer;
  private final Function<Endpoint, S> factory;
  private final RateLimitedLog limitLog;
  /** The endpoints' subchannels; replaced (never changed in place) when the resolver says so. */
  private volatile List<S> subchannels = List.of();
  /** The only subchannel when there is exactly one: calls skip the balancer and its counting. */
  private volatile @Nullable S single;
  private volatile @Nullable Status resolverError;
  /** The resolver's errors so far ({@link #onError}): the client's {@code rpc.client.resolver.errors}. */
  private final java.util.concurrent.atomic.LongAdder resolverErrors = new java.util.concurrent.atomic.LongAdder();
  /**
   * The resolver's last list, as messages need it (one field, so that a reader sees both halves of one list):
   * whether the client uses none of it, and how many of its endpoints the filter left out.
   */
  private volatile Listing listing = new Listing(false, 0);
  /** Which endpoints the client uses ({@code RpcClientBuilder.endpointFilter}); null: all. */
  private final java.util.function.@Nullable Predicate<? super Endpoint> filter;

  private record Listing(boolean none, int filteredOut) {}
  /**
   * The subchannels at which calls may wait for a connect attempt: every one where calls wait is in it (it is added
   * as its first call may start to wait, {@link #waitersAdded}), and some where none waits (removed by the
   * next {@link #becameReady}). What becameReady walks: its cost follows the endpoints with waiting calls, not all.
   */
  private final java.util.Set<ClientSubchannel> withWaiters = java.util.concurrent.ConcurrentHashMap.newKeySet();
  /** Subchannels of endpoints no longer listed, until their calls in flight have ended (under this lock). */
  private final List<S> draining = new ArrayList<>();
  private boolean shutdown;

  /**
   * @param factory makes the subchannel of a new endpoint (under this object's lock; it must not
   *     call back into it)
   */
  public ClientEndpoints(ClientConfig config, Function<Endpoint, S> factory, RateLimitedLog limitLog) {
    this.name = config.name();
    this.target = config.target();
    NameResolver r = config.resolver();
    if (r == null) {
      throw new IllegalArgumentException("client '" + name + "' for " + target + " has no name resolver");
    }
    this.resolver = r;
    LoadBalancer.Factory lb = config.loadBalancer();
    this.balancer = (lb != null ? lb : io.petrel.rpc.internal.lb.LoadBalancers.LEAST_PENDING_FACTORY).newLoadBalancer();
    this.factory = factory;
    this.limitLog = limitLog;
    this.filter = config.endpointFilter();
  }

  /**
   * The client's balancer when it is outlier ejection ({@link io.petrel.rpc.lb.OutlierEjection}), for its meters;
   * else null (a policy of the caller's own that wraps ejection is not seen through).
   */
  public io.petrel.rpc.internal.lb.@Nullable EjectingBalancer ejection() {
    return balancer instanceof io.petrel.rpc.internal.lb.EjectingBalancer e ? e : null;
  }

  /** How many errors the resolver has reported so far ({@link NameResolver.Listener#onError}). */
  public long resolverErrors() {
    return resolverErrors.sum();
  }

  /** Whether the balancer sends calls by their hash key ({@link LoadBalancer#readsHashKey()}). */
  public boolean balancerReadsHashKey() {
    return balancer.readsHashKey();
  }

  /** Starts the resolver; a static one answers at once, on this thread. */
  public void start() {
    resolver.start(this);
  }

  /**
   * The resolver's list: keeps the subchannels of endpoints still there, makes new ones, drains the rest. An
   * empty list drains them all: calls fail until endpoints are listed again.
   */
  @Override
  public void onEndpoints(List<Endpoint> fromResolver) {
    // Filtered before the lock: a slow filter holds up only this resolver's thread, not drained connections.
    List<Endpoint> endpoints = filtered(fromResolver);
    update(fromResolver, endpoints);
  }

  private synchronized void update(List<Endpoint> fromResolver, List<Endpoint> endpoints) {
    if (shutdown) {
      return;
    }
    resolverError = null;
    Set<Address> stillListed = new HashSet<>();
    if (filter != null) {
      for (Endpoint e : fromResolver) {
        stillListed.add(new Address(e));
      }
    }
    int filteredOut = fromResolver.size() - endpoints.size();
    listing = new Listing(endpoints.isEmpty(), filteredOut);
    List<S> old = subchannels;
    Set<Endpoint> before = new HashSet<>();
    // By address (host and port, as Endpoint.sameAddress): a list of thousands is matched in one pass, not one
    // walk of the old list per endpoint.
    java.util.Map<Address, S> oldByAddress = new java.util.HashMap<>();
    for (S s : old) {
      before.add(s.endpoint());
      oldByAddress.putIfAbsent(new Address(s.endpoint()), s);
    }
    List<S> next = new ArrayList<>();
    Set<S> kept = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    Set<Address> listed = new HashSet<>();
    List<Endpoint> unique = new ArrayList<>(endpoints.size());
    for (Endpoint e : endpoints) {
      Address a = new Address(e);
      if (!listed.add(a)) {
        continue; // the same address listed twice: one subchannel, the first entry's weight and attributes
      }
      unique.add(e);
      S found = oldByAddress.get(a);
      if (found != null) {
        found.updateEndpoint(e); // the weight may have changed
        kept.add(found);
      } else {
        found = factory.apply(e);
        found.adoptedBy(this);
      }
      next.add(found);
    }
    List<S> now = List.copyOf(next);
    subchannels = now;
    single = now.size() == 1 ? now.get(0) : null;
    balancer.update(now);
    for (S s : old) {
      if (!kept.contains(s)) {
        log.debug("endpoint {} of {} is gone; its connections close once their calls in flight have ended",
            s.endpoint(), target);
        draining.add(s);
        String why = stillListed.contains(new Address(s.endpoint())) ? s.endpoint().authority() + " of " + target
            + " is left out by the client's endpointFilter " + filter : s.endpoint().authority() + " was removed"
            + " from " + target + " by its resolver";
        s.drain(why).whenComplete((v, t) -> drained(s));
        withWaiters.remove(s); // its waiting calls have ended NOT_SENT (drain)
      }
    }
    if ((!old.isEmpty() || now.size() > 1 || filteredOut > 0) && !before.equals(new HashSet<>(unique))) {
      // Only a change: a resolver may tell the same list again (a refresh, a ZooKeeper reconnection). With a
      // filter, the first list too, so that a filter that keeps none or one is seen at once.
      String line = unique.isEmpty() ? (filteredOut == 0 ? "none (the resolver lists no endpoint)"
          : "none: the resolver lists " + filteredOut + " and the endpointFilter " + filter + " leaves out all")
          : describe(unique) + (filteredOut == 0 ? "" : " (" + filteredOut + " more listed, left out by the"
              + " endpointFilter " + filter + ")");
      log.info("client '{}' for {}: endpoints {}", name, target, line);
    } else if (old.isEmpty() && unique.isEmpty() && filteredOut > 0) {
      log.info("client '{}' for {}: endpoints none: the resolver lists {} and the endpointFilter {} leaves out all",
          name, target, filteredOut, filter);
    }
  }

  /** The endpoints the filter keeps (all without one); one it throws for is left out, with a WARN. */
  private List<Endpoint> filtered(List<Endpoint> listed) {
    java.util.function.Predicate<? super Endpoint> f = filter;
    if (f == null) {
      return listed;
    }
    List<Endpoint> kept = new ArrayList<>(listed.size());
    for (Endpoint e : listed) {
      boolean keep;
      try {
        keep = f.test(e);
      } catch (RuntimeException | LinkageError | AssertionError ex) { // a bug of the filter: not the resolver's
        limitLog.warn("endpoint filter failed: " + target, "client '" + name + "' for " + target + ": its"
            + " endpointFilter " + f + " threw for " + e + ", which is left out: " + ex);
        keep = false;
      }
      if (keep) {
        kept.add(e);
      }
    }
    return kept;
  }

  /**
   * At most {@link #LOGGED_ENDPOINTS} of them, each in at most {@link #LOGGED_ENDPOINT_CHARS} characters (an
   * endpoint's attributes can be kilobytes), then how many more: a list of thousands is not one line.
   */
  private static String describe(List<Endpoint> endpoints) {
    StringBuilder sb = new StringBuilder("[");
    int n = Math.min(endpoints.size(), LOGGED_ENDPOINTS);
    for (int i = 0; i < n; i++) {
      String one = endpoints.get(i).toString();
      sb.append(i == 0 ? "" : ", ").append(one.length() <= LOGGED_ENDPOINT_CHARS ? one
          : one.substring(0, LOGGED_ENDPOINT_CHARS) + "...");
    }
    if (endpoints.size() > n) {
      sb.append(", ... and ").append(endpoints.size() - n).append(" more (").append(endpoints.size())
          .append(" in all)");
    }
    return sb.append(']').toString();
  }

  /** Characters of one endpoint in that line. */
  static final int LOGGED_ENDPOINT_CHARS = 120;

  /** Endpoints named in full in the INFO line of a change. */
  static final int LOGGED_ENDPOINTS = 20;

  /** An endpoint's address: what {@link Endpoint#sameAddress} compares. */
  private record Address(String host, int port) {
    Address(Endpoint e) {
      this(e.host(), e.port());
    }
  }

  /** A subchannel's state changed (under its lock, so in order): the balancer hears it when there are several. */
  @Override
  public void stateChanged(ClientSubchannel s, ConnectivityState state, @Nullable Status cause) {
    if (single == null) {
      balancer.onStateChange(s, state, cause);
    }
  }

  /**
   * {@code s} became READY: calls waiting for a connect attempt to another endpoint may go to it. Looks only at the
   * endpoints where calls may wait ({@link #withWaiters}): with 3000 endpoints becoming READY one by one, walking
   * every one of them each time took 125-140 ms in all (under 1 ms now, no call waiting). Each is taken out of the
   * set before its calls are moved and put back if calls still wait there (those that may not move), so that one
   * whose first call starts to wait meanwhile is never left out. An endpoint adds itself before its first waiting
   * call checks whether another endpoint is available, under the lock it queues the call under (see
   * ConnectionSlot.send): added after queueing, a walk in between missed it and the call waited for the connect
   * attempt, up to connectTimeout (MovedCallsTest.aCallThatStartsToWaitAsAnotherEndpointBecomesReadyMovesThere).
   * The walk goes over a copy of the set, as the walk of the list did: the endpoints the moved calls land on add
   * themselves to the set meanwhile, and a walk that followed them moved the same calls on again and again, each
   * time to another endpoint not tried (with 300 dead endpoints and one live,
   * ClientChannelTest.withManyDeadEndpointsAndOneLiveNoCallFails then failed 4 runs in 9: calls used up their 64
   * re-sends).
   */
  @Override
  public void becameReady(ClientSubchannel s) {
    if (single != null || shutdown) {
      return; // one endpoint: nowhere else to go
    }
    if (withWaiters.isEmpty()) {
      return;
    }
    for (ClientSubchannel other : withWaiters.toArray(new ClientSubchannel[0])) {
      if (other != s && withWaiters.remove(other)) {
        other.anotherEndpointReady();
        if (other.hasWaiters()) {
          withWaiters.add(other);
        }
      }
    }
  }

  /** Calls may start to wait at {@code s} for a connect attempt: {@link #becameReady} looks there. */
  @Override
  public void waitersAdded(ClientSubchannel s) {
    withWaiters.add(s);
  }

  /** A connection was lost or an attempt failed: the endpoints may have changed. */
  @Override
  public void connectionLost() {
    if (!shutdown) {
      resolver.refresh();
    }
  }

  /** A call counted on {@code s} ended (only with several endpoints: a single one counts nothing). */
  @Override
  public void callEnded(ClientSubchannel s, Status outcome, long latencyNanos) {
    balancer.onAttemptEnded(s, outcome, latencyNanos);
  }

  private synchronized void drained(S s) {
    draining.remove(s);
  }

  @Override
  public void onError(Status error) {
    resolverErrors.increment();
    resolverError = error;
    limitLog.warn("resolver error: " + target, "client '" + name + "' cannot resolve " + target + ": " + error
        + (subchannels.isEmpty() ? "" : "; keeping the endpoints it had"));
  }

  /** How many more times a call moved on from two unreachable endpoints asks its balancer for a connected one. */
  private static final int READY_ASKS = 4;

  /** The current subchannels (an immutable snapshot). */
  public List<S> subchannels() {
    return subchannels;
  }

  /**
   * The subchannel for an attempt of a call, or null when there is none (see {@link #noPick}). With several
   * endpoints the attempt is counted on the one picked until it ends; {@code previous} (the endpoint of the
   * call's failed attempt, or null) is avoided when the balancer offers another, and never picked again for a
   * call whose previous attempt could not be sent there ({@link ClientCall#unsentCause()}).
   */
  public @Nullable S pick(ClientCall<?> call, @Nullable S previous) {
    S s = single;
    if (s == null) {
      s = pickAny(call);
      if (s != null && s == previous) {
        S other = pickAny(call); // once more: a balancer that insists (a hash key) is followed
        if (other != null) {
          s = other;
        }
        if (s == previous && call.unsentCause() != null && !call.heldToKey()) {
          // It could not be sent there, and a balancer that draws at random can offer the same endpoint twice
          // (least-pending's two choices, with most endpoints down): take another, a reachable one first. A call
          // with a hash key follows its balancer, which may hold it to that endpoint (then it fails with why).
          s = other(previous);
        }
      }
    }
    if (s != null && single == null && call.unsentEndpoints() >= 2 && !call.heldToKey()
        && s.state() != io.petrel.rpc.ConnectivityState.READY) {
      // Two endpoints could not be reached for it: the balancer is asked again (up to READY_ASKS times) for a
      // connected endpoint, rather than another the client has not tried yet (with many dead addresses listed and
      // one live, the untried ones are mostly dead). Only the balancer's own picks: a policy that excludes
      // endpoints (a version, an ejection) keeps them excluded. Before that the first pick stands, so that the
      // endpoints not tried yet get tried and calls moved away from one endpoint spread over the others.
      for (int i = 0; i < READY_ASKS; i++) {
        S again = pickAny(call);
        if (again != null && again != previous && again.state() == io.petrel.rpc.ConnectivityState.READY) {
          s = again;
          break;
        }
      }
    }
    if (s == null || (s == previous && call.unsentCause() != null)) {
      return null;
    }
    if (single == null) {
      call.countOn(s);
    }
    return routed(call, s);
  }

  /**
   * The subchannel for a hedge of a call whose other attempts are on {@code busy}, or null when there is none: the
   * balancer's pick, asked again when it names a busy one, then an endpoint not busy (an available one
   * first); a busy one only when every endpoint is (or the call's hash key holds it there). Counted and routed as
   * {@link #pick} does.
   */
  public @Nullable S pickAvoiding(ClientCall<?> call, List<? extends ClientSubchannel> busy) {
    S s = single;
    if (s == null) {
      s = pickAny(call);
      for (int i = 0; i < 2 && s != null && busy.contains(s); i++) {
        s = pickAny(call);
      }
      if (s != null && busy.contains(s) && !call.heldToKey()) {
        S free = notIn(busy);
        if (free != null) {
          s = free;
        }
      }
    }
    if (s == null) {
      return null;
    }
    if (single == null) {
      call.countOn(s);
    }
    return routed(call, s);
  }

  /**
   * An endpoint not in {@code busy}: one available and not refusing calls for a limit first, then one available,
   * then any; or null. See {@link #firstOutside}.
   */
  private @Nullable S notIn(List<? extends ClientSubchannel> busy) {
    return firstOutside(busy::contains);
  }

  /**
   * An endpoint other than {@code previous}: one that is available and not refusing calls for a limit, else one
   * available, else any other; or null. See {@link #firstOutside}.
   */
  private @Nullable S other(S previous) {
    return firstOutside(c -> c == previous);
  }

  /**
   * An endpoint {@code excluded} does not hold, drawn at random among the best there are (so that the calls re-sent
   * away from one endpoint spread evenly over the others, rather than all going to the first one listed): one
   * available and not refusing calls for a limit, else one available, else any.
   */
  private @Nullable S firstOutside(java.util.function.Predicate<Object> excluded) {
    List<S> now = subchannels;
    java.util.concurrent.ThreadLocalRandom r = java.util.concurrent.ThreadLocalRandom.current();
    S usable = null;
    S available = null;
    S fallback = null;
    int usables = 0;
    int availables = 0;
    int others = 0;
    for (S c : now) {
      if (excluded.test(c)) {
        continue;
      }
      // Each tier keeps one of its members, each with the same chance (reservoir sampling).
      if (c.isAvailable()) {
        if (!c.isRefusing()) {
          if (r.nextInt(++usables) == 0) {
            usable = c;
          }
        } else if (usables == 0 && r.nextInt(++availables) == 0) {
          available = c;
        }
      } else if (usables == 0 && availables == 0 && r.nextInt(++others) == 0) {
        fallback = c;
      }
    }
    return usable != null ? usable : available != null ? available : fallback;
  }

  /**
   * The status of a call {@link #pick} found no endpoint for: why its previous attempt could not be sent, or
   * that no endpoint is known.
   */
  public Status noPick(ClientCall<?> call, String notSent) {
    Status unsent = call.unsentCause();
    return unsent != null ? unsent : noEndpoint(notSent);
  }

  /** Tells the call's endpoint listener ({@code CallOptions.withEndpointListener}), if any, where it goes. */
  private S routed(ClientCall<?> call, S s) {
    Consumer<Endpoint> listener = call.options().endpointListener();
    if (listener != null) {
      try {
        listener.accept(s.endpoint());
      } catch (RuntimeException e) {
        limitLog.warn("endpoint listener threw", "an endpoint listener of " + call.method().fullName()
            + " threw; ignored", e);
      }
    }
    return s;
  }

  @SuppressWarnings("unchecked")
  private @Nullable S pickAny(ClientCall<?> call) {
    List<S> now = subchannels;
    if (now.isEmpty()) {
      return null;
    }
    Subchannel s = balancer.pick(call);
    if (s == null) {
      return now.size() == 1 ? now.get(0) : null; // changed from one to several while we looked
    }
    return (S) s;
  }

  /** The status of a call made while no endpoint is known. */
  public Status noEndpoint(String notSent) {
    Listing now = listing;
    int out = now.filteredOut();
    boolean listedNone = now.none();
    if (listedNone && resolverError == null && out > 0) {
      return Status.UNAVAILABLE.withDescription("no endpoint for " + target + ": its resolver lists " + out
          + " endpoint" + (out == 1 ? "" : "s") + " and the client's endpointFilter " + filter + " leaves out every"
          + " one (RpcClient.builder().endpointFilter)" + notSent);
    }
    if (listedNone && resolverError == null) {
      return Status.UNAVAILABLE.withDescription("no endpoint for " + target + ": its resolver lists no endpoint"
          + notSent);
    }
    Status e = resolverError;
    return Status.UNAVAILABLE.withDescription("no endpoint for " + target + " yet"
        + (e != null ? ": " + e.description() : "") + notSent);
  }

  /**
   * Stops the resolver and closes every subchannel, draining ones included; completes when all are closed.
   */
  public CompletionStage<Void> shutdown() {
    List<S> subs;
    synchronized (this) {
      shutdown = true;
      subs = new ArrayList<>(subchannels);
      subs.addAll(draining); // closed now too: the client is going away
    }
    resolver.shutdown();
    CompletableFuture<?>[] closing = new CompletableFuture<?>[subs.size()];
    for (int i = 0; i < closing.length; i++) {
      closing[i] = subs.get(i).close().toCompletableFuture();
    }
    return CompletableFuture.allOf(closing);
  }
}
