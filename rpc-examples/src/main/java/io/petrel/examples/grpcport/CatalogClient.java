package io.petrel.examples.grpcport;

import io.petrel.rpc.Metadata;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.TlsConfig;
import java.nio.file.Path;
import java.time.Duration;

public final class CatalogClient {
  private CatalogClient() {}

  /** Was: NettyChannelBuilder.forAddress(host, port).sslContext(GrpcSslContexts.forClient()...).build(). */
  public static RpcClient connect(String host, int port, TlsConfig tls) {
    return RpcClient.builder().address(host, port).tls(tls).build();
  }

  /** Was: CatalogGrpc.newBlockingStub(channel).withInterceptors(newAttachHeadersInterceptor(h)).withDeadlineAfter. */
  public static CatalogRpc.CatalogStub stub(RpcClient client, String apiKey) {
    return CatalogRpc.stub(client)
        .withMetadata(Metadata.of(ApiKeyInterceptor.KEY, apiKey))
        .withDeadline(Duration.ofSeconds(2));   // each call's own 2 s, from when it starts
  }

  /** CatalogClient ca.crt HOST PORT API_KEY SKU: prints the item, or the status. */
  public static void main(String[] args) {
    TlsConfig tls = TlsConfig.builder().trustCertificates(Path.of(args[0])).build();
    try (RpcClient client = connect(args[1], Integer.parseInt(args[2]), tls)) {
      client.start();   // connects (TCP, TLS) now, so that the call's 2 s are not spent on it
      Item item = stub(client, args[3]).getItem(GetItemRequest.newBuilder().setSku(args[4]).build());
      System.out.println(item.getName() + " costs " + item.getPriceCents() + " cents");
    } catch (StatusException e) {   // was: StatusRuntimeException; e.getStatus().getCode()
      System.out.println(e.code() + ": " + e.status().description());
    }
  }
}
