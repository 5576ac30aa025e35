package io.petrel.rpc.benchmarks;

/** The systems measured side by side. Each one runs in the benchmark server on its own port. */
public enum Framework {
  /** Petrel with its default bounded business pool (like for like: gRPC-java's default executor). */
  PETREL("Petrel (business pool)"),
  /** Petrel running handlers on the event loop (like for like: gRPC-java with directExecutor). */
  PETREL_DIRECT("Petrel (direct)"),
  /** gRPC-java on grpc-netty with its default (cached thread pool) executor. */
  GRPC("gRPC-java (default executor)"),
  /** gRPC-java on grpc-netty with directExecutor on server and client. */
  GRPC_DIRECT("gRPC-java (directExecutor)"),
  /** A length-prefixed echo over plain Netty: the least work a framed request/response can do. */
  NETTY("raw Netty echo");

  private final String label;

  Framework(String label) {
    this.label = label;
  }

  /** The name used in reports. */
  public String label() {
    return label;
  }

  /** The key used on the control channel ("petrel_direct"). */
  public String key() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }
}
