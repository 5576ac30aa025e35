package io.petrel.rpc;

import java.security.Principal;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
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
 *
 * <p>{@link #allowUnauthenticated} lets named services or methods through without a token, for example the
 * health service, so that a probe without credentials can ask it:
 *
 * <pre>{@code
 * .intercept(BearerTokenServerInterceptor.verifying(users::byToken)
 *     .allowUnauthenticated("petrel.health.Health"))   // a whole service, or "petrel.health.Health/check"
 * }</pre>
 *
 * <p>Instances are immutable: {@code allowUnauthenticated} returns a new interceptor.
 */
public final class BearerTokenServerInterceptor implements ServerInterceptor {
  /** The principal of a token accepted by a {@link Predicate}: not set on the context. */
  private static final Principal ACCEPTED = () -> "bearer";
  private static final String PREFIX = "Bearer ";

  private final Function<String, ? extends Principal> verifier;
  /** Full service names ({@code pkg.Service}) and full method names ({@code pkg.Service/method}) let through. */
  private final Set<String> unauthenticated;

  private BearerTokenServerInterceptor(Function<String, ? extends Principal> verifier, Set<String> unauthenticated) {
    this.verifier = verifier;
    this.unauthenticated = unauthenticated;
  }

  /**
   * Accepts the calls whose token {@code verifier} maps to a principal (non-null), and sets that principal on
   * the call's {@link ServerContext}; a null result refuses the call.
   */
  public static BearerTokenServerInterceptor verifying(Function<String, ? extends Principal> verifier) {
    return new BearerTokenServerInterceptor(Objects.requireNonNull(verifier, "verifier"), Set.of());
  }

  /** Accepts the calls whose token passes {@code validToken}; no principal is set. */
  public static BearerTokenServerInterceptor of(Predicate<String> validToken) {
    Objects.requireNonNull(validToken, "validToken");
    return new BearerTokenServerInterceptor(token -> validToken.test(token) ? ACCEPTED : null, Set.of());
  }

  /**
   * A new interceptor that checks tokens as this one does, except on calls of the named services or methods,
   * which run without a token (and without a principal, whatever they carry): for example the health service
   * {@code "petrel.health.Health"}, so that a readiness probe needs no credentials. A name is a full service
   * name ({@code "petrel.health.Health"}: every method of that service) or a full method name
   * ({@code "petrel.health.Health/check"}: that method only), as in {@link MethodDescriptor#serviceName()} and
   * {@link MethodDescriptor#fullName()}. Names are matched exactly, case included: {@code "petrel.health.Health"}
   * does not let {@code "petrel.health.HealthAdmin"} through; there are no wildcards. The names add to those this
   * interceptor already lets through.
   *
   * @throws IllegalArgumentException for a name that is empty, has a blank part, more than one {@code '/'}, or a
   *     {@code '*'}
   */
  public BearerTokenServerInterceptor allowUnauthenticated(String... fullServiceOrMethodNames) {
    Objects.requireNonNull(fullServiceOrMethodNames, "fullServiceOrMethodNames");
    Set<String> names = new LinkedHashSet<>(unauthenticated);
    for (String name : fullServiceOrMethodNames) {
      names.add(checkName(name));
    }
    return new BearerTokenServerInterceptor(verifier, Collections.unmodifiableSet(names));
  }

  /** The full service and method names let through without a token ({@link #allowUnauthenticated}). */
  public Set<String> unauthenticatedNames() {
    return unauthenticated;
  }

  private static String checkName(String name) {
    Objects.requireNonNull(name, "a service or method name");
    int slash = name.indexOf('/');
    String problem = null;
    if (name.isBlank()) {
      problem = "is empty";
    } else if (name.indexOf('*') >= 0) {
      problem = "has a '*': names are matched exactly; list each service or method";
    } else if (slash >= 0 && name.indexOf('/', slash + 1) >= 0) {
      problem = "has more than one '/'";
    } else if (slash >= 0 && (name.substring(0, slash).isBlank() || name.substring(slash + 1).isBlank())) {
      problem = "has a blank service or method part";
    } else if (!name.strip().equals(name)) {
      problem = "has leading or trailing spaces";
    }
    if (problem != null) {
      throw new IllegalArgumentException("allowUnauthenticated: '" + name + "' " + problem + "; write a full service"
          + " name (\"petrel.health.Health\") or a full method name (\"petrel.health.Health/check\")");
    }
    return name;
  }

  @Override
  public <Req, Resp> CompletionStage<Resp> intercept(Chain<Req, Resp> chain) throws Exception {
    ServerContext context = chain.context();
    if (!unauthenticated.isEmpty()) {
      MethodDescriptor<?, ?> method = context.method();
      if (unauthenticated.contains(method.serviceName()) || unauthenticated.contains(method.fullName())) {
        return chain.proceed();
      }
    }
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

  @Override
  public String toString() {
    return "BearerTokenServerInterceptor"
        + (unauthenticated.isEmpty() ? "" : "[unauthenticated " + unauthenticated + "]");
  }

  private static StatusException refused(String why) {
    return Status.UNAUTHENTICATED.withDescription("missing or invalid bearer token: " + why).asException();
  }
}
