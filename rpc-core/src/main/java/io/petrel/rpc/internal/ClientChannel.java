package io.petrel.rpc.internal;

import io.petrel.rpc.spi.RateLimitedLog;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.Deadline;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.spi.ClientCall;
import io.petrel.rpc.spi.ClientConfig;
import io.petrel.rpc.spi.ClientSubchannel;
import io.petrel.rpc.spi.ClientTransport;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.LoggerFactory;

/**
 * The client users hold, whatever the transport: the core's {@link RpcClient} runs every call, and this channel
 * owns the endpoints ({@link ClientEndpoints}: the resolver, one subchannel per endpoint made by the transport,
 * the load balancer) and picks one per attempt before it hands the attempt to the {@link ClientTransport} the
 * builder made for it. Transports implement {@link ClientTransport}; none subclasses {@link RpcClient}.
 */
public final class ClientChannel extends RpcClient {
  private final ClientTransport transport;
  /** The endpoints and their subchannels; null for a transport without endpoints (in-process). */
  private final @Nullable ClientEndpoints<ClientSubchannel> endpoints;

  /**
   * @param secure what {@link #isSecure()} says: TLS configured, or a transport whose calls never leave the
   *     process
   * @param transport makes the transport with this client's runtime (once, here)
   */
  public ClientChannel(ClientConfig config, boolean secure, Function<ClientRuntime, ClientTransport> transport) {
    super(config, secure);
    ClientTransport t = transport.apply(runtime());
    this.transport = t;
    if (config.resolver() != null) {
      ClientEndpoints<ClientSubchannel> e = new ClientEndpoints<>(config, t::newSubchannel,
          new RateLimitedLog(LoggerFactory.getLogger(ClientEndpoints.class)));
      this.endpoints = e;
      e.start(); // a static resolver answers at once, on this thread
    } else {
      this.endpoints = null;
    }
  }

  /** The transport carrying this client's calls (for its own tests). */
  public static ClientTransport transportOf(RpcClient client) {
    return ((ClientChannel) client).transport;
  }

  /** The client's endpoints, or null for a transport without endpoints (tests, meters). */
  public static @Nullable ClientEndpoints<ClientSubchannel> endpointsOf(RpcClient client) {
    return ((ClientChannel) client).endpoints;
  }

  @Override
  public RpcClient start() {
    ClientEndpoints<ClientSubchannel> e = endpoints;
    if (e == null) {
      transport.connect(List.of());
      return this;
    }
    List<ClientSubchannel> subs = e.subchannels();
    if (subs.isEmpty()) {
      throw e.noEndpoint("").asException();
    }
    transport.connect(subs);
    return this;
  }

  @Override
  protected <Resp> ClientCall<Resp> newCall(MethodDescriptor<?, Resp> method, @Nullable Deadline deadline,
      @Nullable Consumer<Metadata> responseMetadata, @Nullable Executor executor) {
    return transport.newCall(method, deadline, responseMetadata, executor);
  }

  /** Picks the endpoint of this attempt (another than a failed attempt's when there is one) and sends it there. */
  @Override
  protected <Req> void startCall(ClientCall<?> call, MethodDescriptor<Req, ?> method, Req request,
      CallOptions options) throws Exception {
    ClientEndpoints<ClientSubchannel> e = endpoints;
    if (e == null) {
      transport.startCall(call, null, method, request, options);
      return;
    }
    ClientSubchannel sub = e.pick(call, call.picked());
    if (sub == null) {
      call.fail(e.noPick(call, "; " + method.fullName() + " not sent"));
      return;
    }
    call.picked(sub);
    transport.startCall(call, sub, method, request, options);
  }

  /** Closes every subchannel (their calls in flight fail with UNAVAILABLE), then the transport. */
  @Override
  protected void terminate(Runnable done) {
    ClientEndpoints<ClientSubchannel> e = endpoints;
    if (e == null) {
      transport.terminate(done);
      return;
    }
    e.shutdown().whenComplete((v, t) -> transport.terminate(done));
  }

  @Override
  protected boolean isTransportThread() {
    return transport.isTransportThread();
  }

  @Override
  public void reloadTls() throws java.io.IOException {
    transport.reloadTls();
  }

  @Override
  public String toString() {
    ClientEndpoints<ClientSubchannel> e = endpoints;
    return transport + (e == null ? "" : ", subchannels=" + e.subchannels());
  }
}
