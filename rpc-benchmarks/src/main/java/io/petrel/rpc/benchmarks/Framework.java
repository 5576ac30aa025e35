package io.petrel.rpc.benchmarks;

/**
 * The systems measured side by side. Each one runs in the benchmark server on its own port (control port + 1 +
 * ordinal: new ones go at the end, so that the ports of the others stay where they are).
 */
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
  NETTY("raw Netty echo"),
  /** {@link #PETREL} over TLS 1.3 (OpenSSL/BoringSSL through netty-tcnative); like for like: {@link #GRPC_TLS}. */
  PETREL_TLS("Petrel (business pool, TLS)"),
  /** {@link #GRPC} over TLS 1.3 (the BoringSSL that grpc-netty-shaded bundles). */
  GRPC_TLS("gRPC-java (default executor, TLS)");

  private final String label;

  Framework(String label) {
    this.label = label;
  }

  /** The name used in reports. */
  public String label() {
    return label;
  }

  /** True for the frameworks served over TLS. */
  public boolean tls() {
    return this == PETREL_TLS || this == GRPC_TLS;
  }

  /** The key used on the control channel ("petrel_direct"). */
  public String key() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }
}
