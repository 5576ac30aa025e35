package io.petrel.rpc.benchmarks;

import io.petrel.rpc.CallOptions;
import io.petrel.rpc.transport.netty.NettyOptions;
import io.petrel.rpc.transport.netty.IoMode;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcClientBuilder;
import io.petrel.rpc.TlsConfig;
import io.petrel.rpc.benchmarks.proto.BenchmarkMessage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * Petrel through its generic client API with hand-written descriptors (what generated stubs call); plaintext,
 * or TLS trusting only the benchmark server's CA (hostname verification on).
 */
final class PetrelBenchClient implements BenchClient {
  private final RpcClient client;
  private final Payload payload;
  private final BenchmarkMessage message = Messages.request();
  private final byte[] body;
  /** The CA file a TLS client trusts (deleted when the client closes), or null. */
  private final @Nullable Path caFile;

  /** A plaintext client. */
  PetrelBenchClient(String host, int port, Payload payload, int connections, IoMode io) {
    this(host, port, payload, connections, io, null);
  }

  /** {@code caFile}: PEM of the only CA a TLS client trusts; null for plaintext. */
  private PetrelBenchClient(String host, int port, Payload payload, int connections, IoMode io, @Nullable Path caFile) {
    this.payload = payload;
    this.body = payload.body();
    this.caFile = caFile;
    RpcClientBuilder b = RpcClient.builder()
        .address(host, port)
        .connectionsPerEndpoint(connections)
        .option(NettyOptions.IO_MODE, io)
        .name("bench-petrel-client");
    if (caFile != null) {
      b.tls(tlsConfig(caFile));
    }
    RpcClient c = b.build();
    try {
      c.start();
    } catch (RuntimeException e) {
      c.shutdownNow(); // start() that fails leaves the client running (reconnecting): stop it
      throw e;
    }
    this.client = c;
  }

  /** A TLS client that trusts only {@code ca} (written to a temporary file, deleted when the client closes). */
  static PetrelBenchClient tls(String host, int port, Payload payload, int connections, IoMode io,
      X509Certificate ca) throws IOException {
    Path file = Files.createTempFile("petrel-bench-ca", ".pem");
    file.toFile().deleteOnExit();
    try {
      BenchCertificates.writePem(file, ca);
      return new PetrelBenchClient(host, port, payload, connections, io, file);
    } catch (IOException | RuntimeException e) {
      Files.deleteIfExists(file);
      throw e;
    }
  }

  /** The client's TLS settings: trust only the CA in {@code caFile}; hostname verification stays on. */
  static TlsConfig tlsConfig(Path caFile) {
    return TlsConfig.builder().trustCertificates(caFile).build();
  }

  /** True when the client was built with TLS. */
  boolean isSecure() {
    return client.isSecure();
  }

  @Override
  public Object call() {
    if (payload == Payload.MESSAGE) {
      return client.unaryCall(Messages.ECHO, message, CallOptions.DEFAULT);
    }
    return client.unaryCall(Messages.ECHO_BYTES, body, CallOptions.DEFAULT);
  }

  @Override
  public CompletableFuture<?> callAsync() {
    if (payload == Payload.MESSAGE) {
      return client.unaryCallAsync(Messages.ECHO, message, CallOptions.DEFAULT);
    }
    return client.unaryCallAsync(Messages.ECHO_BYTES, body, CallOptions.DEFAULT);
  }

  @Override
  public void verify(Object reply) {
    BenchClient.verifyReply(payload, body.length, reply);
  }

  @Override
  public void close() {
    try {
      client.close();
    } finally {
      if (caFile != null) {
        try {
          Files.deleteIfExists(caFile);
        } catch (IOException e) {
          System.err.println("cannot delete " + caFile + ": " + e);
        }
      }
    }
  }
}
