package io.petrel.spring.boot;

import io.petrel.rpc.InProcessAddress;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.RpcServerBuilder;
import io.petrel.rpc.health.HealthService;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Runs the auto-configured {@link RpcServer}: built and started once the context has refreshed (every singleton
 * made, so handlers find their dependencies ready), and drained first when the context closes: new calls are
 * refused, calls in flight get up to {@code petrel.server.shutdown-grace-period} to finish, then the rest are
 * failed. Clients of the context close after it, so a handler that calls out while draining still can. While
 * the server serves, a non-daemon thread ({@value #KEEP_ALIVE_THREAD}) keeps the JVM up, so that an application
 * without a web server keeps serving after its {@code main} has returned.
 */
public final class PetrelServerLifecycle implements SmartLifecycle {
  /**
   * Started late and stopped early: {@link SmartLifecycle#DEFAULT_PHASE} - 1024, the phase of Boot's web server
   * graceful shutdown (the web server itself starts and stops at - 2048); both drains run at once.
   */
  public static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 1024;

  private static final Logger log = LoggerFactory.getLogger(PetrelServerLifecycle.class);
  /** The name of the non-daemon thread that keeps the JVM up while the server serves. */
  static final String KEEP_ALIVE_THREAD = "petrel-server-keep-alive";

  /** Spring's own {@code timeoutPerShutdownPhase}, without Boot's LifecycleAutoConfiguration. */
  static final Duration SPRING_PHASE_TIMEOUT = Duration.ofSeconds(10);

  /** The Environment property that holds the bound port once the server has started, as Boot's local.server.port. */
  public static final String LOCAL_PORT_PROPERTY = "local.petrel.server.port";

  private final Supplier<RpcServerBuilder> plan;
  private final Supplier<ShutdownPhaseTimeout> phaseTimeout;
  private final IntConsumer portListener;
  private final Runnable contextClosed;
  private volatile @Nullable RpcServer server;
  private volatile boolean noServices;
  /** What the last start warned about the shutdown phase's timeout, or null. */
  private volatile @Nullable String phaseWarning;

  PetrelServerLifecycle(Supplier<RpcServerBuilder> plan) {
    this(plan, () -> ShutdownPhaseTimeout.property(SPRING_PHASE_TIMEOUT), port -> { }, () -> { });
  }

  /**
   * @param phaseTimeout how long the context waits for this bean's phase to stop (the lifecycle processor's
   *     timeout, {@code spring.lifecycle.timeout-per-shutdown-phase} with Boot's), for the WARN of
   *     {@link #phaseWarning}
   * @param portListener told the bound port of each server started on a socket ({@value #LOCAL_PORT_PROPERTY})
   * @param contextClosed run when the context closes ({@link #contextClosed()}), after the server's stop
   */
  PetrelServerLifecycle(Supplier<RpcServerBuilder> plan, Supplier<ShutdownPhaseTimeout> phaseTimeout,
      IntConsumer portListener, Runnable contextClosed) {
    this.plan = plan;
    this.phaseTimeout = phaseTimeout;
    this.portListener = portListener;
    this.contextClosed = contextClosed;
  }

  @Override
  public synchronized void start() {
    RpcServer previous = server;
    if (previous != null && !previous.isShutdown()) {
      return;
    }
    if (previous != null) {
      awaitStopped(previous); // a drain still going (the context's phase timeout ran out): it holds the port
      server = null; // a restart that fails leaves no stopped server behind to be taken for this one
    }
    // First start, or again after stop() (context.stop() then start(), a checkpoint and restore): a new server of
    // the same plan, on the same port; the stopped one's gauges were removed when it terminated.
    RpcServerBuilder p;
    try {
      p = plan.get();
    } catch (IllegalArgumentException | IllegalStateException e) {
      throw serverProblem(e);
    }
    RpcServer started;
    try {
      RpcServer built = p.build();
      // The services of the server as built: the beans found, and any a PetrelServerCustomizer added by hand.
      if (built.services().stream().allMatch(d -> d.name().equals(HealthService.SERVICE))) {
        // Nothing but the health service the starter adds: nothing to serve.
        built.shutdownNow(); // never started: this releases what building made
        noServices = true;
        log.info("no @RpcService beans, no ServiceDefinition beans and no service added by a PetrelServerCustomizer:"
            + " the Petrel server is not started (set petrel.server.enabled=false to say so and silence this)");
        return;
      }
      started = built.start();
    } catch (IOException e) {
      throw new UncheckedIOException("the Petrel server could not start: " + e.getMessage() + hint(e), e);
    } catch (IllegalArgumentException | IllegalStateException e) {
      throw serverProblem(e);
    }
    server = started;
    keepAlive(started);
    if (started.address() instanceof InetSocketAddress bound) {
      portListener.accept(bound.getPort());
    }
    String warning = phaseWarning(phaseTimeout.get(), started.drainDelay(), started.shutdownGracePeriod());
    phaseWarning = warning;
    if (warning != null) {
      log.warn(warning);
    }
  }

  /**
   * The WARN a start logs when the context would stop waiting for the server's drain before it ends: the phase's
   * timeout shorter than the drain delay plus the grace period; null when it is long enough.
   */
  static @Nullable String phaseWarning(Duration timeout, Duration drainDelay, Duration gracePeriod) {
    return phaseWarning(ShutdownPhaseTimeout.property(timeout), drainDelay, gracePeriod);
  }

  /** As {@link #phaseWarning(Duration, Duration, Duration)}, naming what sets the phase's timeout. */
  static @Nullable String phaseWarning(ShutdownPhaseTimeout phase, Duration drainDelay, Duration gracePeriod) {
    Duration timeout = phase.timeout();
    Duration drain = drainDelay.plus(gracePeriod);
    if (timeout.compareTo(drain) >= 0) {
      return null;
    }
    String delay = drainDelay.isZero() ? "" : "a drain delay of " + text(drainDelay) + " (set by a"
        + " PetrelServerCustomizer) plus ";
    return phase.setting() + "=" + text(timeout) + " is shorter than the Petrel server's "
        + delay + "petrel.server.shutdown-grace-period=" + text(gracePeriod) + ": when the context closes, Spring"
        + " stops waiting for the server after " + text(timeout) + " and goes on closing the context (the Petrel"
        + " clients and the other beans) while calls are still in flight; when the JVM then exits, those calls are"
        + " cut and their callers get UNAVAILABLE (\"... the server may or may not have run it\"). " + phase.fix()
        + " at least " + text(drain.plusSeconds(15)) + " (the drain"
        + " and 15 s to close), or lower petrel.server.shutdown-grace-period";
  }

  /** A duration as Boot's properties write it: 500ms, 20s. */
  private static String text(Duration d) {
    return d.toMillis() % 1000 == 0 ? d.toSeconds() + "s" : d.toMillis() + "ms";
  }

  /** The WARN the last start logged about the shutdown phase's timeout (see {@link #phaseWarning}), or null. */
  @Nullable String phaseWarning() {
    return phaseWarning;
  }

  /**
   * What to do about a start that failed: a port or address that cannot be bound, or TLS files that cannot be
   * loaded (the server reads them when it starts); the port is not blamed for the files.
   */
  private static String hint(IOException e) {
    String message = String.valueOf(e.getMessage());
    if (message.contains("cannot bind")) {
      return " (set petrel.server.port to a free port, or 0 for any free one, or stop what holds this one; or set"
          + " petrel.server.address to an address of this machine, or leave it unset for all of them)";
    }
    String lower = message.toLowerCase(java.util.Locale.ROOT);
    if (lower.contains("tls") || lower.contains("certificate") || lower.contains("private key")
        || lower.contains("key store") || lower.contains("cannot read")) {
      return " (the server's TLS material: check the files petrel.server.tls.certificate-chain,"
          + " petrel.server.tls.private-key and petrel.server.tls.trust-certificates name, and"
          + " petrel.server.tls.private-key-password; or the TlsConfig a PetrelServerCustomizer set)";
    }
    return "";
  }

  /**
   * The server's builder refused its configuration: the same message, saying it is about the petrel.server
   * properties (the builder names its own Java option, which a Boot user sets as a property).
   */
  private static RuntimeException serverProblem(RuntimeException e) {
    String message = String.valueOf(e.getMessage());
    if (message.contains("petrel.server.") || message.contains("Petrel customizer")
        || e instanceof PetrelServices.ServingProblem) {
      return e; // already says which property (or customizer), or is about the beans served, not about properties
    }
    return new IllegalStateException("the Petrel server (properties petrel.server.*): " + message, e);
  }

  /**
   * Holds the JVM up while the server serves, as Boot's web servers do: the server's event loops are daemon
   * threads, so an application that serves only Petrel (no web server) would otherwise exit as soon as its
   * {@code main} returned. The thread ends once the server has terminated (the context closed, or the server
   * stopped on a fatal error).
   */
  private static void keepAlive(RpcServer s) {
    Thread t = new Thread(() -> {
      try {
        s.awaitTermination();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, KEEP_ALIVE_THREAD);
    t.setDaemon(false);
    t.start();
  }

  @Override
  public void stop() {
    RpcServer s = server;
    if (s == null) {
      return;
    }
    s.shutdown();
    awaitStopped(s);
  }

  /**
   * Starts the drain and tells {@code callback} once the server has stopped, from a thread of its own: the other
   * beans of this phase (Boot's web server's graceful shutdown) drain at the same time rather than after it. The
   * context waits for the callback up to {@code spring.lifecycle.timeout-per-shutdown-phase} (Boot: 30 s).
   */
  @Override
  public void stop(Runnable callback) {
    RpcServer s = server;
    if (s == null) {
      callback.run();
      return;
    }
    s.shutdown();
    Thread t = new Thread(() -> {
      try {
        awaitStopped(s);
      } finally {
        callback.run();
      }
    }, "petrel-server-stop");
    t.setDaemon(true);
    t.start();
  }

  /**
   * Waits for the draining server to stop: its drain delay, its grace period and closing, then at once. Both
   * come from the server itself, so a {@code PetrelServerCustomizer} that set them is followed.
   */
  private static void awaitStopped(RpcServer s) {
    try {
      if (!s.awaitTermination(stopBoundMillis(s), TimeUnit.MILLISECONDS)) {
        s.shutdownNow();
        s.awaitTermination(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      s.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }

  /**
   * How long a stop waits for the draining server before it stops it at once: its drain delay and grace period,
   * as built, and 5 s for closing (shutdown() closes what is left once the grace period is over).
   */
  static long stopBoundMillis(RpcServer s) {
    return s.drainDelay().plus(s.shutdownGracePeriod()).toMillis() + 5_000;
  }

  /**
   * The context closed (the bean's destroy method, after the context's stop): what outlives the context, the update
   * handlers Boot keeps of the server's SSL bundle, no longer follow it. A stop alone (context.stop(), then
   * start()) keeps them: the server started again follows the bundle.
   */
  void contextClosed() {
    contextClosed.run();
  }

  @Override
  public boolean isRunning() {
    RpcServer s = server;
    return s != null && !s.isShutdown();
  }

  /**
   * Not stopped by {@code context.pause()}: pausing the context (which stops and restarts lifecycle beans) leaves
   * the server serving, its connections open.
   */
  @Override
  public boolean isPauseable() {
    return false;
  }

  @Override
  public int getPhase() {
    return PHASE;
  }

  /** The running (or stopped) server; null before the context has started, or when there is nothing to serve. */
  public @Nullable RpcServer server() {
    return server;
  }

  /** True when the context started with nothing to serve, so no server was started. */
  public boolean hasNoServices() {
    return noServices;
  }

  /**
   * The bound port, e.g. with {@code petrel.server.port=0} (also the Environment's {@value #LOCAL_PORT_PROPERTY}).
   *
   * @throws IllegalStateException before the server has started, and for an in-process server (which has none)
   */
  public int port() {
    RpcServer s = server;
    if (s == null) {
      throw new IllegalStateException(noServices ? "the Petrel server was not started: the context has no services"
          : "the Petrel server is not started yet: it starts when the application context has refreshed");
    }
    if (s.address() instanceof InProcessAddress a) {
      throw new IllegalStateException("the Petrel server serves in-process, as '" + a.name() + "'"
          + " (petrel.server.in-process-name): it has no port; call it with the target inprocess:" + a.name());
    }
    return s.port();
  }
}
