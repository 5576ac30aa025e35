package io.petrel.rpc.observation;

import io.micrometer.observation.transport.RequestReplySenderContext;
import io.petrel.rpc.Endpoint;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.MethodDescriptor;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * One call a client makes, as an observation sees it. A tracer's propagator writes its fields ({@code traceparent},
 * {@code tracestate}, {@code baggage}, {@code b3} ...) into the carrier when the observation starts; they travel as
 * the call's request metadata, keys in lower case (Petrel's metadata keys are {@code a-z 0-9 - _ .}; a field with
 * any other character is not sent).
 */
public final class RpcClientObservationContext extends RequestReplySenderContext<Map<String, String>, Object> {
  private final MethodDescriptor<?, ?> method;
  private final String target;
  private @Nullable String statusCode;
  private volatile @Nullable Endpoint endpoint;

  RpcClientObservationContext(MethodDescriptor<?, ?> method, String target) {
    super(RpcClientObservationContext::put);
    this.method = method;
    this.target = target;
    setCarrier(new LinkedHashMap<>());
    setRemoteServiceName(method.serviceName());
    String address = RpcObservations.uriAddress(target);
    if (address != null) {
      setRemoteServiceAddress(address);
    }
  }

  private static void put(@Nullable Map<String, String> carrier, String key, String value) {
    if (carrier == null) {
      return;
    }
    String lower = key.toLowerCase(Locale.ROOT);
    try {
      Metadata.checkKey(lower);
    } catch (IllegalArgumentException e) {
      return;
    }
    carrier.put(lower, value);
  }

  public MethodDescriptor<?, ?> method() {
    return method;
  }

  /** The client's target, e.g. {@code 127.0.0.1:7000}; empty when the interceptor was made without one. */
  public String target() {
    return target;
  }

  /**
   * The endpoint the call's last attempt was sent to, once the load balancer picked it
   * ({@link io.petrel.rpc.CallOptions#withEndpointListener}); null before, and for an in-process client.
   */
  public @Nullable Endpoint endpoint() {
    return endpoint;
  }

  /** An attempt of the call goes to {@code endpoint}: the peer from now on. */
  void endpoint(Endpoint endpoint) {
    this.endpoint = endpoint;
    String host = endpoint.host();
    setRemoteServiceAddress("petrel://" + (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + endpoint.port());
  }

  /** The call's status code name ({@code OK}, {@code UNAVAILABLE} ...); null until the call has ended. */
  public @Nullable String statusCode() {
    return statusCode;
  }

  void statusCode(String code) {
    this.statusCode = code;
  }

  Metadata propagatedMetadata() {
    Map<String, String> carrier = getCarrier();
    Metadata md = Metadata.EMPTY;
    if (carrier != null) {
      for (Map.Entry<String, String> e : carrier.entrySet()) {
        md = md.with(e.getKey(), e.getValue());
      }
    }
    return md;
  }
}
