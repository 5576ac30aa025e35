package io.petrel.rpc.internal;

import io.netty.util.collection.IntObjectHashMap;
import io.petrel.rpc.ExceptionDetails;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.ServerInterceptor;
import io.petrel.rpc.ServerMethodDefinition;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.Status;
import io.petrel.rpc.spi.RateLimitedLog;
import io.petrel.rpc.spi.ServerCall;
import io.petrel.rpc.spi.ServerConfig;
import io.petrel.rpc.spi.ServerDispatcher;
import io.petrel.rpc.spi.ServerStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one call runtime of a server, the same whatever the transport (the {@link ServerDispatcher} its transport
 * drives): the method registry, the calls ({@link CoreServerCall}), admission into the business executor (a call
 * that does not fit is refused at once with RESOURCE_EXHAUSTED), the interceptors, the call metrics and the drain
 * state.
 */
public final class CoreDispatcher implements ServerDispatcher {
  private static final Logger log = LoggerFactory.getLogger(CoreDispatcher.class);

  /** A method the server serves, with its meters. */
  record Entry(ServerMethodDefinition<?, ?> definition, CallRecorder metrics) implements Method {
    @Override
    public MethodDescriptor<?, ?> method() {
      return definition.method();
    }
  }

  private final ServerConfig config;
  private final IntObjectHashMap<Entry> methods = new IntObjectHashMap<>();
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
  public CoreDispatcher(ServerConfig config, @Nullable ServerRecorder metrics, RateLimitedLog limitLog,
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
        methods.put(m.method().id(), new Entry(m, metrics == null ? CallRecorder.NOOP : metrics.forMethod(m.method())));
      }
    }
  }

  @Override
  public ServerConfig config() {
    return config;
  }

  @Override
  public String name() {
    return config.name();
  }

  /** Where {@link #fatal} reports to: the server, which logs it once and stops. */
  public void onFatal(java.util.function.BiConsumer<String, Throwable> handler) {
    this.onFatal = handler;
  }

  @Override
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

  @Override
  public RateLimitedLog limitLog() {
    return limitLog;
  }

  List<ServerInterceptor> interceptors() {
    return config.interceptors();
  }

  @Override
  public @Nullable Method lookup(int methodId) {
    return methods.get(methodId);
  }

  @Override
  public Status unknownMethod(int methodId, Object peer) {
    String id = "0x" + Integer.toHexString(methodId);
    // The caller may be anyone (no interceptor has run): it learns nothing it did not send. The operator learns
    // who asked for what, and what this server serves, from the log.
    limitLog.warn("unknown method", "no method with id " + id + " on server '" + config.name() + "' (it serves "
        + serviceNames + "), asked for by " + peer + ": answered UNIMPLEMENTED (client and server built from"
        + " different interface versions, or the client calls the wrong server?)");
    return Status.UNIMPLEMENTED.withDescription("no method with id " + id + " on this server; check that the"
        + " client and the server are built from the same version of the interface, and that the client calls the"
        + " right server (the server's log names the services it serves)");
  }

  @Override
  public Status responseEncodeFailed(MethodDescriptor<?, ?> m, Throwable t) {
    boolean all = config.exceptionDetails() == ExceptionDetails.ALL;
    limitLog.warn("could not encode: " + m.fullName(), "server could not encode the response of " + m.fullName()
        + "; the caller gets INTERNAL" + (all ? "" : " without the exception's class or message") + " (make the"
        + " handler return what the method's response marshaller can encode)", t);
    return Status.INTERNAL.withDescription("server could not encode the response of " + m.fullName()
        + (all ? ": " + Status.describe(t) : " (the server's log has why)"));
  }

  @Override
  public boolean isShutdown() {
    return shutdown;
  }

  @Override
  public Status shuttingDown() {
    // Sent to any peer, before interceptors: the caller knows the address it called, not the server's name.
    return Status.UNAVAILABLE.withDescription("the server is shutting down and takes no new calls; retry on"
        + " another server");
  }

  @Override
  public void refused(Method m, Status.Code code, int requestBytes) {
    ((Entry) m).metrics().record(code, 0, requestBytes, -1);
  }

  @Override
  public ServerCall newCall(Method method, ServerContext context, ServerStream stream) {
    return new CoreServerCall(this, (Entry) method, context, stream);
  }

  @Override
  public @Nullable Status execute(ServerCall serverCall) {
    CoreServerCall call = (CoreServerCall) serverCall;
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
      Status refusal = shutdown ? shuttingDown()
          : Status.RESOURCE_EXHAUSTED.withDescription(fullMessage.apply(rejected));
      call.refused(refusal.code());
      return refusal;
    }
  }

  @Override
  public long rejectedCalls() {
    return rejectedCalls.get();
  }

  @Override
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
