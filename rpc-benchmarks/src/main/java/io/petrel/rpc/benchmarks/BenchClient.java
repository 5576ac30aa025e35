package io.petrel.rpc.benchmarks;

import io.petrel.rpc.transport.netty.IoMode;
import java.util.concurrent.CompletableFuture;

/**
 * The client side of one framework and one payload, over {@code connections} connections. Thread-safe: all
 * JMH threads of a benchmark share one. Every reply is checked ({@link #verify}) so that a benchmark never
 * times errors.
 */
interface BenchClient extends AutoCloseable {

  /** One blocking call; returns the reply. */
  Object call() throws Exception;

  /** One call; the future completes with the reply. */
  CompletableFuture<?> callAsync();

  /** Throws if {@code reply} is not the answer the server must give. */
  void verify(Object reply);

  @Override
  void close();

  /** A connected client of {@code framework} at {@code endpoints}. */
  static BenchClient connect(Framework framework, Payload payload, Endpoints endpoints, int connections,
      IoMode io) throws Exception {
    int port = endpoints.port(framework);
    return switch (framework) {
      case PETREL, PETREL_DIRECT -> new PetrelBenchClient(endpoints.host(), port, payload, connections, io);
      case GRPC -> new GrpcBenchClient(endpoints.host(), port, payload, connections, io, false, null);
      case GRPC_DIRECT -> new GrpcBenchClient(endpoints.host(), port, payload, connections, io, true, null);
      case NETTY -> new RawNettyClient(endpoints.host(), port, payload, connections, io);
      // TLS: trust only the CA the server made at start (from its control port), host name verified.
      case PETREL_TLS -> PetrelBenchClient.tls(endpoints.host(), port, payload, connections, io,
          endpoints.caCertificate());
      case GRPC_TLS -> new GrpcBenchClient(endpoints.host(), port, payload, connections, io, false,
          GrpcPeer.clientTls(endpoints.caCertificate()));
    };
  }

  /**
   * Checks a reply of the Petrel or gRPC-java client: a BenchmarkMessage whose field1 is "OK", or an echoed
   * opaque body of {@code bodyLength} bytes.
   */
  static void verifyReply(Payload payload, int bodyLength, Object reply) {
    if (payload == Payload.MESSAGE) {
      if (!Messages.isOk((io.petrel.rpc.benchmarks.proto.BenchmarkMessage) reply)) {
        throw new IllegalStateException("reply field1 is not OK: "
            + ((io.petrel.rpc.benchmarks.proto.BenchmarkMessage) reply).getField1());
      }
    } else {
      verifyLength(bodyLength, reply);
    }
  }

  /** Checks an echoed body by its length ({@code byte[]}, or the Integer length the raw Netty client gives). */
  static void verifyLength(int expected, Object reply) {
    int got = reply instanceof byte[] b ? b.length : (Integer) reply;
    if (got != expected) {
      throw new IllegalStateException("reply of " + got + " bytes, expected " + expected);
    }
  }
}
