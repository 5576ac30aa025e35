package io.petrel.rpc;

import java.util.concurrent.CompletableFuture;

/**
 * Sees, and may change, every call a client makes: add metadata, shorten deadlines, time, log, fail fast.
 * Interceptors set on the client ({@code RpcClient.builder().intercept(...)}) run first, in the order given,
 * then those of the call's options ({@code stub.withInterceptors(...)}), then the transport.
 *
 * <p>Rules, checked at run time: {@link Chain#proceed} may be called at most once per interception (an
 * interceptor that answers by itself, e.g. refusing a call, does not call it at all); the returned future
 * must not be null. Breaking a rule fails the call with INTERNAL naming the interceptor.
 */
@FunctionalInterface
public interface ClientInterceptor {

  <Req, Resp> CompletableFuture<Resp> intercept(Chain<Req, Resp> chain);

  /** One call on its way through the interceptors. */
  interface Chain<Req, Resp> {
    MethodDescriptor<Req, Resp> method();

    Req request();

    CallOptions options();

    /** Passes the call on, possibly with another request or options. At most once. */
    CompletableFuture<Resp> proceed(Req request, CallOptions options);

    /** Passes the call on unchanged. At most once. */
    default CompletableFuture<Resp> proceed() {
      return proceed(request(), options());
    }

    /** Metadata the server sent with its response; empty until the response arrives. */
    Metadata responseMetadata();

    /**
     * True when the call goes over TLS (the client was built with {@code RpcClient.builder().tls(...)}), so an
     * interceptor can refuse to put secrets in the metadata of a plaintext call (see
     * {@link BearerTokenClientInterceptor}). Same as {@link RpcClient#isSecure()} of the calling client.
     */
    default boolean isSecure() {
      return false;
    }
  }
}
