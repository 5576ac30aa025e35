package io.petrel.rpc.internal;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.spi.ClientConfig;
import io.petrel.rpc.spi.OwnedMeters;
import io.petrel.rpc.spi.ClientTransportContext;
import io.petrel.rpc.spi.WakeBatch;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The part of a client that is the same whatever the transport, shared by {@link io.petrel.rpc.RpcClient} and
 * its calls ({@link ClientCall}): the count of calls pending against {@code maxPendingCalls},
 * the shutdown and termination state, the callback executor, and the call meters ({@code rpc.client.calls},
 * sizes, {@code rpc.client.calls.pending}, hedges, retries, the retry budget's; with endpoints, theirs: states,
 * resolver errors, ejections; names in docs/observability.md), the retry budget. One per client.
 * Its transport sees it as a {@link ClientTransportContext}.
 */
public final class ClientRuntime implements ClientTransportContext {
  private final String name;
  private final String target;
  private final int maxPendingCalls;
  private final @Nullable Executor callbackExecutor;
  private final AtomicInteger pending = new AtomicInteger();
  private final AtomicBoolean terminating = new AtomicBoolean();
  private final CountDownLatch terminated = new CountDownLatch(1);
  private volatile boolean shutdown;
  private final @Nullable MeterRegistry registry;
  private final Tags tags;
  private final boolean histograms;
  private final Map<MethodDescriptor<?, ?>, CallMetrics> byMethod = new ConcurrentHashMap<>();
  /** Closes the transport's connections and calls back with a Runnable when all is released. */
  private @Nullable Consumer<Runnable> terminator;
  private volatile boolean balancerReadsHashKey = true;
  private volatile java.util.function.Supplier<? extends java.util.List<? extends ClientSubchannel>> subchannels =
      java.util.List::of;
  /** The meters bound to this client's objects, removed when it terminates ({@link #ended}); null: no registry. */
  private final @Nullable OwnedMeters owned;
  private final int maxRetries;
  private final RetryBudget retryBudget;
  private final LongAdder hedges = new LongAdder();
  /** Attempts made again, by {@link Retry} ordinal ({@code rpc.client.retries}): see {@link #sentAgain}. */
  private final LongAdder[] retries = {new LongAdder(), new LongAdder(), new LongAdder()};
  /** Attempts the retry budget stopped, by reason ({@code rpc.client.retries.throttled}). */
  private final LongAdder throttledRefused = new LongAdder();
  private final LongAdder throttledUnavailable = new LongAdder();
  private final LongAdder throttledHedges = new LongAdder();
  /** Hands an attempt of a call to the transport; set once by the client. */
  private @Nullable AttemptStarter attemptStarter;

  /** How the client hands one attempt of a call to its transport (pick, then a stream on a connection). */
  @FunctionalInterface
  public interface AttemptStarter {
    /**
     * Starts an attempt of {@code call} with its kept request: its first ({@code again} null), or one made again
     * for that reason, which the starter counts ({@link #sentAgain}) once it has an endpoint for it. Throws what
     * encoding the request throws (a marshaller's failure, a size limit, a status).
     */
    void start(ClientCall<?> call, @Nullable Retry again) throws Exception;
  }

  /**
   * Why an attempt of a call is made again, the tag {@code reason} of {@code rpc.client.retries}: the cases of
   * {@link ClientCall#onClose}, by how far the failed attempt got ({@link io.petrel.rpc.spi.AttemptProgress}).
   */
  public enum Retry {
    /** Its request could not be sent: no connection to the endpoint could be had (NOT_SENT). */
    NOT_SENT("not_sent"),
    /**
     * The server refused its request unread (a GOAWAY above the server's last request, a limit), or its connection
     * went away before it was written (REFUSED).
     */
    REFUSED("refused"),
    /** An idempotent method's attempt that may have run failed with UNAVAILABLE: the retry policy. */
    UNAVAILABLE("unavailable");

    private final String tag;

    Retry(String tag) {
      this.tag = tag;
    }

    /** The value of the tag {@code reason}. */
    public String tag() {
      return tag;
    }
  }

  public ClientRuntime(ClientConfig config) {
    this.name = config.name();
    this.target = config.target();
    this.maxPendingCalls = config.maxPendingCalls();
    this.callbackExecutor = config.callbackExecutor();
    this.registry = config.meterRegistry();
    this.histograms = config.percentileHistograms();
    this.maxRetries = config.maxRetries();
    this.retryBudget = new RetryBudget(config.retryBudgetTokens(), config.retryBudgetRatio());
    if (registry != null) {
      tags = Tags.of("client", name, "target", target);
      MeterRegistry r = registry;
      OwnedMeters o = new OwnedMeters(r);
      o.add("rpc.client.calls.pending", tags, () -> Gauge.builder("rpc.client.calls.pending", pending,
          AtomicInteger::get).description("Calls not yet ended").tags(tags).register(r));
      o.add("rpc.client.hedges", tags, () -> FunctionCounter.builder("rpc.client.hedges", hedges,
          LongAdder::sum).description("Attempts sent as hedges, beyond the first of hedged calls").tags(tags)
          .register(r));
      for (Retry why : Retry.values()) {
        counter(o, r, "rpc.client.retries", tags.and("reason", why.tag()), retries[why.ordinal()],
            "Attempts of calls made again (not hedges), by why the previous attempt failed");
      }
      String throttled = "Attempts not made again, or hedges not sent, because the retry budget was drawn down";
      counter(o, r, "rpc.client.retries.throttled", tags.and("reason", "refused"), throttledRefused, throttled);
      counter(o, r, "rpc.client.retries.throttled", tags.and("reason", "unavailable"), throttledUnavailable,
          throttled);
      counter(o, r, "rpc.client.retries.throttled", tags.and("reason", "hedge"), throttledHedges, throttled);
      o.add("rpc.client.retries.budget", tags, () -> Gauge.builder("rpc.client.retries.budget", retryBudget,
          b -> b.milliTokens() / 1000.0).description("Tokens left in the retry budget").baseUnit("tokens")
          .tags(tags).register(r));
      owned = o;
    } else {
      tags = Tags.empty();
      owned = null;
    }
  }

  /** Registers a function counter reading {@code count}, as one of this client's own meters. */
  private static void counter(OwnedMeters o, MeterRegistry r, String name, Tags t, LongAdder count,
      String description) {
    counter(o, r, name, t, count, LongAdder::sum, description);
  }

  /** Registers a function counter reading {@code f} of {@code obj}, as one of this client's own meters. */
  private static <T> void counter(OwnedMeters o, MeterRegistry r, String name, Tags t, T obj,
      java.util.function.ToDoubleFunction<T> f, String description) {
    o.add(name, t, () -> FunctionCounter.builder(name, obj, f).description(description).tags(t).register(r));
  }

  /**
   * Gauges {@code rpc.client.endpoints} (tags client, target, state): how many of the client's endpoints are in each
   * state now (idle, connecting, ready, backing_off), so that an operator sees endpoints that cannot be reached.
   * Removed when the client terminates, with its other gauges.
   */
  private void endpointGauges(java.util.function.Supplier<? extends java.util.List<? extends ClientSubchannel>> now) {
    MeterRegistry r = registry;
    OwnedMeters o = owned;
    if (r == null || o == null) {
      return;
    }
    for (io.petrel.rpc.ConnectivityState state : io.petrel.rpc.ConnectivityState.values()) {
      if (state == io.petrel.rpc.ConnectivityState.SHUTDOWN) {
        continue; // an endpoint that left: no longer the client's
      }
      Tags t = tags.and("state", state.name().toLowerCase(java.util.Locale.ROOT));
      o.add("rpc.client.endpoints", t, () -> Gauge.builder("rpc.client.endpoints", now, n -> {
        int count = 0;
        for (ClientSubchannel s : n.get()) {
          count += s.state() == state ? 1 : 0;
        }
        return count;
      }).description("The client's endpoints in this state").tags(t).strongReference(true).register(r));
    }
  }

  /**
   * The meters of the client's endpoints beyond their states: {@code rpc.client.resolver.errors}, and with outlier
   * ejection {@code rpc.client.endpoints.ejected} and {@code rpc.client.endpoints.ejections}. Removed when the client
   * terminates, with its other meters.
   */
  private void endpointMeters(ClientEndpoints<?> e) {
    MeterRegistry r = registry;
    OwnedMeters o = owned;
    if (r == null || o == null) {
      return;
    }
    counter(o, r, "rpc.client.resolver.errors", tags, e, ClientEndpoints::resolverErrors,
        "Errors the name resolver reported (the client kept the endpoints it had)");
    io.petrel.rpc.internal.lb.EjectingBalancer ejection = e.ejection();
    if (ejection != null) {
      o.add("rpc.client.endpoints.ejected", tags, () -> Gauge.builder("rpc.client.endpoints.ejected", ejection,
          io.petrel.rpc.internal.lb.EjectingBalancer::ejectedCount).description("Endpoints ejected by outlier"
          + " ejection now").tags(tags).register(r));
      counter(o, r, "rpc.client.endpoints.ejections", tags, ejection,
          io.petrel.rpc.internal.lb.EjectingBalancer::ejections, "Endpoints ejected by outlier ejection so far");
    }
  }

  /** Set once by a client of endpoints: whether its balancer sends calls by their hash key. */
  public void balancerReadsHashKey(boolean reads) {
    this.balancerReadsHashKey = reads;
  }

  /** Whether a call's hash key holds it to its endpoint: see {@link ClientCall#heldToKey()}. */
  public boolean balancerReadsHashKey() {
    return balancerReadsHashKey;
  }

  /**
   * Set once by a client of endpoints: its endpoints, for {@link #anotherEndpointMayTakeIt} and the meters
   * registered here ({@code rpc.client.endpoints}: {@link #endpointGauges}; the resolver's and outlier ejection's:
   * {@link #endpointMeters}).
   */
  public void endpoints(ClientEndpoints<?> endpoints) {
    java.util.function.Supplier<? extends java.util.List<? extends ClientSubchannel>> now = endpoints::subchannels;
    this.subchannels = now;
    endpointGauges(now);
    endpointMeters(endpoints);
  }

  /**
   * Whether an endpoint outside {@code tried} may still take a call that could not be sent to those: one connected,
   * or one idle or connecting that no connect attempt has failed for since it was last connected (one not tried
   * yet, say). Endpoints that failed (backing off, or idle or connecting again after a backoff) do not count: in an
   * outage, where every endpoint has failed, a call is not walked through them. A call whose request was never
   * sent keeps moving on while there is one (see {@link ClientCall#MAX_UNSENT_RESENDS}), so that a list with many
   * dead addresses and one live fails no call.
   */
  public boolean anotherEndpointMayTakeIt(java.util.List<ClientSubchannel> tried) {
    for (ClientSubchannel s : subchannels.get()) {
      io.petrel.rpc.ConnectivityState state = s.state();
      if ((state == io.petrel.rpc.ConnectivityState.READY || (!s.isFailing()
          && (state == io.petrel.rpc.ConnectivityState.IDLE || state == io.petrel.rpc.ConnectivityState.CONNECTING)))
          && !tried.contains(s)) {
        return true;
      }
    }
    return false;
  }

  /** Whether the client has more than one endpoint now (a refusal by a limit can go to another). */
  boolean hasSeveralEndpoints() {
    return subchannels.get().size() > 1;
  }

  /** Set once by the client: how to close its transport when the client terminates. */
  public void terminator(Consumer<Runnable> terminator) {
    this.terminator = terminator;
  }

  /** Set once by the client: how an attempt of a call reaches the transport. */
  public void attemptStarter(AttemptStarter starter) {
    this.attemptStarter = starter;
  }

  /**
   * Starts an attempt of {@code call} on the transport: the first ({@code again} null), or another after a failed
   * one, for that reason.
   */
  public void startAttempt(ClientCall<?> call, @Nullable Retry again) throws Exception {
    AttemptStarter s = attemptStarter;
    if (s == null) {
      throw new IllegalStateException("client '" + name + "' has no transport yet");
    }
    s.start(call, again);
  }

  /** One per connection of the transport: see {@link WakeChain}. */
  @Override
  public WakeBatch newWakeBatch() {
    return new WakeChain();
  }

  /** More attempts an idempotent call may make after its first failed with UNAVAILABLE. */
  public int maxRetries() {
    return maxRetries;
  }

  public void attemptFailed() {
    retryBudget.onFailure();
  }

  public void callSucceeded() {
    retryBudget.onSuccess();
  }

  public boolean mayRetry() {
    return retryBudget.mayRetry();
  }

  /**
   * A hedge is about to be sent on its timer: takes a token of the retry budget if it allows a retry now; false
   * (no hedge) otherwise. Counted in {@code rpc.client.hedges} when it is sent ({@link #hedgeSent}).
   */
  public boolean mayHedge() {
    return retryBudget.tryTake();
  }

  /** A hedge {@link #mayHedge} allowed was not sent after all: its token goes back to the retry budget. */
  public void hedgeNotSent() {
    retryBudget.giveBack();
  }

  /** A hedge (an attempt beyond a hedged call's first) was sent. */
  public void hedgeSent() {
    hedges.increment();
  }

  /**
   * An attempt is made again, for {@code why}, and has an endpoint to go to ({@code rpc.client.retries}): one for
   * which no endpoint is left (the call fails with why its attempt could not be sent) is not counted.
   */
  public void sentAgain(Retry why) {
    retries[why.ordinal()].increment();
  }

  /** Attempts made again for {@code why} so far ({@code rpc.client.retries}; tests). */
  public long retries(Retry why) {
    return retries[why.ordinal()].sum();
  }

  /**
   * The retry budget stopped an attempt that the rules would have made again ({@code rpc.client.retries.throttled}):
   * one refused by a server's limit ({@code refusal}: reason {@code refused}), or a retry after UNAVAILABLE
   * (reason {@code unavailable}).
   */
  public void retryThrottled(boolean refusal) {
    (refusal ? throttledRefused : throttledUnavailable).increment();
  }

  /** The retry budget stopped a hedge ({@code rpc.client.retries.throttled}, reason {@code hedge}). */
  public void hedgeThrottled() {
    throttledHedges.increment();
  }

  /** Hedges sent by this client so far ({@code rpc.client.hedges}; tests). */
  public long hedges() {
    return hedges.sum();
  }

  /** The client's retry budget, shared by all its calls. */
  public RetryBudget retryBudget() {
    return retryBudget;
  }

  /** The client is closing its transport (shut down now, or shut down with no call left): no new attempt. */
  public boolean isTerminating() {
    return terminating.get();
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public String target() {
    return target;
  }

  public int maxPendingCalls() {
    return maxPendingCalls;
  }

  /** Where futures complete when a call gives no executor of its own; null for the thread that ends the call. */
  public @Nullable Executor callbackExecutor() {
    return callbackExecutor;
  }

  /** The client-side meters of {@code method}; {@link CallMetrics#NOOP} without a registry. */
  public CallMetrics metricsFor(MethodDescriptor<?, ?> method) {
    MeterRegistry r = registry;
    if (r == null) {
      return CallMetrics.NOOP;
    }
    CallMetrics m = byMethod.get(method);
    if (m == null) {
      m = byMethod.computeIfAbsent(method, k -> new CallMetrics(r, "client", tags, k, histograms));
    }
    return m;
  }

  /** A call starts: counted until it ends. Returns the number pending, this one included. */
  public int callStarted() {
    return pending.incrementAndGet();
  }

  /** A call ended (exactly once per started call). */
  public void callEnded() {
    if (pending.decrementAndGet() == 0 && shutdown) {
      terminate();
    }
  }

  @Override
  public int pendingCalls() {
    return pending.get();
  }

  @Override
  public boolean isShutdown() {
    return shutdown;
  }

  /** No new calls; the transport is closed once the pending calls have ended. */
  public void shutdown() {
    shutdown = true;
    if (pending.get() == 0) {
      terminate();
    }
  }

  /** No new calls, and the transport is closed now (its calls in flight fail with UNAVAILABLE). */
  public void shutdownNow() {
    shutdown = true;
    terminate();
  }

  private void terminate() {
    if (!terminating.compareAndSet(false, true)) {
      return;
    }
    Consumer<Runnable> t = terminator;
    if (t == null) {
      ended();
      return;
    }
    t.accept(this::ended);
  }

  /**
   * Terminated: the gauges bound to this client's objects are removed, so that a client made again under the same
   * name and target in the same registry binds its own (Micrometer would hand back these, reading a client that
   * is gone); counters and timers stay.
   */
  private void ended() {
    OwnedMeters o = owned;
    try {
      if (o != null) {
        o.close();
      }
    } finally {
      terminated.countDown();
    }
  }

  public boolean isTerminated() {
    return terminated.getCount() == 0;
  }

  public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    return terminated.await(timeout, unit);
  }
}
