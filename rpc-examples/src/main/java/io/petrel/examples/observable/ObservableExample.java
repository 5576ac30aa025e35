package io.petrel.examples.observable;

import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.petrel.rpc.AccessLogInterceptor;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Two chained services (Storefront calls Catalog) with a token check, request-id propagation, the access log,
 * and Micrometer metrics exported for Prometheus on http://127.0.0.1:PORT/metrics.
 *
 * <p>Run: {@code java -cp rpc-examples/target/rpc-examples.jar io.petrel.examples.observable.ObservableExample
 * [seconds-to-keep-serving]}. It makes a fixed number of calls, prints the receipts and the Petrel metrics
 * Prometheus would scrape, then (if asked) keeps the metrics endpoint up for the given number of seconds.
 */
public final class ObservableExample {
  static final String TOKEN = "demo-token";

  public static void main(String[] args) throws Exception {
    int linger = args.length > 0 ? Integer.parseInt(args[0]) : 0;
    System.out.println(run(20, linger));
  }

  /** Runs the example: {@code orders} orders, then the metrics text. Everything on 127.0.0.1. */
  static String run(int orders, int lingerSeconds) throws Exception {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    Map<String, Long> prices = Map.of("tea", 350L, "scone", 275L, "jam", 420L);

    RpcServer catalogServer = RpcServer.builder().bindAddress("127.0.0.1", 0).name("catalog")
        .meterRegistry(registry)
        .intercept(AuthInterceptors.requireToken(TOKEN), RequestIds.echo(), new AccessLogInterceptor())
        .addService(CatalogRpc.bind(item -> {
          Long p = prices.get(item);
          if (p == null) {
            throw Status.NOT_FOUND.withDescription("no item '" + item + "' in the catalog").asException();
          }
          return p;
        }))
        .build().start();
    RpcClient catalogClient = RpcClient.builder().address("127.0.0.1", catalogServer.port()).name("to-catalog")
        .meterRegistry(registry)
        .intercept(AuthInterceptors.sendToken(TOKEN), RequestIds.propagate())
        .build();
    Catalog catalog = CatalogRpc.stub(catalogClient);

    RpcServer storefrontServer = RpcServer.builder().bindAddress("127.0.0.1", 0).name("storefront")
        .meterRegistry(registry)
        .intercept(AuthInterceptors.requireToken(TOKEN), RequestIds.echo(), new AccessLogInterceptor())
        .addService(StorefrontRpc.bind((item, quantity) -> {
          long cents = catalog.priceOf(item) * quantity; // chained call: inherits this call's deadline
          return quantity + " x " + item + " = " + cents / 100 + "." + String.format("%02d", cents % 100);
        }))
        .build().start();
    RpcClient storefrontClient = RpcClient.builder().address("127.0.0.1", storefrontServer.port())
        .name("to-storefront").meterRegistry(registry)
        .intercept(AuthInterceptors.sendToken(TOKEN), RequestIds.propagate())
        .build();

    HttpServer http = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    http.createContext("/metrics", exchange -> {
      byte[] body = registry.scrape().getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().add("Content-Type", "text/plain; version=0.0.4");
      exchange.sendResponseHeaders(200, body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    });
    http.start();
    StringBuilder out = new StringBuilder();
    try {
      String[] items = {"tea", "scone", "jam", "caviar"};
      AtomicReference<Metadata> responseMd = new AtomicReference<>();
      for (int i = 0; i < orders; i++) {
        String item = items[i % items.length];
        try {
          String receipt = StorefrontRpc.stub(storefrontClient)
              .withOptions(CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(2))
                  .withMetadata(Metadata.of(RequestIds.KEY, "order-" + i))
                  .withResponseMetadataListener(responseMd::set))
              .order(item, 1 + i % 3);
          Metadata echoed = responseMd.get();
          out.append("order-").append(i).append(": ").append(receipt)
              .append("  (x-request-id echoed: ").append(echoed != null ? echoed.get(RequestIds.KEY) : null)
              .append(")\n");
        } catch (StatusException e) {
          out.append("order-").append(i).append(": failed ").append(e.getMessage()).append('\n');
        }
      }
      // A caller without the token is refused before any handler runs.
      RpcClient noToken = RpcClient.builder().address("127.0.0.1", storefrontServer.port()).build();
      try {
        StorefrontRpc.stub(noToken).order("tea", 1);
      } catch (StatusException e) {
        out.append("without a token: ").append(e.getMessage()).append('\n');
      } finally {
        noToken.close();
      }
      String url = "http://127.0.0.1:" + http.getAddress().getPort() + "/metrics";
      out.append("\nmetrics endpoint: ").append(url).append("\n");
      out.append(petrelLines(fetch(url)));
      if (lingerSeconds > 0) {
        System.out.println(out);
        out.setLength(0);
        System.out.println("serving metrics for " + lingerSeconds + " s at " + url);
        Thread.sleep(lingerSeconds * 1000L);
      }
    } finally {
      http.stop(0);
      storefrontClient.close();
      storefrontServer.close();
      catalogClient.close();
      catalogServer.close();
    }
    return out.toString();
  }

  private static String fetch(String url) throws IOException, InterruptedException {
    HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(url)).build(),
        HttpResponse.BodyHandlers.ofString());
    return r.body();
  }

  /** The call counts and a few gauges, as Prometheus shows them. */
  private static String petrelLines(String scrape) {
    StringBuilder b = new StringBuilder();
    for (String line : scrape.split("\n")) {
      if (line.startsWith("rpc_server_calls_seconds_count") || line.startsWith("rpc_client_calls_seconds_count")
          || line.startsWith("rpc_server_executor_rejected") || line.startsWith("rpc_server_connections{")
          || line.startsWith("rpc_client_calls_pending") || line.startsWith("rpc_server_request_size_bytes_sum")) {
        b.append(line).append('\n');
      }
    }
    return b.toString();
  }
}
