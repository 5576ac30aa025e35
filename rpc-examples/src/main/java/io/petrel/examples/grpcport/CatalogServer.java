package io.petrel.examples.grpcport;

import io.petrel.rpc.RpcServer;
import io.petrel.rpc.TlsConfig;
import io.petrel.rpc.health.HealthService;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;

public final class CatalogServer {
  private CatalogServer() {}

  /** Was: NettyServerBuilder.forAddress(...).sslContext(...).intercept(...).addService(...).build().start(). */
  public static RpcServer start(String host, int port, TlsConfig tls, String apiKey, Catalog catalog,
      HealthService health) throws IOException {
    return RpcServer.builder()
        .bindAddress(host, port)
        .tls(tls)
        .intercept(new ApiKeyInterceptor(apiKey))
        .addService(CatalogRpc.bind(catalog))      // generated from Catalog
        .addService(health.definition())           // was: HealthStatusManager.getHealthService()
        .addLifecycleListener(health)              // SERVING once started, NOT_SERVING once shutdown() begins
        .shutdownGracePeriod(Duration.ofSeconds(20))
        .build()
        .start();
  }

  /** CatalogServer server.crt server.key API_KEY: serves on port 8443 until SIGTERM or Ctrl-C. */
  public static void main(String[] args) throws Exception {
    TlsConfig tls = TlsConfig.builder().keyPair(Path.of(args[0]), Path.of(args[1])).build();  // PKCS#8 key
    RpcServer server = start("0.0.0.0", 8443, tls, args[2], new CatalogService(), HealthService.create());
    // was: server.shutdown(); if (!server.awaitTermination(20, SECONDS)) server.shutdownNow();
    Runtime.getRuntime().addShutdownHook(new Thread(server::close));
    server.awaitTermination();   // was: server.awaitTermination() in blockUntilShutdown()
  }
}
