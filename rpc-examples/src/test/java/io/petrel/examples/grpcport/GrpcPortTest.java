package io.petrel.examples.grpcport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.petrel.rpc.Metadata;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.TlsConfig;
import io.petrel.rpc.health.HealthService;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/migrating-from-grpc.md's worked port: the page's blocks are this package's files word for word, and what
 * the page says of them holds over TLS on loopback (a self-signed certificate made by the JDK's keytool).
 */
class GrpcPortTest {
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final Path SOURCES = ROOT.resolve("rpc-examples/src/main/java/io/petrel/examples/grpcport");
  private static final char[] PASSWORD = "changeit".toCharArray();
  private static final String API_KEY = "s3cret";

  @TempDir
  static Path dir;
  private static Path keyStore;
  private static Path certificatePem;

  private Recording catalog;
  private HealthService health;
  private RpcServer server;
  private RpcClient client;

  /** The service with what the tests need: executions counted, UNAVAILABLE on demand, a call that waits. */
  private static final class Recording extends CatalogService {
    final AtomicInteger gets = new AtomicInteger();
    final AtomicInteger puts = new AtomicInteger();
    final AtomicInteger failNext = new AtomicInteger();
    final CountDownLatch slowStarted = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);

    private void maybeFail() {
      if (failNext.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
        throw Status.UNAVAILABLE.withDescription("the database is away").asException();
      }
    }

    @Override
    public Item getItem(GetItemRequest request) {
      gets.incrementAndGet();
      maybeFail();
      if (request.getSku().startsWith("slow")) {
        ServerContext.current().onCancel(release::countDown);
        slowStarted.countDown();
        try {
          release.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return super.getItem(request);
    }

    @Override
    public PutItemReply putItem(PutItemRequest request) {
      puts.incrementAndGet();
      maybeFail();
      return super.putItem(request);
    }
  }

  private static void keytool(String... args) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("keytool ended").isTrue();
    assertThat(p.exitValue()).as("keytool %s: %s", args[0], output).isZero();
  }

  @BeforeAll
  static void selfSignedCertificate() throws Exception {
    keyStore = dir.resolve("server.p12");
    certificatePem = dir.resolve("server.crt");
    keytool("-genkeypair", "-alias", "server", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=localhost",
        "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-validity", "2", "-storetype", "PKCS12",
        "-keystore", keyStore.toString(), "-storepass", "changeit", "-keypass", "changeit");
    keytool("-exportcert", "-rfc", "-alias", "server", "-keystore", keyStore.toString(), "-storepass", "changeit",
        "-file", certificatePem.toString());
  }

  @BeforeEach
  void start() throws Exception {
    catalog = new Recording();
    health = HealthService.create();
    server = CatalogServer.start("127.0.0.1", 0, TlsConfig.builder().keyStore(keyStore, PASSWORD).build(), API_KEY,
        catalog, health);
    client = CatalogClient.connect("127.0.0.1", server.port(),
        TlsConfig.builder().trustCertificates(certificatePem).build());
    CatalogClient.stub(client, API_KEY).putItem(PutItemRequest.newBuilder()
        .setItem(Item.newBuilder().setSku("a1").setName("anchor").setPriceCents(1999)).build());
    catalog.puts.set(0);
  }

  @AfterEach
  void stop() {
    client.close();
    server.close();
  }

  private static GetItemRequest get(String sku) {
    return GetItemRequest.newBuilder().setSku(sku).build();
  }

  /** The page's ```java blocks that are files of this package. */
  private static List<String> pageBlocks() throws Exception {
    List<String> lines = Files.readAllLines(ROOT.resolve("docs/migrating-from-grpc.md"), StandardCharsets.UTF_8);
    List<String> blocks = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).trim().equals("```java")) {
        StringBuilder b = new StringBuilder();
        for (i++; i < lines.size() && !lines.get(i).trim().equals("```"); i++) {
          b.append(lines.get(i)).append('\n');
        }
        if (b.toString().startsWith("package io.petrel.examples.grpcport;")) {
          blocks.add(b.toString());
        }
      }
    }
    return blocks;
  }

  private static String source(String name) throws Exception {
    return Files.readString(SOURCES.resolve(name), StandardCharsets.UTF_8).replace("\r\n", "\n");
  }

  @Test
  void thePageShowsTheseFilesAsTheyAre() throws Exception {
    assertThat(pageBlocks()).containsExactly(source("Catalog.java"), source("CatalogService.java"),
        source("ApiKeyInterceptor.java"), source("CatalogServer.java"), source("CatalogClient.java"));
    assertThat(Files.readString(ROOT.resolve("docs/migrating-from-grpc.md"), StandardCharsets.UTF_8))
        .contains(Files.readString(ROOT.resolve("rpc-examples/src/main/protobuf/catalog.proto"),
            StandardCharsets.UTF_8));
  }

  @Test
  void theClientProgramPrintsTheItemOverTls() throws Exception {
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    PrintStream original = System.out;
    System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
    try {
      CatalogClient.main(new String[] {certificatePem.toString(), "127.0.0.1", String.valueOf(server.port()),
          API_KEY, "a1"});
      CatalogClient.main(new String[] {certificatePem.toString(), "127.0.0.1", String.valueOf(server.port()),
          API_KEY, "b2"});
      CatalogClient.main(new String[] {certificatePem.toString(), "127.0.0.1", String.valueOf(server.port()),
          "wrong", "a1"});
    } finally {
      System.setOut(original);
    }
    assertThat(captured.toString(StandardCharsets.UTF_8).lines()).containsSubsequence("anchor costs 1999 cents",
        "NOT_FOUND: no item b2", "UNAUTHENTICATED: missing or wrong x-api-key");
    assertThat(client.isSecure()).isTrue();
  }

  @Test
  void theInterceptorRefusesACallWithoutTheKeyButLetsHealthChecksThrough() throws Exception {
    assertThatThrownBy(() -> CatalogRpc.stub(client).getItem(get("a1"))).isInstanceOfSatisfying(
        StatusException.class, e -> assertThat(e.code()).isEqualTo(Status.Code.UNAUTHENTICATED));
    assertThat(catalog.gets).hasValue(0);
    assertThat(HealthService.check(client, "", Duration.ofSeconds(2)))
        .isEqualTo(HealthService.ServingStatus.SERVING);
    assertThat(HealthService.check(client, Catalog.class.getAnnotation(io.petrel.rpc.RpcService.class).value(),
        Duration.ofSeconds(2))).isEqualTo(HealthService.ServingStatus.SERVING);
    assertThat(HealthService.check(client, "grpc.health.v1.Health", Duration.ofSeconds(2)))
        .isEqualTo(HealthService.ServingStatus.SERVICE_UNKNOWN);
    assertThatThrownBy(() -> Metadata.of("X-Api-Key", API_KEY)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void theDeadlineEndsTheCallAndCancelsTheHandler() throws Exception {
    assertThatThrownBy(() -> CatalogClient.stub(client, API_KEY).withDeadline(Duration.ofMillis(300))
        .getItem(get("slow-a1"))).isInstanceOfSatisfying(StatusException.class,
            e -> assertThat(e.code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));
    assertThat(catalog.release.await(5, TimeUnit.SECONDS)).as("the handler's onCancel listener ran").isTrue();
  }

  @Test
  void anIdempotentMethodIsRetriedAfterUnavailableAndAWriteIsNot() {
    catalog.failNext.set(1);
    assertThat(CatalogClient.stub(client, API_KEY).getItem(get("a1")).getName()).isEqualTo("anchor");
    assertThat(catalog.gets).as("one failed attempt, one retry").hasValue(2);

    catalog.failNext.set(1);
    PutItemRequest put = PutItemRequest.newBuilder().setItem(Item.newBuilder().setSku("b2").setName("buoy")).build();
    assertThatThrownBy(() -> CatalogClient.stub(client, API_KEY).putItem(put)).isInstanceOfSatisfying(
        StatusException.class, e -> assertThat(e.code()).isEqualTo(Status.Code.UNAVAILABLE));
    assertThat(catalog.puts).as("a method not marked idempotent runs once").hasValue(1);

    catalog.failNext.set(5);
    assertThatThrownBy(() -> CatalogClient.stub(client, API_KEY).getItem(get("a1"))).isInstanceOfSatisfying(
        StatusException.class, e -> assertThat(e.code()).isEqualTo(Status.Code.UNAVAILABLE));
    assertThat(catalog.gets).as("maxRetries 2: three attempts").hasValue(2 + 3);
  }

  @Test
  void aGracefulShutdownFinishesTheCallInFlightAndRefusesNewOnes() throws Exception {
    CompletableFuture<Item> inFlight = CatalogRpc.asyncStub(client)
        .withMetadata(Metadata.of(ApiKeyInterceptor.KEY, API_KEY))
        .withDeadline(Duration.ofSeconds(10))
        .getItem(get("slow-a1"));
    assertThat(catalog.slowStarted.await(10, TimeUnit.SECONDS)).isTrue();
    CatalogClient.stub(client, API_KEY).putItem(PutItemRequest.newBuilder()
        .setItem(Item.newBuilder().setSku("slow-a1").setName("slow anchor")).build());
    server.shutdown();
    assertThat(health.status("")).isEqualTo(HealthService.ServingStatus.NOT_SERVING);
    assertThatThrownBy(() -> CatalogClient.stub(client, API_KEY).getItem(get("a1"))).isInstanceOfSatisfying(
        StatusException.class, e -> assertThat(e.code()).isEqualTo(Status.Code.UNAVAILABLE));
    catalog.release.countDown();
    assertThat(inFlight.get(10, TimeUnit.SECONDS).getName()).isEqualTo("slow anchor");
    assertThat(server.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }
}
