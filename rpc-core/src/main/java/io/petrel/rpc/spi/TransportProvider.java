package io.petrel.rpc.spi;


/**
 * A transport implementation, found with {@link java.util.ServiceLoader} through
 * {@code META-INF/services/io.petrel.rpc.spi.TransportProvider}. The one with the highest
 * {@link #priority()} wins unless the builder names one.
 */
public interface TransportProvider {
  /** A short name, e.g. {@code "netty"}, that builders can select with {@code transport(name)}. */
  String name();

  /** Higher wins when several are on the class path; below 0, the provider is used only when named. */
  int priority();

  /** The listening side of a server; the core's server drives it (see {@link ServerTransport}). */
  ServerTransport newServerTransport(ServerConfig config);

  /**
   * The transport side of a client; the core's client runs the calls and hands each attempt to it as a
   * {@link ClientStream}. {@code context} says what the transport may need to know of its client.
   */
  ClientTransport newClientTransport(ClientConfig config, ClientTransportContext context);
}
