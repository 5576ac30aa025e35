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
  private boolean proceeded;

  private ServerChain(List<ServerInterceptor> interceptors, int index, ServerMethodDefinition<Req, Resp> def,
      Req request, ServerContext context) {
    this.interceptors = interceptors;
    this.index = index;
    this.def = def;
    this.request = request;
    this.context = context;
  }

  /** The handler's result through the interceptors. Throws what the first interceptor or handler throws. */
  public static <Req, Resp> CompletionStage<Resp> invoke(List<ServerInterceptor> interceptors,
      ServerMethodDefinition<Req, Resp> def, Req request, ServerContext context) throws Exception {
    if (interceptors.isEmpty()) {
      return handle(def, request);
    }
    return new ServerChain<>(interceptors, 0, def, request, context).run();
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
      return new ServerChain<>(interceptors, index + 1, def, request, context).run();
    }
    return handle(def, request);
  }
}
