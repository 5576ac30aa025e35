package io.petrel.rpc.spi;

import io.netty.util.collection.IntObjectHashMap;
import io.petrel.rpc.MethodType;
import io.petrel.rpc.ServerInterceptor;
import io.petrel.rpc.ServerMethodDefinition;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.Status;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one call runtime of a server, the same whatever the transport: the method registry, admission into the
 * business executor (a call that does not fit is refused at once with RESOURCE_EXHAUSTED), the interceptors,
 * the call metrics and the drain state. A transport decodes a request, looks its method up here, makes a
 * {@link ServerCall} and hands it to {@link #execute}; everything per connection (framing, the per-connection
 * call limit, cancellation by the peer, write back-pressure) stays in the transport.
 */
public final class ServerDispatcher {
  private static final Logger log = LoggerFactory.getLogger(ServerDispatcher.class);

  /** A method the server serves, with its meters. */
  public record Method(ServerMethodDefinition<?, ?> definition, CallRecorder metrics) {
    public boolean isOneway() {
      return definition.method().type() == MethodType.ONEWAY;
    }
  }

  private final ServerConfig config;
  private final IntObjectHashMap<Method> methods = new IntObjectHashMap<>();
  private final List<String> serviceNames = new ArrayList<>();
  private final @Nullable ServerRecorder metrics;
  private final RateLimitedLog limitLog;
  private final @Nullable Executor executor;
  private final Function<RejectedExecutionException, String> fullMessage;
  private final Runnable onCallEnded;
  /** Told of an error after which the server stops (see {@link #fatal}); set by the server at start. */
  private volatile java.util.function.@Nullable BiConsumer<String, Throwable> onFatal;
  private final java.util.concurrent.atomic.AtomicLong rejectedCalls = new java.util.concurrent.atomic.AtomicLong();
  private volatile boolean shutdown;
  private volatile boolean stoppingNow;

  /**
   * Made by the core's server for its transports.
   *
   * @param executor where calls run, or null to run them on the transport's thread (direct mode)
   * @param fullMessage what to tell a caller refused by a full executor, from the executor's exception
   * @param onCallEnded called after every call ends while the server is shutting down
   */
  public ServerDispatcher(ServerConfig config, @Nullable ServerRecorder metrics, RateLimitedLog limitLog,
      @Nullable Executor executor, Function<RejectedExecutionException, String> fullMessage,
      Runnable onCallEnded) {
    this.config = config;
    this.metrics = metrics;
    this.limitLog = limitLog;
    this.executor = executor;
    this.fullMessage = fullMessage;
    this.onCallEnded = onCallEnded;
    for (ServiceDefinition s : config.services()) {
      serviceNames.add(s.name());
      for (ServerMethodDefinition<?, ?> m : s.methods()) {
        methods.put(m.method().id(), new Method(m, metrics == null ? CallRecorder.NOOP : metrics.forMethod(m.method())));
      }
    }
  }

  public ServerConfig config() {
    return config;
  }

  /** The server's name, for messages. */
  public String name() {
    return config.name();
  }

  /** The server's rate-limited WARN log: one line per cause per 10 s, with counts. */
  /** Where {@link #fatal} reports to: the server, which logs it once and stops. */
  public void onFatal(java.util.function.BiConsumer<String, Throwable> handler) {
    this.onFatal = handler;
  }

  /**
   * An error after which this server cannot be trusted to serve (an {@link OutOfMemoryError} in any of its
   * threads, or an event loop that ended while the server was running): the server logs it once, at ERROR,
   * and stops (docs/reliability.md, row 12). Any thread; never throws.
   *
   * @param where the thread or the part of the server it happened in
   */
  public void fatal(String where, Throwable error) {
    java.util.function.BiConsumer<String, Throwable> h = onFatal;
    if (h != null) {
      try {
        h.accept(where, error);
      } catch (Throwable ignored) {
        // out of memory again, most likely: the server's stop is under way or cannot be helped from here
      }
    }
  }

  /** True for the errors that stop the server when they reach one of its threads: {@link OutOfMemoryError}. */
  public static boolean isFatal(Throwable t) {
    return t instanceof OutOfMemoryError;
  }

  public RateLimitedLog limitLog() {
    return limitLog;
  }

  List<ServerInterceptor> interceptors() {
    return config.interceptors();
  }

  /** The method with this id, or null (answer {@link #unknownMethod}). */
  public @Nullable Method lookup(int methodId) {
    return methods.get(methodId);
  }

  /** The status for a method id the server does not serve. */
  public Status unknownMethod(int methodId) {
    return Status.UNIMPLEMENTED.withDescription("no method with id 0x" + Integer.toHexString(methodId)
        + " on server '" + config.name() + "' (it serves " + serviceNames + ")");
  }

  /** The status for a call of {@code m} that came as a oneway when it is unary, or the other way round. */
  public static @Nullable Status checkType(Method m, boolean oneway) {
    if (m.isOneway() == oneway) {
      return null;
    }
    return Status.INVALID_ARGUMENT.withDescription(m.definition().method().fullName() + " is a "
        + m.definition().method().type() + " method but was called as " + (oneway ? "ONEWAY" : "UNARY"));
  }

  /** True once the server is shutting down: new calls are refused with {@link #shuttingDown()}. */
  public boolean isShutdown() {
    return shutdown;
  }

  /** The status of a call that arrives while the server shuts down. */
  public Status shuttingDown() {
    return Status.UNAVAILABLE.withDescription("server '" + config.name() + "' is shutting down and takes no new"
        + " calls; retry on another server");
  }

  /**
   * Runs the call: at once on this thread in direct mode, else on the business executor. Returns null when the
   * call was admitted (it ends through the call's own methods), or the status to refuse it with when the
   * executor is full or shut down: the call has not run, and the transport undoes its bookkeeping, calls
   * {@link ServerCall#discard()} and answers with the status.
   */
  public @Nullable Status execute(ServerCall call) {
    Executor e = executor;
    if (e == null) {
      call.run();
      return null;
    }
    try {
      e.execute(call);
      return null;
    } catch (RejectedExecutionException rejected) {
      rejectedCalls.incrementAndGet();
      if (metrics != null) {
        metrics.rejected(call.method().serviceName());
      }
      call.refused();
      return shutdown ? shuttingDown() : Status.RESOURCE_EXHAUSTED.withDescription(fullMessage.apply(rejected));
    }
  }

  /** Calls refused because the executor was full, over the server's life. */
  public long rejectedCalls() {
    return rejectedCalls.get();
  }

  /**
   * Called by {@link ServerCall} after every call, and by a transport when a call it counted in flight went
   * away without running; cheap unless the server is shutting down.
   */
  public void callEnded() {
    if (shutdown) {
      onCallEnded.run();
    }
  }

  /** True once the server is being stopped at once ({@code shutdownNow}): running handlers are interrupted. */
  public boolean isStoppingNow() {
    return stoppingNow;
  }

  /** The server stops at once (core only): new calls are refused, and what running handlers throw is moot. */
  public void shutdownNow() {
    stoppingNow = true;
    shutdown();
  }

  /** The server stops taking calls (core only). */
  public void shutdown() {
    if (!shutdown) {
      shutdown = true;
      log.debug("server '{}' takes no new calls", config.name());
    }
  }
}
