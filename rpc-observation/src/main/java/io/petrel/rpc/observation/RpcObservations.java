package io.petrel.rpc.observation;

import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.petrel.rpc.Endpoint;
import io.petrel.rpc.StatusException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.jspecify.annotations.Nullable;

/**
 * Names and keys of Petrel's observations, their default conventions, and the meter filter that keeps a meter
 * observation handler from timing calls Petrel already times.
 *
 * <table>
 *   <caption>Observations</caption>
 *   <tr><th>name</th><th>low cardinality keys</th><th>high cardinality keys</th></tr>
 *   <tr><td>{@value #CLIENT_NAME}</td><td>rpc.system, rpc.service, rpc.method, rpc.petrel.status_code</td>
 *     <td>server.address (the client's target), rpc.petrel.peer.address and rpc.petrel.peer.port (the
 *     endpoint the call's last attempt went to, once picked)</td></tr>
 *   <tr><td>{@value #SERVER_NAME}</td><td>rpc.system, rpc.service, rpc.method, rpc.petrel.status_code</td>
 *     <td>client.address and client.port (the peer's IP and port; in-process, client.address alone:
 *     {@code inprocess:name#n})</td></tr>
 * </table>
 */
public final class RpcObservations {
  /** Name of the client's observation (and of the span, whose contextual name is {@code service/method}). */
  public static final String CLIENT_NAME = "petrel.rpc.client";
  /** Name of the server's observation. */
  public static final String SERVER_NAME = "petrel.rpc.server";

  private RpcObservations() {
  }

  /**
   * Denies the meters that a meter observation handler (for example Micrometer's
   * {@code DefaultMeterObservationHandler}, which Spring Boot installs) would make from Petrel's observations
   * ({@code petrel.rpc.client}, {@code petrel.rpc.server} and their {@code .active} long task timers). Petrel's
   * own meters ({@code rpc.client.calls}, {@code rpc.server.calls} ...) already time every call; with this filter
   * on the registry a call is timed once. Add it before any meter is registered:
   * {@code registry.config().meterFilter(RpcObservations.ignoreObservationMeters())}.
   */
  public static MeterFilter ignoreObservationMeters() {
    return MeterFilter.deny(id -> id.getName().equals(CLIENT_NAME) || id.getName().equals(SERVER_NAME)
        || id.getName().startsWith(CLIENT_NAME + ".") || id.getName().startsWith(SERVER_NAME + "."));
  }

  /**
   * {@code petrel://host:port} of a {@code host:port} target, which tracers read as the peer; else null (a
   * {@code scheme://} target, several addresses, or an in-process one such as {@code inprocess:name}).
   */
  static @Nullable String uriAddress(String target) {
    int colon = target.lastIndexOf(':');
    if (target.isEmpty() || target.contains("://") || target.contains(",") || colon <= 0
        || target.startsWith("inprocess:") || !isPort(target.substring(colon + 1))) {
      return null;
    }
    return "petrel://" + target;
  }

  private static boolean isPort(String s) {
    if (s.isEmpty() || s.length() > 5) {
      return false;
    }
    for (int i = 0; i < s.length(); i++) {
      if (s.charAt(i) < '0' || s.charAt(i) > '9') {
        return false;
      }
    }
    return Integer.parseInt(s) <= 65535;
  }

  static @Nullable String uriAddress(SocketAddress peer) {
    if (peer instanceof InetSocketAddress inet) {
      String host = inet.getAddress() != null ? inet.getAddress().getHostAddress() : inet.getHostString();
      return "petrel://" + (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + inet.getPort();
    }
    return null;
  }

  /** The status code of a call that ended with {@code failure} (null: OK), as the server answers it. */
  static String statusCode(@Nullable Throwable failure) {
    Throwable t = unwrap(failure);
    if (t == null) {
      return "OK";
    }
    return t instanceof StatusException se ? se.code().name() : "UNKNOWN";
  }

  /**
   * The status code of a server call whose handler ended with {@code failure}, as the server counts it in
   * {@code rpc.server.calls}: as {@link #statusCode}; CANCELLED for a handler's future cancelled because its call
   * was; and an answer given after the caller gave up ({@code gaveUp}, see
   * {@link io.petrel.rpc.ServerContext#cancellationCode()}) counts as that code, since nobody received it.
   */
  static String serverStatusCode(@Nullable Throwable failure, io.petrel.rpc.Status.@Nullable Code gaveUp) {
    if (gaveUp == null) {
      return statusCode(failure);
    }
    if (failure == null) {
      return gaveUp.name();
    }
    return unwrap(failure) instanceof CancellationException ? "CANCELLED" : statusCode(failure);
  }

  /**
   * The status code of a client call whose future ended with {@code failure}: as {@link #statusCode}, and CANCELLED
   * when the caller cancelled the future, as Petrel's own meters count it.
   */
  static String clientStatusCode(@Nullable Throwable failure) {
    return unwrap(failure) instanceof CancellationException ? "CANCELLED" : statusCode(failure);
  }

  static @Nullable Throwable unwrap(@Nullable Throwable failure) {
    Throwable t = failure;
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  /** The default client convention: name {@value #CLIENT_NAME}, contextual name {@code service/method}. */
  public static class DefaultClientConvention implements ObservationConvention<RpcClientObservationContext> {
    @Override
    public String getName() {
      return CLIENT_NAME;
    }

    @Override
    public String getContextualName(RpcClientObservationContext context) {
      return context.method().fullName();
    }

    @Override
    public KeyValues getLowCardinalityKeyValues(RpcClientObservationContext context) {
      String code = context.statusCode();
      return KeyValues.of(KeyValue.of("rpc.system", "petrel"),
          KeyValue.of("rpc.service", context.method().serviceName()),
          KeyValue.of("rpc.method", context.method().methodName()),
          KeyValue.of("rpc.petrel.status_code", code != null ? code : "UNKNOWN"));
    }

    @Override
    public KeyValues getHighCardinalityKeyValues(RpcClientObservationContext context) {
      KeyValues keys = context.target().isEmpty() ? KeyValues.empty()
          : KeyValues.of(KeyValue.of("server.address", context.target()));
      Endpoint peer = context.endpoint();
      return peer == null ? keys : keys.and(KeyValue.of("rpc.petrel.peer.address", peer.host()),
          KeyValue.of("rpc.petrel.peer.port", Integer.toString(peer.port())));
    }

    @Override
    public boolean supportsContext(Observation.Context context) {
      return context instanceof RpcClientObservationContext;
    }
  }

  /** The default server convention: name {@value #SERVER_NAME}, contextual name {@code service/method}. */
  public static class DefaultServerConvention implements ObservationConvention<RpcServerObservationContext> {
    @Override
    public String getName() {
      return SERVER_NAME;
    }

    @Override
    public String getContextualName(RpcServerObservationContext context) {
      return context.call().method().fullName();
    }

    @Override
    public KeyValues getLowCardinalityKeyValues(RpcServerObservationContext context) {
      String code = context.statusCode();
      return KeyValues.of(KeyValue.of("rpc.system", "petrel"),
          KeyValue.of("rpc.service", context.call().method().serviceName()),
          KeyValue.of("rpc.method", context.call().method().methodName()),
          KeyValue.of("rpc.petrel.status_code", code != null ? code : "UNKNOWN"));
    }

    @Override
    public KeyValues getHighCardinalityKeyValues(RpcServerObservationContext context) {
      SocketAddress peer = context.call().peer();
      if (peer instanceof InetSocketAddress inet) {
        // OpenTelemetry's client.address and client.port: the IP alone (not "/127.0.0.1:37712"), and the port.
        String host = inet.getAddress() != null ? inet.getAddress().getHostAddress() : inet.getHostString();
        return KeyValues.of(KeyValue.of("client.address", host),
            KeyValue.of("client.port", Integer.toString(inet.getPort())));
      }
      return KeyValues.of(KeyValue.of("client.address", String.valueOf(peer))); // in-process: inprocess:name#n
    }

    @Override
    public boolean supportsContext(Observation.Context context) {
      return context instanceof RpcServerObservationContext;
    }
  }
}
