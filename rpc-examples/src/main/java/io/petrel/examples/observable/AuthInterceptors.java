package io.petrel.examples.observable;

import io.petrel.rpc.CallOptions;
import io.petrel.rpc.ClientInterceptor;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.ServerInterceptor;
import io.petrel.rpc.Status;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** A bearer token: added by clients, checked by servers. */
final class AuthInterceptors {
  static final String KEY = "authorization";

  private AuthInterceptors() {}

  /** Adds {@code authorization: Bearer <token>} to every call. */
  static ClientInterceptor sendToken(String token) {
    Metadata md = Metadata.of(KEY, "Bearer " + token);
    return new ClientInterceptor() {
      @Override
      public <Req, Resp> CompletableFuture<Resp> intercept(Chain<Req, Resp> chain) {
        CallOptions options = chain.options().withMetadata(md);
        return chain.proceed(chain.request(), options);
      }
    };
  }

  /** Refuses calls without the expected token with UNAUTHENTICATED, before the handler runs. */
  static ServerInterceptor requireToken(String token) {
    String expected = "Bearer " + token;
    return new ServerInterceptor() {
      @Override
      public <Req, Resp> CompletionStage<Resp> intercept(Chain<Req, Resp> chain) throws Exception {
        String got = chain.context().metadata().get(KEY);
        if (!expected.equals(got)) {
          throw Status.UNAUTHENTICATED.withDescription(got == null
              ? "no '" + KEY + "' metadata; send 'Bearer <token>'" : "the token is not valid").asException();
        }
        return chain.proceed();
      }
    };
  }
}
