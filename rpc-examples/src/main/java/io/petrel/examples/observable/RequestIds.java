package io.petrel.examples.observable;

import io.petrel.rpc.ClientInterceptor;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.ServerInterceptor;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Propagates {@code x-request-id} across a chain of services: a call made while serving another call carries
 * the id of the call being served (or a new one at the edge), and every server echoes it in its response
 * metadata so that callers can correlate logs.
 */
final class RequestIds {
  static final String KEY = "x-request-id";

  private RequestIds() {}

  static ClientInterceptor propagate() {
    return new ClientInterceptor() {
      @Override
      public <Req, Resp> CompletableFuture<Resp> intercept(Chain<Req, Resp> chain) {
        if (chain.options().metadata().get(KEY) != null) {
          return chain.proceed();
        }
        ServerContext serving = ServerContext.current();
        String id = serving != null && serving.metadata().get(KEY) != null
            ? serving.metadata().get(KEY) : UUID.randomUUID().toString();
        return chain.proceed(chain.request(), chain.options().withMetadata(Metadata.of(KEY, id)));
      }
    };
  }

  static ServerInterceptor echo() {
    return new ServerInterceptor() {
      @Override
      public <Req, Resp> CompletionStage<Resp> intercept(Chain<Req, Resp> chain) throws Exception {
        String id = chain.context().metadata().get(KEY);
        if (id != null) {
          chain.context().addResponseMetadata(KEY, id);
        }
        return chain.proceed();
      }
    };
  }
}
