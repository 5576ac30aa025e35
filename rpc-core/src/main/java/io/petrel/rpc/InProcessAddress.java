package io.petrel.rpc;

import java.net.SocketAddress;
import java.util.Objects;

/**
 * The address of an in-process server ({@code RpcServer.builder().inProcess("orders")}): a name that clients of
 * the same JVM call with {@code RpcClient.builder().inProcess("orders")}. No socket, no port; printed as
 * {@code inprocess:orders}. {@link RpcServer#address()} returns it for an in-process server, and
 * {@link ServerContext#peer()} is one for calls that came in-process (naming the server and the client's
 * connection, e.g. {@code inprocess:orders#3}).
 */
public final class InProcessAddress extends SocketAddress {
  private static final long serialVersionUID = 1L;

  private final String name;

  public InProcessAddress(String name) {
    this.name = Objects.requireNonNull(name, "name");
  }

  /** The name servers register and clients look up. */
  public String name() {
    return name;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof InProcessAddress a && a.name.equals(name);
  }

  @Override
  public int hashCode() {
    return name.hashCode();
  }

  @Override
  public String toString() {
    return "inprocess:" + name;
  }
}
