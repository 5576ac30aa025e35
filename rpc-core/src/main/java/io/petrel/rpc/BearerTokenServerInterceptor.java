package io.petrel.rpc;

import java.security.Principal;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Admits only calls that carry {@code authorization: Bearer <token>} metadata with a token the verifier
 * accepts (as sent by {@link BearerTokenClientInterceptor}); any other call fails with UNAUTHENTICATED
 * "missing or invalid bearer token: ..." and its handler does not run. Add it first, so that no other
 * interceptor runs for an unauthenticated call:
 *
 * <pre>{@code
 * RpcServer server = RpcServer.builder().port(7443)
 *     .tls(serverTls)
 *     .intercept(BearerTokenServerInterceptor.verifying(token -> users.byToken(token)))  // Principal or null
 *     .addService(service)
 *     .build();
 * }</pre>
 *
 * <p>With {@link #verifying}, the principal the verifier returns is set on the call's {@link ServerContext}
 * ({@link ServerContext#principal()}), for handlers and later interceptors. The verifier runs on the thread
 * that runs the handler; it may block there (a lookup), unless the server runs handlers on the event loop
 * ({@code directExecutor()}). A verifier that throws a {@link StatusException} (for example UNAVAILABLE when
 * the token service is down) answers the call with that status; other exceptions fail the call like a handler
 * that threw. Compare secrets in constant time ({@link java.security.MessageDigest#isEqual}).
 */
public final class BearerTokenServerInterceptor implements ServerInterceptor {
  /** The principal of a token accepted by a {@link Predicate}: not set on the context. */
  private static final Principal ACCEPTED = () -> "bearer";
  private static final String PREFIX = "Bearer ";

  private final Function<String, ? extends Principal> verifier;

  private BearerTokenServerInterceptor(Function<String, ? extends Principal> verifier) {
    this.verifier = verifier;
  }

  /**
   * Accepts the calls whose token {@code verifier} maps to a principal (non-null), and sets that principal on
   * the call's {@link ServerContext}; a null result refuses the call.
   */
  public static BearerTokenServerInterceptor verifying(Function<String, ? extends Principal> verifier) {
    return new BearerTokenServerInterceptor(Objects.requireNonNull(verifier, "verifier"));
  }

  /** Accepts the calls whose token passes {@code validToken}; no principal is set. */
  public static BearerTokenServerInterceptor of(Predicate<String> validToken) {
    Objects.requireNonNull(validToken, "validToken");
    return new BearerTokenServerInterceptor(token -> validToken.test(token) ? ACCEPTED : null);
  }

  @Override
  public <Req, Resp> CompletionStage<Resp> intercept(Chain<Req, Resp> chain) throws Exception {
    ServerContext context = chain.context();
    List<String> values = context.metadata().getAll(BearerTokenClientInterceptor.METADATA_KEY);
    if (values.isEmpty()) {
      throw refused("the call has no '" + BearerTokenClientInterceptor.METADATA_KEY + "' metadata; send '"
          + BearerTokenClientInterceptor.METADATA_KEY + ": Bearer <token>' (BearerTokenClientInterceptor)");
    }
    if (values.size() > 1) {
      throw refused("the call has " + values.size() + " '" + BearerTokenClientInterceptor.METADATA_KEY
          + "' entries; send exactly one");
    }
    String value = values.get(0);
    if (value.length() <= PREFIX.length() || !value.regionMatches(true, 0, PREFIX, 0, PREFIX.length())) {
      throw refused("the '" + BearerTokenClientInterceptor.METADATA_KEY + "' metadata is not 'Bearer <token>'");
    }
    Principal principal = verifier.apply(value.substring(PREFIX.length()).trim());
    if (principal == null) {
      throw refused("the token was not accepted");
    }
    if (principal != ACCEPTED) {
      context.setPrincipal(principal);
    }
    return chain.proceed();
  }

  private static StatusException refused(String why) {
    return Status.UNAUTHENTICATED.withDescription("missing or invalid bearer token: " + why).asException();
  }
}
