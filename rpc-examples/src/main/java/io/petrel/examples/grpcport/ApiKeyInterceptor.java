package io.petrel.examples.grpcport;

import io.petrel.rpc.ServerInterceptor;
import io.petrel.rpc.Status;
import io.petrel.rpc.health.HealthService;
import java.util.concurrent.CompletionStage;

/** What was a grpc ServerInterceptor reading Metadata.Key.of("x-api-key", ASCII_STRING_MARSHALLER). */
public final class ApiKeyInterceptor implements ServerInterceptor {
  /** Metadata keys are lower case: "X-Api-Key" would throw IllegalArgumentException. */
  public static final String KEY = "x-api-key";

  private final String apiKey;

  public ApiKeyInterceptor(String apiKey) {
    this.apiKey = apiKey;
  }

  @Override
  public <Req, Resp> CompletionStage<Resp> intercept(Chain<Req, Resp> chain) throws Exception {
    if (chain.method().serviceName().equals(HealthService.SERVICE)) {
      return chain.proceed();   // health checks carry no key
    }
    if (!apiKey.equals(chain.context().metadata().get(KEY))) {
      // was: call.close(Status.UNAUTHENTICATED..., new Metadata()); return new ServerCall.Listener<>() {};
      throw Status.UNAUTHENTICATED.withDescription("missing or wrong " + KEY).asException();
    }
    return chain.proceed();
  }
}
