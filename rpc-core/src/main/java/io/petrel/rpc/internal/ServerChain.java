package io.petrel.rpc.internal;

import io.petrel.rpc.AsyncUnaryHandler;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.ServerInterceptor;
import io.petrel.rpc.ServerMethodDefinition;
import io.petrel.rpc.Status;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Runs a server call through the server's interceptors to its handler, checking the interceptors' rules.
 * Transports call {@link #invoke}; with no interceptors they may call the handler directly.
 */
public final class ServerChain<Req, Resp> implements ServerInterceptor.Chain<Req, Resp> {
  private final List<ServerInterceptor> interceptors;
  private final int index;
  private final ServerMethodDefinition<Req, Resp> def;
  private final Req request;
  private final ServerContext context;
  /** Told what the handler throws, on its thread, before the interceptors unwind; or null. */
  private final @Nullable Consumer<Throwable> threw;
  private boolean proceeded;

  private ServerChain(List<ServerInterceptor> interceptors, int index, ServerMethodDefinition<Req, Resp> def,
      Req request, ServerContext context, @Nullable Consumer<Throwable> threw) {
    this.interceptors = interceptors;
    this.index = index;
    this.threw = threw;
    this.def = def;
    this.request = request;
    this.context = context;
  }

  /**
   * The handler's result through the interceptors. Throws what the first interceptor or handler throws.
   * {@code threw}, if not null, is told what the handler itself throws, on the handler's thread while the
   * interceptors' scopes are still open (a tracing interceptor's trace id is then in the logging MDC), before the
   * throwable goes back through them.
   */
  public static <Req, Resp> CompletionStage<Resp> invoke(List<ServerInterceptor> interceptors,
      ServerMethodDefinition<Req, Resp> def, Req request, ServerContext context, @Nullable Consumer<Throwable> threw)
      throws Exception {
    if (interceptors.isEmpty()) {
      return handle(def, request, threw);
    }
    return new ServerChain<>(interceptors, 0, def, request, context, threw).run();
  }

  private static <Req, Resp> CompletionStage<Resp> handle(ServerMethodDefinition<Req, Resp> def, Req request,
      @Nullable Consumer<Throwable> threw) throws Exception {
    try {
      return handle(def, request);
    } catch (Exception | Error t) {
      if (threw != null) {
        try {
          threw.accept(t);
        } catch (Throwable ignored) {
          // (out of memory copying the MDC, say): what the handler threw is what goes on
        }
      }
      throw t;
    }
  }

  private static <Req, Resp> CompletionStage<Resp> handle(ServerMethodDefinition<Req, Resp> def, Req request)
      throws Exception {
    AsyncUnaryHandler<Req, Resp> async = def.asyncHandler();
    if (async != null) {
      CompletionStage<Resp> stage = async.invoke(request);
      if (stage == null) {
        throw Status.INTERNAL.withDescription("async handler of " + def.method().fullName()
            + " returned null instead of a CompletionStage").asException();
      }
      return stage;
    }
    return CompletableFuture.completedFuture(
        Objects.requireNonNull(def.handler(), "a method without an async handler has a blocking one").invoke(request));
  }

  private CompletionStage<Resp> run() throws Exception {
    ServerInterceptor interceptor = interceptors.get(index);
    CompletionStage<Resp> result = interceptor.intercept(this);
    if (result == null) {
      throw Status.INTERNAL.withDescription("server interceptor " + interceptor.getClass().getName()
          + " returned null; it must return a CompletionStage").asException();
    }
    return result;
  }

  @Override
  public MethodDescriptor<Req, Resp> method() {
    return def.method();
  }

  @Override
  public Req request() {
    return request;
  }

  @Override
  public ServerContext context() {
    return context;
  }

  @Override
  public synchronized CompletionStage<Resp> proceed(Req request) throws Exception {
    if (proceeded) {
      throw Status.INTERNAL.withDescription("server interceptor " + interceptors.get(index).getClass().getName()
          + " called proceed() twice for " + def.method().fullName() + "; call it at most once").asException();
    }
    proceeded = true;
    if (index + 1 < interceptors.size()) {
      return new ServerChain<>(interceptors, index + 1, def, request, context, threw).run();
    }
    return handle(def, request, threw);
  }
}
