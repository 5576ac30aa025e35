package io.petrel.rpc.transport.netty;

import static io.petrel.rpc.testing.CallFailures.failureOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import ch.qos.logback.classic.Level;
import com.google.protobuf.StringValue;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslProvider;
import io.petrel.rpc.BearerTokenClientInterceptor;
import io.petrel.rpc.BearerTokenServerInterceptor;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.RpcServerBuilder;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.ServerInterceptor;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.TlsConfig;
import io.petrel.rpc.marshal.ProtobufMarshaller;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.KeyStore;
import java.security.Principal;
import java.security.Security;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509ExtendedTrustManager;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * TLS and mutual TLS, handshake failures and what the caller is told, the handshake timeout, certificate reload
 * and bearer tokens, over real sockets on 127.0.0.1 with certificates made for the test (TestCertificates).
 * Tests taking a provider run once with OpenSSL (netty-tcnative, on the test class path) and once with the JDK.
 */
class TlsTest extends TransportFixture {
  private static final char[] PASSWORD = "changeit".toCharArray();
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final String KEY_MANAGER_ALGORITHM = "ssl.KeyManagerFactory.algorithm";

  /** "subject=&lt;client certificate subject or -&gt;, principal=&lt;name or -&gt;", as the server sees the caller. */
  static final MethodDescriptor<StringValue, StringValue> WHO = MethodDescriptor.<StringValue, StringValue>newBuilder()
      .serviceName("test.Tls").methodName("who")
      .requestMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
      .responseMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
      .build();

  @TempDir
  static Path dir;
  static TestCertificates.Authority ca;
  static TestCertificates.Authority ca2;
  static Path caPem;
  static Path ca2Pem;
  /** Both CAs in one PEM file. */
  static Path bothCasPem;
  static TestCertificates.Issued serverCert;
  static TestCertificates.Issued clientCert;
  static TestCertificates.PemFiles server;
  static TestCertificates.PemFiles client;
  static TestCertificates.PemFiles expired;
  static TestCertificates.PemFiles wrongHost;
  static TestCertificates.PemFiles untrusted;
  static TestCertificates.Issued serverBCert;
  static TestCertificates.PemFiles serverB;
  static TestCertificates.PemFiles clientBob;

  /** Runs of {@link #WHO}'s handler. */
  final AtomicInteger whoRuns = new AtomicInteger();

  @BeforeAll
  static void makeCertificates() throws Exception {
    ca = TestCertificates.Authority.create("Petrel Test CA");
    ca2 = TestCertificates.Authority.create("Petrel Test CA 2");
    TestCertificates.Authority other = TestCertificates.Authority.create("Someone Else's CA");
    caPem = ca.write(dir.resolve("ca.pem"));
    ca2Pem = ca2.write(dir.resolve("ca2.pem"));
    bothCasPem = dir.resolve("both-cas.pem");
    TestCertificates.writeCertificates(bothCasPem, ca.certificate, ca2.certificate);
    serverCert = ca.issue("server", "localhost", "127.0.0.1");
    server = serverCert.written(dir, "server");
    clientCert = ca.issue("client-alice");
    client = clientCert.written(dir, "client");
    Instant now = Instant.now();
    expired = ca.issue("expired", now.minus(Duration.ofDays(30)), now.minus(Duration.ofDays(1)), "localhost",
        "127.0.0.1").written(dir, "expired");
    wrongHost = ca.issue("wrong-host", "wrong.example.com").written(dir, "wrong-host");
    untrusted = other.issue("untrusted", "localhost", "127.0.0.1").written(dir, "untrusted");
    serverBCert = ca2.issue("server-b", "localhost", "127.0.0.1");
    serverB = serverBCert.written(dir, "server-b");
    clientBob = ca2.issue("client-bob").written(dir, "client-bob");
  }

  @AfterEach
  void defaultProvider() {
    System.clearProperty(TlsContexts.PROVIDER_PROPERTY);
  }

  private static void use(String provider) {
    System.setProperty(TlsContexts.PROVIDER_PROPERTY, provider);
  }

  private ServiceDefinition tlsService() {
    return ServiceDefinition.builder("test.Tls")
        .unary(WHO, req -> {
          whoRuns.incrementAndGet();
          ServerContext ctx = ServerContext.current();
          List<X509Certificate> certs = ctx.peerCertificates();
          Principal p = ctx.principal();
          return StringValue.of("subject=" + (certs.isEmpty() ? "-" : certs.get(0).getSubjectX500Principal().getName())
              + ", principal=" + (p == null ? "-" : p.getName()));
        })
        .build();
  }

  private RpcServer tlsServer(TlsConfig tls) throws Exception {
    return tlsServer(tls, b -> b);
  }

  private RpcServer tlsServer(TlsConfig tls, UnaryOperator<RpcServerBuilder> more) throws Exception {
    return startServer(b -> more.apply(b.tls(tls).addService(tlsService())));
  }

  private RpcClient tlsClient(int port, TlsConfig tls) {
    return client(port, b -> b.tls(tls));
  }

  private static TlsConfig serverTls(TestCertificates.PemFiles f) {
    return TlsConfig.builder().keyPair(f.certificate(), f.key()).build();
  }

  private static TlsConfig trustingCa() {
    return TlsConfig.builder().trustCertificates(caPem).build();
  }

  private static TlsConfig mutualServer() {
    return TlsConfig.builder().keyPair(server.certificate(), server.key()).trustCertificates(caPem)
        .clientAuth(TlsConfig.ClientAuth.REQUIRE).build();
  }

  private static TlsConfig mutualClient() {
    return TlsConfig.builder().keyPair(client.certificate(), client.key()).trustCertificates(caPem).build();
  }

  private static StatusException callFails(RpcClient c) {
    return failureOf(() -> c.unaryCall(TestService.ECHO, StringValue.of("x")));
  }

  private static String who(RpcClient c) {
    return c.unaryCall(WHO, StringValue.of("")).getValue();
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"openssl", "jdk"})
  void callsRoundTripOverTlsSyncAsyncOnewayAndWithMetadata(String provider) throws Exception {
    use(provider);
    assertThat(TlsContexts.provider()).as("OpenSSL should load here: " + OpenSsl.unavailabilityCause())
        .isEqualTo(provider.equals("jdk") ? SslProvider.JDK : SslProvider.OPENSSL);
    System.out.println("TLS provider under test: " + TlsContexts.describe(TlsContexts.provider()));
    RpcServer srv = tlsServer(serverTls(server));
    RpcClient c = tlsClient(srv.port(), trustingCa());
    assertThat(c.isSecure()).isTrue();

    assertThat(c.unaryCall(TestService.ECHO, StringValue.of("hello")).getValue()).isEqualTo("hello");
    assertThat(c.unaryCallAsync(TestService.ECHO, StringValue.of("async"), CallOptions.DEFAULT)
        .get(10, TimeUnit.SECONDS).getValue()).isEqualTo("async");
    assertThat(c.unaryCallAsync(TestService.ASYNC_ECHO, StringValue.of("a"), CallOptions.DEFAULT)
        .get(10, TimeUnit.SECONDS).getValue()).isEqualTo("async:a");
    assertThat(c.unaryCall(TestService.META, StringValue.of(""),
        CallOptions.DEFAULT.withMetadata(Metadata.of("x-test", "over tls"))).getValue()).isEqualTo("over tls");
    c.oneway(TestService.LOG, StringValue.of("logged over tls"), CallOptions.DEFAULT).get(10, TimeUnit.SECONDS);
    assertThat(service.logged.poll(10, TimeUnit.SECONDS)).isEqualTo("logged over tls");
    byte[] big = new byte[3 << 20]; // many TLS records each way
    ThreadLocalRandom.current().nextBytes(big);
    assertThat(c.unaryCall(TestService.BYTES, big)).isEqualTo(big);
    // Server TLS only: the server sees no client certificate and no principal.
    assertThat(who(c)).isEqualTo("subject=-, principal=-");
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"openssl", "jdk"})
  void mutualTlsShowsTheClientCertificateToHandlersAndInterceptors(String provider) throws Exception {
    use(provider);
    AtomicReference<String> seenByInterceptor = new AtomicReference<>();
    ServerInterceptor peek = new ServerInterceptor() {
      @Override
      public <Req, Resp> CompletionStage<Resp> intercept(Chain<Req, Resp> chain) throws Exception {
        seenByInterceptor.set(chain.context().peerCertificates().get(0).getSubjectX500Principal().getName());
        return chain.proceed();
      }
    };
    RpcServer srv = tlsServer(mutualServer(), b -> b.intercept(peek));
    RpcClient c = tlsClient(srv.port(), mutualClient());
    assertThat(who(c)).isEqualTo("subject=CN=client-alice, principal=CN=client-alice");
    assertThat(seenByInterceptor.get()).isEqualTo("CN=client-alice");
    assertThat(c.unaryCallAsync(TestService.ECHO, StringValue.of("m"), CallOptions.DEFAULT).get(10, TimeUnit.SECONDS)
        .getValue()).isEqualTo("m");
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"openssl", "jdk"})
  void mutualTlsWithKeyStoresAndTrustStores(String provider) throws Exception {
    use(provider);
    Path serverP12 = dir.resolve("server-" + provider + ".p12");
    try (OutputStream out = Files.newOutputStream(serverP12)) {
      serverCert.keyStore(PASSWORD).store(out, PASSWORD);
    }
    KeyStore trust = ca.trustStore();
    RpcServer srv = tlsServer(TlsConfig.builder().keyStore(serverP12, PASSWORD).trustStore(trust)
        .clientAuth(TlsConfig.ClientAuth.REQUIRE).build());
    RpcClient c = tlsClient(srv.port(), TlsConfig.builder().keyStore(clientCert.keyStore(PASSWORD), PASSWORD)
        .trustStore(trust).build());
    assertThat(who(c)).isEqualTo("subject=CN=client-alice, principal=CN=client-alice");
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"openssl", "jdk"})
  void anUntrustedServerCertificateFailsTheCallWithUnavailableSayingSo(String provider) throws Exception {
    use(provider);
    try (LogCapture serverLog = new LogCapture(RpcServer.class)) {
      RpcServer srv = tlsServer(serverTls(untrusted));
      RpcClient c = tlsClient(srv.port(), trustingCa());
      StatusException e = callFails(c);
      assertThat(e.status().code()).isEqualTo(Status.Code.UNAVAILABLE);
      assertThat(e.status().description()).contains("cannot connect to 127.0.0.1:" + srv.port(),
          "TLS handshake failed", "the server's certificate is not trusted", "trustCertificates");
      // The server logs one line: the client refused its certificate (a JDK client says so in its alert, an
      // OpenSSL client sends internal_error).
      assertThat(serverLog.await(Level.WARN, WAIT, "TLS handshake with", "failed, closing the connection"))
          .containsAnyOf("the client refused the server's certificate", "the client aborted the handshake");
    }
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"openssl", "jdk"})
  void aCertificateForAnotherHostFailsWithUnavailableNamingTheHost(String provider) throws Exception {
    use(provider);
    RpcServer srv = tlsServer(serverTls(wrongHost));
    StatusException e = callFails(tlsClient(srv.port(), trustingCa()));
    assertThat(e.status().code()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(e.status().description()).contains("TLS handshake failed",
        "the server's certificate does not match the host name '127.0.0.1'");
    // Switched off explicitly, the same certificate is accepted (it is still trusted).
    RpcClient lax = tlsClient(srv.port(), TlsConfig.builder().trustCertificates(caPem)
        .insecureSkipHostnameVerification().build());
    assertThat(lax.unaryCall(TestService.ECHO, StringValue.of("lax")).getValue()).isEqualTo("lax");
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"openssl", "jdk"})
  void aServerNameIsCheckedInPlaceOfTheHostTheClientConnectsTo(String provider) throws Exception {
    use(provider);
    // A server reached at 127.0.0.1 whose certificate names only wrong.example.com (as a pod reached by its IP
    // with a certificate for its service's name).
    RpcServer srv = tlsServer(serverTls(wrongHost));
    RpcClient named = tlsClient(srv.port(), TlsConfig.builder().trustCertificates(caPem)
        .serverName("wrong.example.com").build());
    assertThat(named.unaryCall(TestService.ECHO, StringValue.of("named")).getValue()).isEqualTo("named");
    // The name is still checked: another one fails, naming the option.
    StatusException e = callFails(tlsClient(srv.port(), TlsConfig.builder().trustCertificates(caPem)
        .serverName("other.example.com").build()));
    assertThat(e.status().code()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(e.status().description()).contains("TLS handshake failed",
        "does not match the name 'other.example.com' the client expects (TlsConfig serverName)");
    // And a server whose certificate names the host but not the expected name is refused too.
    RpcServer right = tlsServer(serverTls(server));
    StatusException e2 = callFails(tlsClient(right.port(), TlsConfig.builder().trustCertificates(caPem)
        .serverName("wrong.example.com").build()));
    assertThat(e2.status().description()).contains("does not match the name 'wrong.example.com'");
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"openssl", "jdk"})
  void skippingHostnameVerificationStillRequiresATrustedCertificate(String provider) throws Exception {
    use(provider);
    RpcServer srv = tlsServer(serverTls(untrusted));
    StatusException e = callFails(tlsClient(srv.port(), TlsConfig.builder().trustCertificates(caPem)
        .insecureSkipHostnameVerification().build()));
    assertThat(e.status().code()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(e.status().description()).contains("not trusted");
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"openssl", "jdk"})
  void anExpiredServerCertificateFailsWithUnavailableSayingItExpired(String provider) throws Exception {
    use(provider);
    RpcServer srv = tlsServer(serverTls(expired));
    StatusException e = callFails(tlsClient(srv.port(), trustingCa()));
    assertThat(e.status().code()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(e.status().description()).contains("TLS handshake failed", "the server's certificate has expired");
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"openssl", "jdk"})
  void aClientWithoutCertificateIsRefusedAndTheServerGoesOnServingOthers(String provider) throws Exception {
    use(provider);
    try (LogCapture serverLog = new LogCapture(RpcServer.class)) {
      RpcServer srv = tlsServer(mutualServer());
      RpcClient anonymous = tlsClient(srv.port(), trustingCa());
      StatusException e = callFails(anonymous);
      assertThat(e.status().code()).isEqualTo(Status.Code.UNAVAILABLE);
      assertThat(e.status().description()).contains("the server requires a client certificate and the client"
          + " sent none");
      assertThat(serverLog.await(Level.WARN, WAIT, "TLS handshake with", "failed, closing the connection"))
          .contains("the client sent no certificate and the server requires one");
      RpcClient alice = tlsClient(srv.port(), mutualClient());
      assertThat(who(alice)).startsWith("subject=CN=client-alice");
      assertThat(whoRuns).hasValue(1);
    }
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"openssl", "jdk"})
  void clientCertificatesFromAnotherCaOrExpiredAreRefused(String provider) throws Exception {
    use(provider);
    try (LogCapture serverLog = new LogCapture(RpcServer.class)) {
      RpcServer srv = tlsServer(mutualServer());
      // The server names the CAs it trusts; a client whose certificate is from another CA sends none.
      RpcClient stranger = tlsClient(srv.port(), TlsConfig.builder().keyPair(untrusted.certificate(), untrusted.key())
          .trustCertificates(caPem).build());
      StatusException e = callFails(stranger);
      assertThat(e.status().code()).isEqualTo(Status.Code.UNAVAILABLE);
      assertThat(e.status().description()).contains("the server requires a client certificate issued by a CA it"
          + " trusts, and the client's is not");
      assertThat(serverLog.await(Level.WARN, WAIT, "TLS handshake with", "failed, closing the connection"))
          .contains("the client sent no certificate");
      // A certificate from the right CA but expired is sent, and refused.
      RpcClient stale = tlsClient(srv.port(), TlsConfig.builder().keyPair(expired.certificate(), expired.key())
          .trustCertificates(caPem).build());
      StatusException old = callFails(stale);
      assertThat(old.status().code()).isEqualTo(Status.Code.UNAVAILABLE);
      assertThat(old.status().description()).containsAnyOf("the server refused the client's certificate",
          "the server aborted the handshake");
      assertThat(serverLog.await(Level.WARN, WAIT, "TLS handshake with", "failed, closing the connection"))
          .contains("the client's certificate has expired");
      assertThat(whoRuns).hasValue(0);
    }
  }

  /**
   * Over TLS the server's SETTINGS is its first frame after the handshake: the client keeps within the server's
   * limit (it would see the PONG first and know no limit if SETTINGS were missing, and calls would be refused).
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"openssl", "jdk"})
  void theServersCallLimitReachesTlsClientsToo(String provider) throws Exception {
    use(provider);
    HoldingService hold = new HoldingService(3);
    RpcServer srv = tlsServer(serverTls(server), b -> b.addService(hold.definition())
        .maxConcurrentCallsPerConnection(3));
    RpcClient c = tlsClient(srv.port(), trustingCa());
    List<CompletableFuture<StringValue>> calls = new java.util.ArrayList<>();
    for (int i = 0; i < 100; i++) {
      calls.add(c.unaryCallAsync(HoldingService.HOLD, StringValue.of("t" + i), CallOptions.DEFAULT));
    }
    assertThat(hold.started.tryAcquire(3, 10, TimeUnit.SECONDS)).isTrue();
    hold.releaseAll();
    for (int i = 0; i < calls.size(); i++) {
      assertThat(calls.get(i).get(10, TimeUnit.SECONDS).getValue()).isEqualTo("held:t" + i);
    }
    assertThat(hold.overLimit).isEmpty();
    assertThat(hold.maxRunning()).isEqualTo(3);
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"openssl", "jdk"})
  void aPlaintextClientFailsCleanlyAgainstATlsServerWhichClosesTheConnection(String provider) throws Exception {
    use(provider);
    try (LogCapture serverLog = new LogCapture(RpcServer.class)) {
      RpcServer srv = tlsServer(serverTls(server));
      RpcClient plain = client(srv.port(), b -> b.defaultDeadline(Duration.ofSeconds(5)));
      long start = System.nanoTime();
      StatusException e = callFails(plain);
      assertThat(System.nanoTime() - start).as("ends by its deadline at the latest")
          .isLessThan(TimeUnit.MILLISECONDS.toNanos(5_500));
      assertThat(e.status().code()).isIn(Status.Code.UNAVAILABLE, Status.Code.DEADLINE_EXCEEDED);
      assertThat(serverLog.await(Level.WARN, WAIT, "TLS handshake with", "failed, closing the connection"))
          .contains("the client did not speak TLS");
      // A raw plaintext peer is disconnected by the server, not left hanging.
      try (RawPeer p = new RawPeer(srv.port())) {
        p.send(RawPeer.control(Protocol.TYPE_PING, 1));
        assertThat(readUntilClosed(p)).isLessThan(64);
      }
      assertThat(tlsClient(srv.port(), trustingCa()).unaryCall(TestService.ECHO, StringValue.of("ok")).getValue())
          .isEqualTo("ok");
    }
  }

  @Test
  void aTlsClientAgainstAPlaintextServerFailsWithUnavailable() throws Exception {
    RpcServer srv = startServer();
    StatusException e = callFails(tlsClient(srv.port(), trustingCa()));
    assertThat(e.status().code()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(e.status().description()).contains("TLS handshake failed");
  }

  @Test
  void aPeerThatHangsUpAtOnceIsAFailedHandshakeEveryTime() throws Exception {
    // The peer closes before the client's connect listener may even run (the race CI once hit: the pipeline was
    // already empty and the call said "the connection closed as soon as it opened").
    try (java.net.ServerSocket hangUp = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
      Thread acceptor = new Thread(() -> {
        while (!hangUp.isClosed()) {
          try (Socket s = hangUp.accept()) {
            s.shutdownOutput(); // FIN at once, as a plaintext server does on a ClientHello
          } catch (IOException e) {
            return;
          }
        }
      }, "hang-up-acceptor");
      acceptor.start();
      for (int i = 0; i < 20; i++) {
        StatusException e = callFails(tlsClient(hangUp.getLocalPort(), trustingCa()));
        assertThat(e.status().code()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(e.status().description()).as("attempt %d", i).contains("TLS handshake failed");
      }
    }
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"openssl", "jdk"})
  void aClientThatGivesUpDuringTheHandshakeIsNoWarning(String provider) throws Exception {
    // A client closed during its handshake (a Petrel client shut down, or whose only call's deadline passed while it
    // connected) has sent its ClientHello and not yet read the server's answer, so its engine sends its closing
    // alert unencrypted; a TLS 1.3 server that already expects encrypted records cannot read it. The peer left,
    // as a port scanner does: DEBUG, not a WARN with the provider's "Insufficient buffer remaining for AEAD
    // cipher fragment (2)".
    use(provider);
    try (LogCapture serverLog = new LogCapture(RpcServer.class)) {
      RpcServer srv = tlsServer(serverTls(server));
      SSLContext ctx = SSLContext.getInstance("TLSv1.3");
      ctx.init(null, new TrustManager[] {new TrustAll()}, null);
      SSLEngine engine = ctx.createSSLEngine("localhost", srv.port());
      engine.setUseClientMode(true);
      try (RawPeer p = new RawPeer(srv.port())) {
        p.send(wrap(engine)); // the ClientHello
        assertThat(p.socket.getInputStream().read()).as("the server's answer, a handshake record").isEqualTo(22);
        engine.closeOutbound();
        p.send(wrap(engine)); // the closing alert, unencrypted
        readUntilClosed(p); // the server logs before it closes
      }
      assertThat(serverLog.lines(Level.WARN, "TLS handshake with")).isEmpty();
    }
  }

  /**
   * A client that sent a ClientHello and then bytes that are not TLS records spoke TLS: the server must not call it
   * a plaintext client (and tell its operator to configure tls(...)), whatever follows its ClientHello.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"openssl", "jdk"})
  void bytesThatAreNotTlsAfterAClientHelloAreNotBlamedOnAPlaintextClient(String provider) throws Exception {
    use(provider);
    try (LogCapture serverLog = new LogCapture(RpcServer.class)) {
      RpcServer srv = tlsServer(mutualServer());
      SSLContext ctx = SSLContext.getInstance("TLSv1.3");
      ctx.init(null, new TrustManager[] {new TrustAll()}, null);
      SSLEngine engine = ctx.createSSLEngine("localhost", srv.port());
      engine.setUseClientMode(true);
      try (RawPeer p = new RawPeer(srv.port())) {
        p.send(wrap(engine)); // the ClientHello
        assertThat(p.socket.getInputStream().read()).as("the server's answer, a handshake record").isEqualTo(22);
        p.send("GET / HTTP/1.1\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        readUntilClosed(p);
      }
      assertThat(serverLog.await(Level.WARN, WAIT, "TLS handshake with", "failed, closing the connection"))
          .doesNotContain("did not speak TLS", "plaintext client?");
    }
  }

  /** What {@code engine} has to send now. */
  private static byte[] wrap(SSLEngine engine) throws IOException {
    ByteBuffer out = ByteBuffer.allocate(engine.getSession().getPacketBufferSize());
    engine.wrap(ByteBuffer.allocate(0), out);
    out.flip();
    byte[] bytes = new byte[out.remaining()];
    out.get(bytes);
    return bytes;
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"openssl", "jdk"})
  void theHandshakeTimeoutClosesPeersThatNeverCompleteATlsHandshake(String provider) throws Exception {
    use(provider);
    RpcServer srv = tlsServer(serverTls(server), b -> b.handshakeTimeout(Duration.ofMillis(300)));
    long start = System.nanoTime();
    try (RawPeer silent = new RawPeer(srv.port()); RawPeer partial = new RawPeer(srv.port())) {
      partial.send(new byte[] {0x16, 0x03, 0x01, 0x02, 0x00, 0x01}); // a ClientHello record that never completes
      assertThat(readUntilClosed(silent)).isLessThan(64); // at most an alert
      assertThat(readUntilClosed(partial)).isLessThan(64); // at most an alert
    }
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isBetween(250L, 5_000L);
    assertThat(tlsClient(srv.port(), trustingCa()).unaryCall(TestService.ECHO, StringValue.of("ok")).getValue())
        .isEqualTo("ok");
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"openssl", "jdk"})
  void reloadServesTheNewCertificateToNewConnectionsWhileOpenOnesKeepWorking(String provider) throws Exception {
    use(provider);
    Path files = Files.createTempDirectory(dir, "reload");
    Path cert = Files.copy(server.certificate(), files.resolve("tls.crt"));
    Path key = Files.copy(server.key(), files.resolve("tls.key"));
    RpcServer srv = tlsServer(TlsConfig.builder().keyPair(cert, key).build());
    RpcClient old = tlsClient(srv.port(), trustingCa()); // trusts the first CA only
    assertThat(old.unaryCall(TestService.ECHO, StringValue.of("before")).getValue()).isEqualTo("before");
    assertThat(serverSubject(srv.port())).isEqualTo("CN=server");

    Files.copy(serverB.key(), key, StandardCopyOption.REPLACE_EXISTING);
    Files.copy(serverB.certificate(), cert, StandardCopyOption.REPLACE_EXISTING);
    srv.reloadTls();

    assertThat(serverSubject(srv.port())).isEqualTo("CN=server-b");
    // The open connection keeps its session: it could not be re-made, since its client does not trust CA 2.
    assertThat(old.unaryCall(TestService.ECHO, StringValue.of("after")).getValue()).isEqualTo("after");
    assertThat(callFails(tlsClient(srv.port(), trustingCa())).status().description()).contains("not trusted");
    RpcClient fresh = tlsClient(srv.port(), TlsConfig.builder().trustCertificates(ca2Pem).build());
    assertThat(fresh.unaryCall(TestService.ECHO, StringValue.of("new")).getValue()).isEqualTo("new");
  }

  @Test
  void changedFilesAreReloadedByTheReloadInterval() throws Exception {
    Path files = Files.createTempDirectory(dir, "interval");
    Path cert = Files.copy(server.certificate(), files.resolve("tls.crt"));
    Path key = Files.copy(server.key(), files.resolve("tls.key"));
    RpcServer srv = tlsServer(TlsConfig.builder().keyPair(cert, key).reloadInterval(Duration.ofMillis(50)).build());
    assertThat(serverSubject(srv.port())).isEqualTo("CN=server");
    Files.copy(serverB.key(), key, StandardCopyOption.REPLACE_EXISTING);
    Files.copy(serverB.certificate(), cert, StandardCopyOption.REPLACE_EXISTING);
    // Each new connection may trigger the check, at most every 50 ms.
    long until = System.nanoTime() + WAIT.toNanos();
    String subject;
    do {
      subject = serverSubject(srv.port());
    } while (!subject.equals("CN=server-b") && System.nanoTime() < until);
    assertThat(subject).isEqualTo("CN=server-b");
  }

  @Test
  void aKeyThatDoesNotMatchItsCertificateIsRefusedAndTheOldOneStays() throws Exception {
    Path files = Files.createTempDirectory(dir, "mismatch");
    Path cert = Files.copy(server.certificate(), files.resolve("tls.crt"));
    Path key = Files.copy(server.key(), files.resolve("tls.key"));
    RpcServer srv = tlsServer(TlsConfig.builder().keyPair(cert, key).build());
    Files.copy(serverB.certificate(), cert, StandardCopyOption.REPLACE_EXISTING); // the key is not replaced
    assertThatThrownBy(srv::reloadTls).isInstanceOf(IOException.class).hasMessageContaining("does not belong to"
        + " the certificate CN=server-b");
    assertThat(serverSubject(srv.port())).isEqualTo("CN=server");
    assertThat(tlsClient(srv.port(), trustingCa()).unaryCall(TestService.ECHO, StringValue.of("ok")).getValue())
        .isEqualTo("ok");
  }

  /**
   * An in-memory key store changed in place, then reloaded, with a key manager that reads its store on each handshake
   * (the JDK's PKIX, chosen by the security property): a connection accepted before the reload, whose handshake
   * comes after it, is served the certificate of the context it was accepted with; and after a reload that failed,
   * new connections are still served the running context's, not the store's refused change. On the old code both
   * read the store as changed (each context's key manager read the application's store itself).
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"openssl", "jdk"})
  void eachContextKeepsTheKeyStoreEntriesItWasBuiltWith(String provider) throws Exception {
    use(provider);
    String algorithm = Security.getProperty(KEY_MANAGER_ALGORITHM);
    Security.setProperty(KEY_MANAGER_ALGORITHM, "PKIX");
    try {
      KeyStore keys = serverCert.keyStore(PASSWORD);
      Path trust = Files.copy(caPem, Files.createTempDirectory(dir, "in-place").resolve("ca.pem"));
      RpcServer srv = tlsServer(TlsConfig.builder().keyStore(keys, PASSWORD).trustCertificates(trust).build());
      NettyServerTransport transport = (NettyServerTransport) ((io.petrel.rpc.internal.ServerImpl) srv).transport();
      try (Socket early = new Socket("127.0.0.1", srv.port())) {
        awaitOpenConnections(transport, 1); // accepted: its TLS handler has the first context
        keys.deleteEntry("key");
        keys.setKeyEntry("renewed", serverBCert.key(), PASSWORD, new X509Certificate[] {serverBCert.certificate()});
        srv.reloadTls();
        assertThat(serverSubject(srv.port())).as("a new connection").isEqualTo("CN=server-b");
        assertThat(serverSubject(early, srv.port())).as("the connection accepted before the reload")
            .isEqualTo("CN=server");
      }

      keys.deleteEntry("renewed");
      keys.setKeyEntry("key", serverCert.key(), PASSWORD, new X509Certificate[] {serverCert.certificate()});
      Files.writeString(trust, "not a certificate");
      assertThatThrownBy(srv::reloadTls).isInstanceOf(IOException.class).hasMessageContaining("trust certificates");
      assertThat(serverSubject(srv.port())).as("a new connection after the reload failed").isEqualTo("CN=server-b");
    } finally {
      Security.setProperty(KEY_MANAGER_ALGORITHM, algorithm != null ? algorithm : "SunX509");
    }
  }

  /**
   * A key store that cannot say when its entries were made, as SunPKCS11's (an HSM's) throws
   * {@code ProviderException(UnsupportedOperationException)} from getCreationDate for every alias: the server
   * starts and reloads with it (on the old code the copy of the store asked every entry's date, and the server
   * could not start: "cannot load TLS material").
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"openssl", "jdk"})
  void aKeyStoreThatCannotDateItsEntriesIsUsed(String provider) throws Exception {
    use(provider);
    KeyStore undated = NoCreationDates.over(serverCert.keyStore(PASSWORD));
    RpcServer srv = tlsServer(TlsConfig.builder().keyStore(undated, PASSWORD).build());
    assertThat(serverSubject(srv.port())).isEqualTo("CN=server");
    srv.reloadTls();
    assertThat(serverSubject(srv.port())).as("after a reload").isEqualTo("CN=server");
  }

  /** Waits (bounded) until the server counts {@code n} open connections: accepted, their pipeline set up. */
  private static void awaitOpenConnections(NettyServerTransport transport, int n) {
    long until = System.nanoTime() + WAIT.toNanos();
    while (transport.openConnections() != n && System.nanoTime() - until < 0) {
      Thread.onSpinWait();
    }
    assertThat(transport.openConnections()).as("connections the server accepted").isEqualTo(n);
  }

  @Test
  void aClientReloadsItsCertificateForNewConnections() throws Exception {
    Path files = Files.createTempDirectory(dir, "client");
    Path cert = Files.copy(client.certificate(), files.resolve("tls.crt"));
    Path key = Files.copy(client.key(), files.resolve("tls.key"));
    RpcServer srv = tlsServer(TlsConfig.builder().keyPair(server.certificate(), server.key())
        .trustCertificates(bothCasPem).clientAuth(TlsConfig.ClientAuth.REQUIRE).build());
    RpcClient c = tlsClient(srv.port(), TlsConfig.builder().keyPair(cert, key).trustCertificates(caPem).build());
    Files.copy(clientBob.key(), key, StandardCopyOption.REPLACE_EXISTING);
    Files.copy(clientBob.certificate(), cert, StandardCopyOption.REPLACE_EXISTING);
    c.reloadTls(); // before its first connection
    assertThat(who(c)).startsWith("subject=CN=client-bob");
  }

  @Test
  void reloadWithoutTlsSaysThereIsNone() throws Exception {
    RpcServer srv = startServer();
    assertThatThrownBy(srv::reloadTls).isInstanceOf(IllegalStateException.class).hasMessageContaining("no TLS");
    RpcClient c = client(srv.port());
    assertThatThrownBy(c::reloadTls).isInstanceOf(IllegalStateException.class).hasMessageContaining("no TLS");
  }

  @Test
  void bearerTokensAreCheckedBeforeTheHandlerRunsAndRefreshedPerCall() throws Exception {
    Principal alice = () -> "alice";
    Principal bob = () -> "bob";
    RpcServer srv = tlsServer(serverTls(server), b -> b.intercept(BearerTokenServerInterceptor.verifying(
        token -> switch (token) {
          case "alice-token" -> alice;
          case "bob-token" -> bob;
          default -> null;
        })));
    AtomicReference<String> token = new AtomicReference<>("alice-token");
    RpcClient c = client(srv.port(), b -> b.tls(trustingCa())
        .intercept(BearerTokenClientInterceptor.of(token::get)));
    assertThat(who(c)).isEqualTo("subject=-, principal=alice");
    token.set("bob-token"); // a refreshed token is used from the next call on
    assertThat(who(c)).isEqualTo("subject=-, principal=bob");
    assertThat(whoRuns).hasValue(2);

    token.set("stolen-token");
    StatusException bad = failureOf(() -> who(c));
    assertThat(bad.status().code()).isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(bad.status().description()).contains("missing or invalid bearer token", "not accepted");

    RpcClient noToken = tlsClient(srv.port(), trustingCa());
    StatusException missing = failureOf(() -> who(noToken));
    assertThat(missing.status().code()).isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(missing.status().description()).contains("missing or invalid bearer token", "no 'authorization'");

    RpcClient notBearer = tlsClient(srv.port(), trustingCa());
    StatusException basic = failureOf(() -> notBearer.unaryCall(WHO, StringValue.of(""),
        CallOptions.DEFAULT.withMetadata(Metadata.of("authorization", "Basic YWxpY2U6cHc="))));
    assertThat(basic.status().code()).isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(whoRuns).as("the handler never ran for a refused call").hasValue(2);

    token.set(null);
    StatusException none = failureOf(() -> who(c));
    assertThat(none.status().code()).isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(none.status().description()).contains("supplier returned no token");
  }

  @Test
  void aBearerTokenIsNotSentOverPlaintextUnlessAllowed() throws Exception {
    AtomicInteger checked = new AtomicInteger();
    RpcServer srv = startServer(b -> b.addService(tlsService()).intercept(BearerTokenServerInterceptor.of(
        token -> {
          checked.incrementAndGet();
          return token.equals("s3cret");
        })));
    RpcClient careful = client(srv.port(), b -> b.intercept(BearerTokenClientInterceptor.of("s3cret")));
    assertThat(careful.isSecure()).isFalse();
    StatusException refused = failureOf(() -> who(careful));
    assertThat(refused.status().code()).isEqualTo(Status.Code.FAILED_PRECONDITION);
    assertThat(refused.status().description()).contains("plaintext", "RpcClient.builder().tls(",
        "BearerTokenClientInterceptor.allowPlaintext()");
    assertThat(checked).as("nothing reached the server").hasValue(0);
    assertThat(whoRuns).hasValue(0);

    RpcClient allowed = client(srv.port(), b -> b.intercept(BearerTokenClientInterceptor.of("s3cret")
        .allowPlaintext()));
    assertThat(who(allowed)).isEqualTo("subject=-, principal=-");
    assertThat(checked).hasValue(1);
  }

  /** Reads what the server sends until it closes the connection; the bytes read. Fails if it stays open. */
  private static int readUntilClosed(RawPeer p) throws IOException {
    try {
      return p.socket.getInputStream().readAllBytes().length; // SO_TIMEOUT: a SocketTimeoutException if open
    } catch (SocketException reset) {
      return 0;
    }
  }

  /** The subject of the certificate the server presents to a new connection (any certificate accepted). */
  private static String serverSubject(int port) throws Exception {
    return serverSubject(null, port);
  }

  /** As {@link #serverSubject(int)}, with the handshake over {@code connected} when it is not null (and closed). */
  private static String serverSubject(@org.jspecify.annotations.Nullable Socket connected, int port)
      throws Exception {
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(null, new TrustManager[] {new TrustAll()}, null);
    try (Socket s = connected == null ? ctx.getSocketFactory().createSocket("127.0.0.1", port)
        : ctx.getSocketFactory().createSocket(connected, "127.0.0.1", port, true)) {
      SSLSocket ssl = (SSLSocket) s;
      ssl.setSoTimeout(10_000);
      ssl.startHandshake();
      return ((X509Certificate) ssl.getSession().getPeerCertificates()[0]).getSubjectX500Principal().getName();
    }
  }

  /** For {@link #serverSubject} only: looks at whatever certificate the server shows. */
  private static final class TrustAll extends X509ExtendedTrustManager {
    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) {}

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) {}

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) {}

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) {}

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return new X509Certificate[0];
    }
  }

  /** A key store over another whose getCreationDate throws, as SunPKCS11's P11KeyStore does for every alias. */
  private static final class NoCreationDates extends java.security.KeyStoreSpi {
    private final KeyStore store;

    private NoCreationDates(KeyStore store) {
      this.store = store;
    }

    static KeyStore over(KeyStore store) throws Exception {
      KeyStore ks = new KeyStore(new NoCreationDates(store), store.getProvider(), "PKCS11") { };
      ks.load(null, null);
      return ks;
    }

    @Override
    public java.util.Date engineGetCreationDate(String alias) {
      throw new java.security.ProviderException(new UnsupportedOperationException());
    }

    @Override
    public java.security.Key engineGetKey(String alias, char[] password)
        throws java.security.NoSuchAlgorithmException, java.security.UnrecoverableKeyException {
      try {
        return store.getKey(alias, password);
      } catch (java.security.KeyStoreException e) {
        throw new java.security.ProviderException(e);
      }
    }

    @Override
    public java.security.cert.Certificate[] engineGetCertificateChain(String alias) {
      return call(() -> store.getCertificateChain(alias));
    }

    @Override
    public java.security.cert.Certificate engineGetCertificate(String alias) {
      return call(() -> store.getCertificate(alias));
    }

    @Override
    public void engineSetKeyEntry(String alias, java.security.Key key, char[] password,
        java.security.cert.Certificate[] chain) throws java.security.KeyStoreException {
      store.setKeyEntry(alias, key, password, chain);
    }

    @Override
    public void engineSetKeyEntry(String alias, byte[] key, java.security.cert.Certificate[] chain)
        throws java.security.KeyStoreException {
      store.setKeyEntry(alias, key, chain);
    }

    @Override
    public void engineSetCertificateEntry(String alias, java.security.cert.Certificate cert)
        throws java.security.KeyStoreException {
      store.setCertificateEntry(alias, cert);
    }

    @Override
    public void engineDeleteEntry(String alias) throws java.security.KeyStoreException {
      store.deleteEntry(alias);
    }

    @Override
    public java.util.Enumeration<String> engineAliases() {
      return call(store::aliases);
    }

    @Override
    public boolean engineContainsAlias(String alias) {
      return call(() -> store.containsAlias(alias));
    }

    @Override
    public int engineSize() {
      return call(store::size);
    }

    @Override
    public boolean engineIsKeyEntry(String alias) {
      return call(() -> store.isKeyEntry(alias));
    }

    @Override
    public boolean engineIsCertificateEntry(String alias) {
      return call(() -> store.isCertificateEntry(alias));
    }

    @Override
    public String engineGetCertificateAlias(java.security.cert.Certificate cert) {
      return call(() -> store.getCertificateAlias(cert));
    }

    @Override
    public void engineStore(OutputStream stream, char[] password) throws IOException {
      throw new IOException("not stored");
    }

    @Override
    public void engineLoad(java.io.InputStream stream, char[] password) { }

    private interface StoreCall<T> {
      T call() throws java.security.KeyStoreException;
    }

    private static <T> T call(StoreCall<T> c) {
      try {
        return c.call();
      } catch (java.security.KeyStoreException e) {
        throw new java.security.ProviderException(e);
      }
    }
  }
}
