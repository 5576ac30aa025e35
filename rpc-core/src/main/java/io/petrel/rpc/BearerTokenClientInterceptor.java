package io.petrel.rpc;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * Sends {@code authorization: Bearer <token>} with every call, the token taken from a {@link Supplier} on each
 * call (so a refreshed token is used as soon as the supplier returns it; the supplier should cache, it runs
 * on the calling thread). The server checks it with {@link BearerTokenServerInterceptor}.
 *
 * <pre>{@code
 * RpcClient client = RpcClient.builder().address("api.example.com", 7443)
 *     .tls(TlsConfig.builder().build())
 *     .intercept(BearerTokenClientInterceptor.of(tokens::current))
 *     .build();
 * }</pre>
 *
 * <p>A bearer token is as good as a password to whoever reads it, so by default this interceptor refuses to
 * send it over a connection without TLS: such a call fails with FAILED_PRECONDITION before anything is sent.
 * It knows through {@link ClientInterceptor.Chain#isSecure()}, true when the client was built with
 * {@code RpcClient.builder().tls(...)}. Where the network is protected otherwise (loopback, a sidecar that
 * adds TLS), {@link #allowPlaintext()} lifts the check.
 *
 * <p>A supplier that returns null or a blank string, or throws, fails the call with UNAUTHENTICATED before it
 * is sent. Immutable and thread-safe.
 */
public final class BearerTokenClientInterceptor implements ClientInterceptor {
  /** The metadata key of the token: {@value}. */
  public static final String METADATA_KEY = "authorization";

  private final Supplier<String> tokens;
  private final boolean allowPlaintext;

  private BearerTokenClientInterceptor(Supplier<String> tokens, boolean allowPlaintext) {
    this.tokens = tokens;
    this.allowPlaintext = allowPlaintext;
  }

  /** Sends the token that {@code tokens} returns at each call. */
  public static BearerTokenClientInterceptor of(Supplier<String> tokens) {
    return new BearerTokenClientInterceptor(Objects.requireNonNull(tokens, "tokens"), false);
  }

  /** Sends a fixed token. */
  public static BearerTokenClientInterceptor of(String token) {
    Objects.requireNonNull(token, "token");
    return of(() -> token);
  }

  /**
   * A copy that also sends the token over plaintext connections. Only where nobody else can read the traffic:
   * on loopback, or behind a proxy or sidecar that adds TLS.
   */
  public BearerTokenClientInterceptor allowPlaintext() {
    return new BearerTokenClientInterceptor(tokens, true);
  }

  @Override
  public <Req, Resp> CompletableFuture<Resp> intercept(Chain<Req, Resp> chain) {
    String method = chain.method().fullName();
    if (!allowPlaintext && !chain.isSecure()) {
      throw Status.FAILED_PRECONDITION.withDescription("refusing to send a bearer token with " + method
          + " over a plaintext connection, where anyone on the path could read and reuse it; the call was not"
          + " sent. Use TLS (RpcClient.builder().tls(...)), or, if the network is protected otherwise (loopback,"
          + " a TLS sidecar), allow it with BearerTokenClientInterceptor.allowPlaintext()").asException();
    }
    String token;
    try {
      token = tokens.get();
    } catch (RuntimeException e) {
      throw Status.UNAUTHENTICATED.withDescription("the bearer token supplier threw " + Status.describe(e)
          + "; " + method + " was not sent").withCause(e).asException();
    }
    if (token == null || token.isBlank()) {
      throw Status.UNAUTHENTICATED.withDescription("the bearer token supplier returned no token; " + method
          + " was not sent").asException();
    }
    for (int i = 0; i < token.length(); i++) {
      char c = token.charAt(i);
      if (c <= ' ' || c >= 0x7f) {
        throw Status.UNAUTHENTICATED.withDescription("the bearer token has a space, control or non-ASCII"
            + " character at index " + i + ", which a token must not have; " + method + " was not sent")
            .asException();
      }
    }
    return chain.proceed(chain.request(),
        chain.options().withMetadata(Metadata.of(METADATA_KEY, "Bearer " + token)));
  }

  @Override
  public String toString() {
    return "BearerTokenClientInterceptor{allowPlaintext=" + allowPlaintext + "}";
  }
}
