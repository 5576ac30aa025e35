package io.petrel.rpc.internal;

import io.petrel.rpc.CallOptions;
import io.petrel.rpc.Deadline;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.spi.ClientCall;
import io.petrel.rpc.spi.ClientConfig;
import io.petrel.rpc.spi.ClientTransport;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The client users hold, whatever the transport: the core's {@link RpcClient} runs every call and hands it to
 * the {@link ClientTransport} the builder made for it. Transports implement {@link ClientTransport}; none
 * subclasses {@link RpcClient}.
 */
public final class ClientChannel extends RpcClient {
  private final ClientTransport transport;

  /**
   * @param secure what {@link #isSecure()} says: TLS configured, or a transport whose calls never leave the
   *     process
   * @param transport makes the transport with this client's runtime (once, here)
   */
  public ClientChannel(ClientConfig config, boolean secure, Function<ClientRuntime, ClientTransport> transport) {
    super(config, secure);
    this.transport = transport.apply(runtime());
  }

  /** The transport carrying this client's calls (for its own tests). */
  public static ClientTransport transportOf(RpcClient client) {
    return ((ClientChannel) client).transport;
  }

  @Override
  public RpcClient start() {
    transport.connect();
    return this;
  }

  @Override
  protected <Resp> ClientCall<Resp> newCall(MethodDescriptor<?, Resp> method, @Nullable Deadline deadline,
      @Nullable Consumer<Metadata> responseMetadata, @Nullable Executor executor) {
    return transport.newCall(method, deadline, responseMetadata, executor);
  }

  @Override
  protected <Req> void startCall(ClientCall<?> call, MethodDescriptor<Req, ?> method, Req request,
      CallOptions options) throws Exception {
    transport.startCall(call, method, request, options);
  }

  @Override
  protected void terminate(Runnable done) {
    transport.terminate(done);
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
    return transport.toString();
  }
}
