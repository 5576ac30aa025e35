package io.petrel.rpc.internal;

import io.petrel.rpc.spi.RateLimitedLog;
import io.micrometer.core.instrument.Tags;
import io.petrel.rpc.InProcessAddress;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServerLifecycleListener;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.spi.ServerConfig;
import io.petrel.rpc.spi.ServerDispatcher;
import io.petrel.rpc.spi.ServerTransport;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server, the same for every transport: the {@link ServerDispatcher} (methods, executor admission,
 * interceptors, metrics), the business executor, and the lifecycle (start, graceful drain, forced stop,
 * termination). The transport listens and frames.
 */
public final class ServerImpl extends RpcServer {
  private static final Logger log = LoggerFactory.getLogger(RpcServer.class);

  private enum State { NEW, STARTED, DRAINING, TERMINATED }

  private final ServerConfig config;
  private final ServerTransport transport;
  private final @Nullable ServerMetrics metrics;
  private final RateLimitedLog limitLog;
  /** A fatal error has been reported (logged once; the stop is under way). */
  private final java.util.concurrent.atomic.AtomicBoolean fatalSeen = new java.util.concurrent.atomic.AtomicBoolean();
  private final CountDownLatch terminated = new CountDownLatch(1);
  private final AtomicBoolean closing = new AtomicBoolean();
  /** The listeners have been told that the server drains (once, by shutdown or shutdownNow). */
  private final AtomicBoolean drainingTold = new AtomicBoolean();
  /** Graceful shutdown: the drain delay is over, GOAWAY sent; calls ending may now finish the shutdown. */
  private volatile boolean goingAway;
  /** When a graceful stop's grace period ends (nanoTime), set as it begins (goAway). */
  private volatile long graceEndsAt;
  /** shutdownNow was called (under this): a drain delay still running ends without GOAWAY. */
  private boolean forced;
  /** The listeners have been told that the server serves. */
  private volatile boolean servingTold;
  private volatile State state = State.NEW;
  private @Nullable BusinessPool ownPool;
  private @Nullable CoreDispatcher dispatcher;

  public ServerImpl(ServerConfig config, ServerTransport transport) {
    this.config = config;
    this.transport = transport;
    this.limitLog = new RateLimitedLog(LoggerFactory.getLogger(RpcServer.class));
    this.metrics = config.meterRegistry() == null ? null
        : new ServerMetrics(config.meterRegistry(), Tags.of("server", config.name()), config.percentileHistograms());
  }

  /** The transport (for the transport's own tests). */
  public ServerTransport transport() {
    return transport;
  }

  @Override
  public synchronized RpcServer start() throws IOException {
    if (state != State.NEW) {
      throw new IllegalStateException("server already started");
    }
    Executor executor;
    String executorDesc;
    if (config.direct()) {
      executor = null;
      executorDesc = "direct (handlers run on event loops)";
    } else if (config.executor() != null) {
      executor = config.executor();
      executorDesc = executor instanceof VirtualThreadExecutor v ? v.describe()
          : "user executor " + executor.getClass().getName();
    } else {
      ownPool = new BusinessPool(config.name(), config.businessThreads(), config.businessQueueSize());
      executor = ownPool;
      executorDesc = "business pool " + config.businessThreads() + " threads, queue " + config.businessQueueSize();
    }
    BusinessPool pool = ownPool;
    Executor chosen = executor;
    CoreDispatcher d = new CoreDispatcher(config, metrics, limitLog, executor,
        e -> pool != null ? pool.fullMessage() : chosen instanceof VirtualThreadExecutor v ? v.fullMessage()
            : "the server's executor rejected the call (" + e.getMessage() + "); give it more capacity",
        this::callEnded);
    dispatcher = d;
    d.onFatal(this::fatal);
    if (ownPool != null) {
      ownPool.onError((where, t) -> {
        if (ServerDispatcher.isFatal(t)) {
          fatal(where, t);
        } else {
          log.error("Petrel server '{}': {} ended with {}; the pool starts another thread and the server goes on",
              config.name(), where, t.toString(), t);
        }
      });
    }
    try {
      transport.start(d);
    } catch (IOException | RuntimeException | Error e) {
      if (ownPool != null) {
        ownPool.shutdownNow();
      }
      transport.release();
      state = State.TERMINATED;
      terminated.countDown();
      throw e;
    }
    if (metrics != null) {
      if (executor != null) {
        metrics.services(config.services().stream().map(ServiceDefinition::name).toList()); // rejected, at 0
      }
      metrics.gauge("rpc.server.calls.active", "Calls running or queued", transport, ServerTransport::inFlightCalls);
      if (ownPool != null) {
        metrics.executor(ownPool, config.name() + "-business");
      } else if (executor instanceof VirtualThreadExecutor v) {
        metrics.virtualThreads(v);
      }
    }
    state = State.STARTED;
    log.info("Petrel server '{}' listening on {} ({}, {}, maxFrameSize {}, services {})", config.name(),
        transport.localAddress(), transport.describe(), executorDesc, config.maxFrameSize(), serviceNames());
    servingTold = true;
    for (ServerLifecycleListener l : config.lifecycleListeners()) {
      try {
        l.onServing(this);
      } catch (RuntimeException e) {
        log.warn("lifecycle listener {} of server '{}' failed in onServing", l, config.name(), e);
      }
    }
    return this;
  }

  /** Tells the listeners, once, that the server is about to drain (outside this object's lock). */
  private void tellDraining() {
    if (!servingTold || !drainingTold.compareAndSet(false, true)) {
      return;
    }
    for (ServerLifecycleListener l : config.lifecycleListeners()) {
      try {
        l.onDraining(this);
      } catch (RuntimeException e) {
        log.warn("lifecycle listener {} of server '{}' failed in onDraining", l, config.name(), e);
      }
    }
  }

  private String serviceNames() {
    StringBuilder sb = new StringBuilder("[");
    config.services().forEach(s -> sb.append(sb.length() == 1 ? "" : ", ").append(s.name()));
    return sb.append(']').toString();
  }

  @Override
  public void reloadTls() throws IOException {
    if (config.tls() == null) {
      throw new IllegalStateException("server '" + config.name() + "' has no TLS to reload; configure it with"
          + " RpcServer.builder().tls(...)");
    }
    if (state == State.NEW) {
      throw new IllegalStateException("server '" + config.name() + "' is not started");
    }
    transport.reloadTls();
  }

  @Override
  public InetSocketAddress localAddress() {
    SocketAddress a = address();
    if (a instanceof InetSocketAddress inet) {
      return inet;
    }
    if (a instanceof InProcessAddress inProcess) {
      throw new IllegalStateException("server '" + config.name() + "' is in-process (" + a + "): it has no network"
          + " address and no port; clients call it with RpcClient.builder().inProcess(\"" + inProcess.name()
          + "\"), and address() returns its InProcessAddress");
    }
    throw new IllegalStateException("server '" + config.name() + "' does not listen on a network address: " + a);
  }

  @Override
  public SocketAddress address() {
    if (state == State.NEW) {
      throw new IllegalStateException("server not started");
    }
    return transport.localAddress();
  }

  /** Called after every call ends while shutting down. */
  private void callEnded() {
    if (state == State.DRAINING && goingAway && transport.inFlightCalls() == 0) {
      finishShutdown(false, "the server shut down");
    }
  }

  @Override
  public List<ServiceDefinition> services() {
    return config.services();
  }

  @Override
  public Duration shutdownGracePeriod() {
    return Duration.ofNanos(config.shutdownGracePeriodNanos());
  }

  @Override
  public Duration drainDelay() {
    return Duration.ofNanos(config.drainDelayNanos());
  }

  @Override
  public long inFlightCalls() {
    return state == State.NEW ? 0 : transport.inFlightCalls();
  }

  /**
   * Shut down before it started: what building made (the transport's meters) is released, and the server is
   * terminated at once. Under the lock.
   */
  private RpcServer neverStarted() {
    state = State.TERMINATED;
    transport.release();
    terminated.countDown();
    return this;
  }

  @Override
  public RpcServer shutdown() {
    synchronized (this) {
      if (state == State.NEW) {
        return neverStarted();
      }
      if (state != State.STARTED) {
        return this;
      }
      state = State.DRAINING;
    }
    tellDraining();
    long delay = config.drainDelayNanos();
    if (delay > 0) {
      log.info("Petrel server '{}' shutting down: serving {} ms more (drainDelay) before it tells clients to go"
          + " away", config.name(), TimeUnit.NANOSECONDS.toMillis(delay));
      CompletableFuture.delayedExecutor(delay, TimeUnit.NANOSECONDS).execute(this::goAway);
    } else {
      goAway();
    }
    return this;
  }

  /** Graceful shutdown after the drain delay: refuse new calls, GOAWAY, and let calls in flight finish. */
  private void goAway() {
    synchronized (this) {
      if (forced) {
        return; // shutdownNow came during the drain delay
      }
      Objects.requireNonNull(dispatcher, "dispatcher, set by start()").shutdown();
      graceEndsAt = System.nanoTime() + config.shutdownGracePeriodNanos();
      goingAway = true;
    }
    long inFlight = transport.inFlightCalls();
    log.info("Petrel server '{}' shutting down: no new connections, {} calls in flight, grace period {} ms",
        config.name(), inFlight, TimeUnit.NANOSECONDS.toMillis(config.shutdownGracePeriodNanos()));
    transport.stopAccepting(true);
    if (transport.inFlightCalls() == 0) {
      finishShutdown(false, "the server shut down");
    } else {
      CompletableFuture.delayedExecutor(config.shutdownGracePeriodNanos(), TimeUnit.NANOSECONDS).execute(() -> {
        long left = transport.inFlightCalls();
        if (left > 0 && !closing.get()) {
          log.warn("Petrel server '{}': its shutdown grace period of {} ms is over with {} calls in flight; closing"
              + " their connections (they fail with UNAVAILABLE). Handlers that need longer: raise"
              + " shutdownGracePeriod on the server's builder", config.name(),
              TimeUnit.NANOSECONDS.toMillis(config.shutdownGracePeriodNanos()), left);
        }
        finishShutdown(left > 0, left > 0 ? "the server shut down and its shutdown grace period ended"
            : "the server shut down");
      });
    }
  }

  @Override
  public RpcServer shutdownNow() {
    synchronized (this) {
      if (state == State.NEW) {
        return neverStarted();
      }
      if (state == State.TERMINATED) {
        // Stopped already: by an earlier stop, or by start() itself, whose failure released the transport (a
        // stop run again would close and release it twice, and log a second "stopped"); or never started.
        return this;
      }
      // Still accepting: started, or in the drain delay of a shutdown().
      boolean accepting = state == State.STARTED || (state == State.DRAINING && !goingAway && !forced);
      if (state == State.STARTED) {
        state = State.DRAINING;
      }
      if (accepting) {
        transport.stopAccepting(false); // the connections close at once below: no GOAWAY first
      }
      forced = true;
      Objects.requireNonNull(dispatcher, "dispatcher, set by start()").shutdownNow();
    }
    tellDraining();
    if (!finishShutdown(true, "the server shut down at once (shutdownNow)")) {
      // A graceful stop is closing the server already (it may be waiting for handlers): they stop now.
      HandlerWait w = handlerWait;
      if (w != null) {
        w.interrupt();
      } else {
        stopHandlersNow(); // the graceful stop's wait, if it comes, then ends at once
      }
    }
    return this;
  }

  /** The handlers still running are interrupted, the calls still queued never run. */
  private void stopHandlersNow() {
    BusinessPool pool = ownPool;
    if (pool != null) {
      stopPoolNow(pool);
    } else if (config.executor() instanceof VirtualThreadExecutor v) {
      v.interruptRunning();
    }
  }

  /** Closes the server's connections and stops it; false if a stop was under way already (then nothing is done). */
  private boolean finishShutdown(boolean force, String why) {
    if (!closing.compareAndSet(false, true)) {
      return false;
    }
    long left = transport.inFlightCalls();
    if (force && left > 0) {
      log.info("Petrel server '{}' closing its connections now; {} in-flight calls fail with UNAVAILABLE",
          config.name(), left);
    }
    CompletableFuture<Void> closed;
    try {
      closed = transport.closeConnections(force, why).toCompletableFuture();
    } catch (RuntimeException | Error e) {
      // The transport failed to close its connections: the stop goes on (its release closes them with the
      // event loops), rather than leave the server draining forever and awaitTermination waiting.
      log.error("Petrel server '{}': closing its connections failed ({}); stopping all the same", config.name(),
          e.toString(), e);
      closed = CompletableFuture.completedFuture(null);
    }
    CompletableFuture<Void> handlersReturned = CompletableFuture.completedFuture(null);
    BusinessPool pool = ownPool;
    if (pool != null) {
      if (force) {
        stopPoolNow(pool);
      } else {
        pool.shutdown();
        Thread self = Thread.currentThread(); // a handler's own thread, if its call ended the drain: not waited for
        handlersReturned = handlersReturned(pool.terminationFuture(), () -> pool.callsExcept(self),
            () -> stopPoolNow(pool));
      }
    } else if (config.executor() instanceof VirtualThreadExecutor v) {
      if (force) {
        v.interruptRunning();
      } else {
        Thread self = Thread.currentThread();
        handlersReturned = handlersReturned(v.whenIdle(), () -> v.runningExcept(self), v::interruptRunning);
      }
    }
    CompletableFuture<Void> handlers = handlersReturned;
    // The end of the stop runs on a thread of its own: the one that completes the wait may be a handler's, just
    // interrupted, or the JDK's shared timer thread.
    Executor stopThread = r -> {
      Thread t = new Thread(r, config.name() + "-stop");
      t.setDaemon(true);
      t.start();
    };
    closed.whenComplete((v, t) -> handlers.whenCompleteAsync((v1, t1) -> transport.release().whenComplete((v2, t2) -> {
      if (metrics != null) {
        metrics.close(); // its gauges read objects that are gone; a server started again binds its own
      }                  // (OwnedMeters.close() logs what fails rather than throw: termination goes on)
      state = State.TERMINATED;
      long refused = Objects.requireNonNull(dispatcher, "dispatcher, set by start()").rejectedCalls();
      if (refused == 0) {
        log.info("Petrel server '{}' stopped", config.name()); // direct mode has no pool to be full
      } else {
        log.info("Petrel server '{}' stopped ({} calls refused by a full business pool over its life)",
            config.name(), refused);
      }
      terminated.countDown();
    }), stopThread));
    return true;
  }

  /** The business pool stops at once: calls still queued never run (released and ended), running ones interrupted. */
  private static void stopPoolNow(BusinessPool pool) {
    for (Runnable never : pool.shutdownNow()) {
      if (never instanceof CoreServerCall call) {
        call.abandon(); // queued, never run: release its request and end it
      }
    }
  }

  /** How long a stop waits for handlers it has interrupted to return, before it ends without them. */
  private static final long INTERRUPTED_WAIT_NANOS = TimeUnit.SECONDS.toNanos(1);

  /** The graceful stop's wait for handlers ({@link #handlersReturned}), once it began. */
  private volatile @Nullable HandlerWait handlerWait;

  /**
   * A graceful stop: the handlers of the business pool (or of the virtual threads: {@code done} completes when the
   * last has returned, {@code running} counts them) return within what is left of the grace period, also those of
   * calls that no longer count as in flight (their callers are gone: a connection that closed cancels its calls,
   * which does not stop their handlers), so that no handler runs on after the server has terminated. Handlers still
   * running when the grace period ends, or when {@code shutdownNow} comes, are interrupted ({@code stopNow}), and
   * the stop waits at most {@link #INTERRUPTED_WAIT_NANOS} more for them to return.
   */
  private CompletableFuture<Void> handlersReturned(CompletableFuture<Void> done, IntSupplier running,
      Runnable stopNow) {
    HandlerWait w = new HandlerWait(done, running, stopNow);
    handlerWait = w;
    if (done.isDone()) {
      return w.over;
    }
    long left = Math.max(0, graceEndsAt - System.nanoTime());
    int now = running.getAsInt();
    if (now > 0) { // else only idle threads are still ending, within moments
      log.info("Petrel server '{}': waiting up to {} ms (what is left of its shutdown grace period) for {}"
          + " handler(s) still running for callers that are gone (cancelled calls, closed connections)",
          config.name(), TimeUnit.NANOSECONDS.toMillis(left), now);
    }
    CompletableFuture.delayedExecutor(left, TimeUnit.NANOSECONDS).execute(() -> {
      if (!w.over.isDone()) {
        log.warn("Petrel server '{}': its shutdown grace period of {} ms is over with {} handler(s) still running"
            + " for callers that are gone; interrupting them. A handler that works on after its call was cancelled"
            + " can check ServerContext.isCancelled() or stop from an onCancel listener", config.name(),
            TimeUnit.NANOSECONDS.toMillis(config.shutdownGracePeriodNanos()), running.getAsInt());
        w.interrupt();
      }
    });
    return w.over;
  }

  /** One graceful stop's wait for handlers: {@link #over} completes when they have returned, or given up on. */
  private final class HandlerWait {
    private final CompletableFuture<Void> done;
    private final IntSupplier running;
    private final Runnable stopNow;
    final CompletableFuture<Void> over = new CompletableFuture<>();
    private final AtomicBoolean interrupted = new AtomicBoolean();

    HandlerWait(CompletableFuture<Void> done, IntSupplier running, Runnable stopNow) {
      this.done = done;
      this.running = running;
      this.stopNow = stopNow;
      done.whenComplete((v, t) -> over.complete(null));
    }

    /** Interrupts the handlers still running; the stop goes on once they return, or after a second without. */
    void interrupt() {
      if (over.isDone() || !interrupted.compareAndSet(false, true)) {
        return;
      }
      Objects.requireNonNull(dispatcher, "dispatcher, set by start()").shutdownNow();
      stopNow.run();
      CompletableFuture.delayedExecutor(INTERRUPTED_WAIT_NANOS, TimeUnit.NANOSECONDS).execute(() -> {
        if (!done.isDone()) {
          log.warn("Petrel server '{}': {} handler(s) still running {} ms after they were interrupted (they ignore"
              + " interrupts); the server stops without them", config.name(), running.getAsInt(),
              TimeUnit.NANOSECONDS.toMillis(INTERRUPTED_WAIT_NANOS));
        }
        over.complete(null);
      });
    }
  }


  /**
   * An error after which this server cannot be trusted to serve (ServerDispatcher.fatal): logged once, at ERROR,
   * then the server stops as by {@link #shutdownNow}, on a thread of its own (the caller may be an event loop
   * that the stop waits for), so that {@link #awaitTermination} returns and a supervisor can restart the process.
   */
  private void fatal(String where, Throwable error) {
    if (!fatalSeen.compareAndSet(false, true)) {
      return;
    }
    try {
      log.error("Petrel server '{}' is stopping: {} in {}. After it the server cannot be trusted to serve, so it"
          + " closes its connections and stops; restart the process (or let its supervisor do it)", config.name(),
          error, where, error);
    } catch (Throwable ignored) {
      // no memory even to log: stop all the same
    }
    try {
      Thread t = new Thread(this::shutdownNow, config.name() + "-fatal-stop");
      t.setDaemon(true);
      t.start();
    } catch (Throwable e) {
      shutdownNow();
    }
  }

  @Override
  public boolean isShutdown() {
    return state != State.NEW && state != State.STARTED;
  }

  @Override
  public boolean isTerminated() {
    return state == State.TERMINATED && terminated.getCount() == 0;
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    return terminated.await(timeout, unit);
  }

  @Override
  public String toString() {
    return "RpcServer{" + config.name() + " " + (state == State.NEW ? "" : transport.localAddress() + " ") + state
        + "}";
  }
}
