package io.petrel.rpc.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.ObservationRegistry;
import io.petrel.rpc.ServerInterceptor;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * Observes every call a server serves ({@code RpcServer.builder().intercept(...)}, first, so that it sees what the
 * other interceptors do): an observation {@value RpcObservations#SERVER_NAME} per call whose parent the tracer
 * reads from the request metadata, with the peer's address. The observation is current on the handler's thread
 * while the handler runs, so calls the handler makes on that thread are its children. A handler that calls out
 * from another thread (an asynchronous one) passes it on itself, e.g. with
 * {@code registry.getCurrentObservation()} captured before it switches threads and
 * {@code observation.scoped(...)} there.
 */
public final class ObservationServerInterceptor implements ServerInterceptor {
  private static final RpcObservations.DefaultServerConvention DEFAULT = new RpcObservations.DefaultServerConvention();

  private final ObservationRegistry registry;
  private final @Nullable ObservationConvention<RpcServerObservationContext> convention;

  public ObservationServerInterceptor(ObservationRegistry registry) {
    this(registry, null);
  }

  /** Names and tags with {@code convention} (null: the default). */
  public ObservationServerInterceptor(ObservationRegistry registry,
      @Nullable ObservationConvention<RpcServerObservationContext> convention) {
    this.registry = Objects.requireNonNull(registry, "registry");
    this.convention = convention;
  }

  @Override
  public <Req, Resp> CompletionStage<Resp> intercept(Chain<Req, Resp> chain) throws Exception {
    if (registry.isNoop()) {
      return chain.proceed();
    }
    RpcServerObservationContext context = new RpcServerObservationContext(chain.context());
    io.petrel.rpc.ServerContext call = chain.context();
    Observation observation = Observation.createNotStarted(convention, DEFAULT, () -> context, registry).start();
    CompletionStage<Resp> result;
    try (Observation.Scope scope = observation.openScope()) {
      result = chain.proceed();
    } catch (Exception | Error e) {
      end(observation, context, e, call);
      throw e;
    }
    result.whenComplete((response, failure) -> end(observation, context, failure, call));
    return result;
  }

  private static void end(Observation observation, RpcServerObservationContext context, @Nullable Throwable failure,
      io.petrel.rpc.ServerContext call) {
    // A oneway has no caller waiting for its answer: it is never counted as given up on.
    io.petrel.rpc.Status.@Nullable Code gaveUp =
        call.method().type() == io.petrel.rpc.MethodType.ONEWAY ? null : call.cancellationCode();
    context.statusCode(RpcObservations.serverStatusCode(failure, gaveUp));
    Throwable cause = RpcObservations.unwrap(failure);
    if (cause != null) {
      observation.error(cause);
    } else if (gaveUp == io.petrel.rpc.Status.Code.DEADLINE_EXCEEDED) {
      // The handler answered after the caller's deadline: a failure of the call, as OpenTelemetry's RPC conventions
      // count DEADLINE_EXCEEDED on a server (a caller's cancel is its own choice: CANCELLED, not an error here).
      observation.error(io.petrel.rpc.Status.DEADLINE_EXCEEDED.withDescription(call.method().fullName()
          + " answered after its caller's deadline had passed (by the server's clock): the caller had stopped"
          + " waiting").asException());
    }
    observation.stop();
  }
}
