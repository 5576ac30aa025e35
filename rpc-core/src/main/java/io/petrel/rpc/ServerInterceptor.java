package io.petrel.rpc;

import java.util.concurrent.CompletionStage;

/**
 * Sees, and may change, every call a server serves: check credentials, read or add metadata, time, log.
 * Interceptors set with {@code RpcServer.builder().intercept(...)} run in the order given, on the thread
 * that runs the handler, with {@link ServerContext#current()} set.
 *
 * <p>Rules, checked at run time: {@link Chain#proceed} at most once (not at all to answer by itself, e.g.
 * with UNAUTHENTICATED); the returned stage must not be null. Breaking a rule fails the call with INTERNAL
 * naming the interceptor. Throwing a {@link StatusException} answers the call with that status.
 */
@FunctionalInterface
public interface ServerInterceptor {

  <Req, Resp> CompletionStage<Resp> intercept(Chain<Req, Resp> chain) throws Exception;

  /** One call on its way to the handler. */
  interface Chain<Req, Resp> {
    MethodDescriptor<Req, Resp> method();

    Req request();

    ServerContext context();

    /** Passes the call on, possibly with another request. At most once. */
    CompletionStage<Resp> proceed(Req request) throws Exception;

    default CompletionStage<Resp> proceed() throws Exception {
      return proceed(request());
    }
  }
}
