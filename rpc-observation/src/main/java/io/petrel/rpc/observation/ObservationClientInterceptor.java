package io.petrel.rpc.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.ObservationRegistry;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.ClientInterceptor;
import io.petrel.rpc.Metadata;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * Observes every call of a client ({@code RpcClient.builder().intercept(...)}): an observation
 * {@value RpcObservations#CLIENT_NAME} per call, from the interceptor to the call's end, whose parent is the
 * observation current on the calling thread (for a call made inside a handler, the server call's). The tracer's
 * context goes out in the request metadata ({@code traceparent} with W3C propagation).
 *
 * <p>The peer: the span carries the client's {@code target} ({@code server.address}) and the endpoint the call
 * was sent to ({@code rpc.petrel.peer.address} and {@code rpc.petrel.peer.port}), which the core reports once the
 * load balancer has picked it ({@link CallOptions#withEndpointListener}); a call rerouted to another endpoint
 * carries the last one. The tracer's own typed peer fields ({@code remoteIpAndPort}: {@code network.peer.address}
 * and {@code network.peer.port} with the OpenTelemetry bridge) are set when the span starts, before the pick: from
 * the target when it is one {@code host:port}, else not at all.
 */
public final class ObservationClientInterceptor implements ClientInterceptor {
  private static final RpcObservations.DefaultClientConvention DEFAULT = new RpcObservations.DefaultClientConvention();

  private final ObservationRegistry registry;
  private final String target;
  private final @Nullable ObservationConvention<RpcClientObservationContext> convention;

  /** Observes calls to {@code target} (the client's, e.g. {@code 127.0.0.1:7000}) with the default convention. */
  public ObservationClientInterceptor(ObservationRegistry registry, String target) {
    this(registry, target, null);
  }

  /** As above, naming and tagging with {@code convention} (null: the default). */
  public ObservationClientInterceptor(ObservationRegistry registry, String target,
      @Nullable ObservationConvention<RpcClientObservationContext> convention) {
    this.registry = Objects.requireNonNull(registry, "registry");
    this.target = Objects.requireNonNull(target, "target");
    this.convention = convention;
  }

  @Override
  public <Req, Resp> CompletableFuture<Resp> intercept(Chain<Req, Resp> chain) {
    if (registry.isNoop()) {
      return chain.proceed();
    }
    RpcClientObservationContext context = new RpcClientObservationContext(chain.method(), target);
    Observation observation = Observation.createNotStarted(convention, DEFAULT, () -> context, registry).start();
    CompletableFuture<Resp> result;
    try (Observation.Scope scope = observation.openScope()) {
      Metadata propagated = context.propagatedMetadata();
      CallOptions options = (propagated.isEmpty() ? chain.options() : chain.options().withMetadata(propagated))
          .withEndpointListener(context::endpoint);
      result = chain.proceed(chain.request(), options);
    } catch (RuntimeException | Error e) {
      end(observation, context, e);
      throw e;
    }
    // The caller gets the call's own future (so that cancelling it cancels the call); the observation ends with it.
    result.whenComplete((response, failure) -> end(observation, context, failure));
    return result;
  }

  private static void end(Observation observation, RpcClientObservationContext context, @Nullable Throwable failure) {
    context.statusCode(RpcObservations.clientStatusCode(failure));
    Throwable cause = RpcObservations.unwrap(failure);
    if (cause instanceof java.util.concurrent.CancellationException) {
      // The caller cancelled the call's future: say so, as a status (the bare exception has no message).
      observation.error(io.petrel.rpc.Status.CANCELLED.withDescription("the caller cancelled the call").asException());
    } else if (cause != null) {
      observation.error(cause);
    }
    observation.stop();
  }
}
