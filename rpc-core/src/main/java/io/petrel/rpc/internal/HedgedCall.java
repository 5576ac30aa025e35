package io.petrel.rpc.internal;

import io.petrel.rpc.CallOptions;
import io.petrel.rpc.Deadline;
import io.petrel.rpc.HedgingPolicy;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.Status;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.LoggerFactory;

/**
 * A call of an idempotent method under a {@link HedgingPolicy}, and the future its caller holds (gRPC's hedging).
 * Each attempt is a {@link ClientCall} of its own, with no executor, no meters and no retries after it may have
 * run (it still sends again a request that no handler saw, as any call does); this class only decides when to
 * start one and which ends the call, so that a call that is not hedged never passes through here.
 *
 * <p>The first attempt goes the usual way. While the call has not ended, another starts every
 * {@code policy.delay()} (each taking a token of the retry budget, and only while the budget allows a retry), to an
 * endpoint that none of the attempts in flight is on when there is one, up to {@code policy.maxAttempts()} in all,
 * never once the call's deadline has passed. The first attempt that ends with a response, or with a status that is
 * not one of the policy's non-fatal codes (UNAVAILABLE by default), ends the call; the others are cancelled (their
 * servers are told; their endpoints' balancer hears CANCELLED). An attempt that fails with a non-fatal code does
 * not end the call: another starts at once in its
 * place if the policy and the budget allow, and the call fails with that status only when no attempt is left in
 * flight and none may start.
 *
 * <p>Each attempt is counted among the client's pending calls while it runs; the call's meters
 * ({@code rpc.client.calls}) are recorded once, for the call. The future completes on the call's executor (else on
 * the thread that ended it); the response metadata listener hears the winning attempt's metadata only.
 */
public final class HedgedCall<Resp> extends CompletableFuture<Resp> {
  /** How the client sends a hedge: a pick that avoids {@code busy} where it can, then a stream there. */
  @FunctionalInterface
  interface Starter {
    void start(ClientCall<?> attempt, List<ClientSubchannel> busy) throws Exception;
  }

  private final ClientRuntime runtime;
  private final MethodDescriptor<?, Resp> method;
  private final CallOptions options;
  private final @Nullable Deadline deadline;
  private final @Nullable Consumer<Metadata> responseMetadata;
  private final @Nullable Executor executor;
  private final HedgingPolicy policy;
  private final ScheduledExecutorService scheduler;
  private final Starter starter;
  private final CallMetrics metrics;
  private final long startNanos;
  private @Nullable Object request;
  // Guarded by attempts.
  /** The attempts started, in order; {@link #started} of them are set. */
  private final ClientCall<Resp>[] attempts;
  /** Each attempt's response metadata, kept for the listener until one wins. */
  private final @Nullable Metadata[] headers;
  private int started;
  private int ended;
  /** Threads deciding whether to start an attempt ({@link #sendHedge}). */
  private int starting;
  private boolean done;
  private @Nullable ScheduledFuture<?> timer;
  private @Nullable Status lastFailure;
  /** The attempt that failed with {@link #lastFailure}. */
  private @Nullable ClientCall<Resp> lastFailed;

  @SuppressWarnings("unchecked")
  HedgedCall(ClientRuntime runtime, MethodDescriptor<?, Resp> method, CallOptions options,
      @Nullable Deadline deadline, @Nullable Consumer<Metadata> responseMetadata, @Nullable Executor executor,
      HedgingPolicy policy, ScheduledExecutorService scheduler, Starter starter) {
    this.runtime = runtime;
    this.method = method;
    this.options = options;
    this.deadline = deadline;
    this.responseMetadata = responseMetadata;
    this.executor = executor;
    this.policy = policy;
    this.scheduler = scheduler;
    this.starter = starter;
    this.metrics = runtime.metricsFor(method);
    this.attempts = (ClientCall<Resp>[]) new ClientCall<?>[policy.maxAttempts()];
    this.headers = new Metadata[policy.maxAttempts()];
    this.startNanos = System.nanoTime();
  }

  /** When the call must end, or null for none. */
  public @Nullable Deadline deadline() {
    return deadline;
  }

  /** The endpoints the attempts started so far were given to, in order (null: not picked yet); for messages. */
  java.util.List<@Nullable ClientSubchannel> attemptEndpoints() {
    synchronized (attempts) {
      java.util.List<@Nullable ClientSubchannel> picked = new java.util.ArrayList<>(started);
      for (int i = 0; i < started; i++) {
        ClientCall<Resp> a = attempts[i];
        picked.add(a == null ? null : a.picked());
      }
      return picked;
    }
  }

  /** Attempts started so far, the first included (tests, messages). */
  public int attempts() {
    synchronized (attempts) {
      return started;
    }
  }

  /**
   * The core ends the call with {@code status}: no more hedges, every attempt cancelled, each uncounting itself
   * (false if it had ended).
   */
  boolean fail(Status status) {
    if (!claim(null)) {
      return false;
    }
    end(null, null, status);
    return true;
  }

  /**
   * The client refused the call before any attempt (shut down, too many pending, deadline passed): it was counted
   * as pending, and is uncounted here.
   */
  void refused(Status status) {
    if (claim(null)) {
      runtime.callEnded();
      end(null, null, status);
    }
  }

  /** Starts the first attempt (counted as pending by the client already) and the timer of the next. */
  void start(@Nullable Object request) {
    this.request = request;
    ClientCall<Resp> first;
    synchronized (attempts) {
      first = newAttempt();
    }
    first.start(request);
    scheduleHedge();
  }

  // Holding the lock: a new attempt, listened to.
  private ClientCall<Resp> newAttempt() {
    int i = started++;
    Consumer<Metadata> md = responseMetadata == null ? null : m -> keepHeaders(i, m);
    ClientCall<Resp> c = new Attempt<>(runtime, method, deadline, md);
    c.options(options);
    attempts[i] = c;
    c.whenComplete((v, t) -> attemptEnded(c, i, v, t));
    return c;
  }

  private void keepHeaders(int attempt, Metadata md) {
    synchronized (attempts) {
      headers[attempt] = md;
    }
  }

  /** Plans the next hedge after the delay, unless the call ended, has all its attempts, or the deadline is first. */
  private void scheduleHedge() {
    long delay = policy.delayNanos();
    synchronized (attempts) {
      if (done || started >= attempts.length || timer != null) {
        return;
      }
      Deadline d = deadline;
      if (d != null && d.remainingNanos() <= delay) {
        return; // it would start at or after the deadline
      }
      try {
        timer = scheduler.schedule(this::hedgeDue, delay, TimeUnit.NANOSECONDS);
      } catch (RejectedExecutionException e) {
        // The transport's threads are stopping (the client is shutting down): no hedge.
      }
    }
  }

  private void hedgeDue() {
    synchronized (attempts) {
      timer = null;
    }
    try {
      sendHedge(true);
    } catch (RuntimeException e) {
      LoggerFactory.getLogger(HedgedCall.class).warn("hedge of {} failed to start", method.fullName(), e);
    }
    scheduleHedge();
  }

  /**
   * Starts another attempt if the call may have one: not ended, below maxAttempts, before its deadline, the client
   * not shut down, within maxPendingCalls, and the retry budget allowing it ({@code onTimer}: taking a token, given
   * back if the hedge is then not sent; after a failed attempt, which took one: only checking). Returns whether it
   * started one; if not, and no attempt is left in flight, the call fails ({@link #failIfNoneLeft}).
   */
  private boolean sendHedge(boolean onTimer) {
    boolean full;
    synchronized (attempts) {
      full = done || started + starting >= attempts.length;
      if (!full) {
        starting++; // while this thread decides, nobody fails the call for want of attempts
      }
    }
    if (full) {
      failIfNoneLeft(); // all the attempts it may have are started (or ended): fails if none is left
      return false;
    }
    ClientCall<Resp> c = null;
    List<ClientSubchannel> busy = new ArrayList<>(attempts.length);
    boolean counted = false;
    boolean tokenTaken = false;
    try {
      Deadline d = deadline;
      if (runtime.isShutdown() || (d != null && d.isExpired())) {
        return false;
      }
      if (onTimer) {
        if (!runtime.mayHedge()) {
          runtime.hedgeThrottled();
          return false;
        }
        tokenTaken = true;
      } else if (!runtime.mayRetry()) {
        runtime.hedgeThrottled();
        return false;
      }
      counted = true;
      if (runtime.callStarted() > runtime.maxPendingCalls()) {
        return false;
      }
      synchronized (attempts) {
        if (!done) {
          for (int i = 0; i < started; i++) {
            ClientCall<Resp> a = attempts[i];
            ClientSubchannel s = a.picked();
            if (s != null && !busy.contains(s)) {
              // In flight, or failed: a replacement for an attempt that failed avoids its endpoint too, even when
              // the balancer prefers it (the others' connections still waiting for their first frame, say).
              busy.add(s);
            }
          }
          c = newAttempt();
        }
      }
    } finally {
      synchronized (attempts) {
        starting--;
      }
      if (c == null) {
        if (counted) {
          runtime.callEnded(); // over maxPendingCalls, or the call ended meanwhile
        }
        if (tokenTaken) {
          runtime.hedgeNotSent(); // not sent: the budget gets its token back
        }
        failIfNoneLeft();
      }
    }
    if (c == null) {
      return false;
    }
    runtime.hedgeSent();
    ClientCall<Resp> attempt = c;
    attempt.start(request, (a, first) -> starter.start(a, busy));
    return true;
  }

  /** An attempt ended: see the class comment for who wins. */
  private void attemptEnded(ClientCall<Resp> attempt, int i, @Nullable Resp value, @Nullable Throwable error) {
    Status failed = null;
    synchronized (attempts) {
      ended++;
      if (done) {
        return;
      }
      if (error != null) {
        failed = error instanceof CancellationException ? Status.CANCELLED.withDescription("attempt cancelled")
            : Status.fromThrowable(error);
        if (policy.isNonFatal(failed.code())) {
          lastFailure = failed;
          lastFailed = attempt;
        }
      }
    }
    if (failed == null || !policy.isNonFatal(failed.code())) {
      if (claim(attempt)) {
        end(attempt, value, failed);
      }
      return;
    }
    sendHedge(false); // another attempt in place of the failed one, if allowed; else the call may fail there
  }

  /**
   * Fails the call with the last non-fatal failure if every attempt started has ended and none is being started: no more
   * may start (each path that could start one has just been refused).
   */
  private void failIfNoneLeft() {
    Status last = null;
    ClientCall<Resp> from = null;
    int n = 0;
    synchronized (attempts) {
      if (!done && ended == started && starting == 0) {
        last = lastFailure;
        from = lastFailed;
        n = started;
      }
    }
    if (last != null && claim(from)) {
      end(from, null, n > 1 ? last.augmentDescription("the last of " + n + " hedged attempts") : last);
    }
  }

  /**
   * Ends the call here (false if it had ended): no more hedges, and every attempt but {@code winner} cancelled,
   * which tells its server and its endpoint's balancer.
   */
  private boolean claim(@Nullable ClientCall<Resp> winner) {
    ScheduledFuture<?> t;
    int n;
    synchronized (attempts) {
      if (done) {
        return false;
      }
      done = true;
      t = timer;
      timer = null;
      n = started;
    }
    if (t != null) {
      t.cancel(false);
    }
    for (int i = 0; i < n; i++) {
      ClientCall<Resp> c = attempts[i];
      if (c != winner) {
        c.cancel(false);
      }
    }
    return true;
  }

  /** Records the call and completes its future, with {@code value} or {@code failure}, on the call's executor. */
  private void end(@Nullable ClientCall<Resp> from, @Nullable Resp value, @Nullable Status failure) {
    Status.Code code = failure == null ? Status.Code.OK : failure.code();
    metrics.record(code, System.nanoTime() - startNanos, from == null ? -1 : from.requestSize(),
        from == null ? -1 : from.responseSize());
    Metadata md = null;
    if (from != null) {
      synchronized (attempts) {
        for (int i = 0; i < started; i++) {
          if (attempts[i] == from) {
            md = headers[i];
          }
        }
      }
    }
    Consumer<Metadata> listener = responseMetadata;
    Metadata heard = md;
    Runnable task = () -> {
      if (listener != null && heard != null) {
        try {
          listener.accept(heard);
        } catch (RuntimeException e) {
          LoggerFactory.getLogger(HedgedCall.class).warn("response metadata listener of {} threw",
              method.fullName(), e);
        }
      }
      if (failure == null) {
        super.complete(value);
      } else {
        super.completeExceptionally(failure.asException());
      }
    };
    Executor e = executor;
    if (e == null) {
      task.run();
      return;
    }
    try {
      e.execute(task);
    } catch (RejectedExecutionException rejected) {
      task.run(); // complete here rather than never
    }
  }

  // ---- the caller's side: each ends the call and cancels its attempts ----

  @Override
  public boolean cancel(boolean mayInterruptIfRunning) {
    if (!claim(null)) {
      return false;
    }
    metrics.record(Status.Code.CANCELLED, System.nanoTime() - startNanos, -1, -1);
    return super.cancel(mayInterruptIfRunning);
  }

  @Override
  public boolean complete(Resp value) {
    if (!claim(null)) {
      return false;
    }
    metrics.record(Status.Code.OK, System.nanoTime() - startNanos, -1, -1);
    return super.complete(value);
  }

  @Override
  public boolean completeExceptionally(Throwable ex) {
    if (!claim(null)) {
      return false;
    }
    metrics.record(Status.fromThrowable(ex).code(), System.nanoTime() - startNanos, -1, -1);
    return super.completeExceptionally(ex);
  }

  @Override
  public <U> CompletableFuture<U> newIncompleteFuture() {
    return new CompletableFuture<>();
  }

  /**
   * One attempt: a call of its own with no executor (it completes on the thread that ends it, and this call then
   * completes on its own executor), no meters, and no retry once it may have run.
   */
  private static final class Attempt<Resp> extends ClientCall<Resp> {
    Attempt(ClientRuntime runtime, MethodDescriptor<?, Resp> method, @Nullable Deadline deadline,
        @Nullable Consumer<Metadata> responseMetadata) {
      super(runtime, method, deadline, responseMetadata, null, CallMetrics.NOOP);
    }

    @Override
    int maxRetries() {
      return 0;
    }

    @Override
    boolean isHedgeAttempt() {
      return true;
    }
  }

  @Override
  public String toString() {
    synchronized (attempts) {
      return "HedgedCall{" + method.fullName() + ", " + policy + ", started=" + started + ", ended=" + ended
          + ", done=" + done + "}";
    }
  }
}
