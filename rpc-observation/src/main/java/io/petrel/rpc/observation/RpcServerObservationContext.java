package io.petrel.rpc.observation;

import io.micrometer.observation.transport.RequestReplyReceiverContext;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.ServerContext;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/** One call a server serves, as an observation sees it: the tracer reads its parent from the request metadata. */
public final class RpcServerObservationContext extends RequestReplyReceiverContext<Metadata, Object> {
  private final ServerContext call;
  private @Nullable String statusCode;

  RpcServerObservationContext(ServerContext call) {
    super((metadata, key) -> metadata.get(key.toLowerCase(Locale.ROOT)));
    this.call = call;
    setCarrier(call.metadata());
    setRemoteServiceAddress(RpcObservations.uriAddress(call.peer()));
  }

  /** The call's context: method, metadata, peer, deadline. */
  public ServerContext call() {
    return call;
  }

  /** The call's status code name; null until the handler's outcome is known. */
  public @Nullable String statusCode() {
    return statusCode;
  }

  void statusCode(String code) {
    this.statusCode = code;
  }
}
