package io.petrel.rpc.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.grpc.stub.ClientCalls;
import io.petrel.rpc.transport.netty.IoMode;
import io.petrel.rpc.StatusException;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

/**
 * The TLS frameworks of the benchmark against a server in this JVM: each makes real calls over TLS 1.3 with
 * the certificate the server made at start, trusting only the CA from the control port, host names verified;
 * plaintext clients are refused by the TLS ports (and a TLS client by a plaintext port), so the connections
 * measured really are TLS.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TlsBenchmarkTest {
  private static BenchmarkServer server;
  private static Endpoints endpoints;
  private static EventLoopGroup grpcGroup;

  @BeforeAll
  static void startServer() throws Exception {
    server = BenchmarkServer.start(ServerOptions.parse("--bind", "127.0.0.1", "--port", "0", "--worker-threads",
        "1", "--frameworks", "petrel,grpc,petrel_tls,grpc_tls"));
    endpoints = Endpoints.discover("127.0.0.1", server.controlPort());
    grpcGroup = GrpcPeer.group(1, IoMode.NIO, "test-grpc-client");
  }

  @AfterAll
  static void stopServer() {
    if (grpcGroup != null) {
      grpcGroup.shutdownGracefully(0, 5, TimeUnit.SECONDS).syncUninterruptibly();
    }
    if (server != null) {
      server.close();
    }
  }

  @Test
  void theCertificateNamesEveryAddressOfThisHostAndClientsGetItsCaFromTheControlPort() throws Exception {
    BenchCertificates certs = server.certificates();
    X509Certificate ca = endpoints.caCertificate();
    assertThat(ca).isEqualTo(certs.ca());
    certs.certificate().verify(ca.getPublicKey()); // signed by that CA
    assertThat(certs.certificate().getPublicKey().getAlgorithm()).isEqualTo("EC");
    assertThat(certs.certificate().getSigAlgName()).isEqualTo("SHA256withECDSA");
    List<String> sans = new ArrayList<>();
    for (List<?> san : certs.certificate().getSubjectAlternativeNames()) {
      String value = (String) san.get(1);
      // 7: an IP address (an IP literal: no lookup), 2: a DNS name.
      sans.add((Integer) san.get(0) == 7 ? InetAddress.getByName(value).getHostAddress()
          : value.toLowerCase(java.util.Locale.ROOT));
    }
    assertThat(sans).contains("localhost", "127.0.0.1");
    String hostName = InetAddress.getLocalHost().getHostName().toLowerCase(java.util.Locale.ROOT);
    if (!hostName.matches("[0-9.]+") && !hostName.contains(":")) {
      assertThat(sans).contains(hostName);
    }
    for (NetworkInterface ni : Collections.list(NetworkInterface.getNetworkInterfaces())) {
      for (InetAddress a : Collections.list(ni.getInetAddresses())) {
        String address = a.getHostAddress().replaceFirst("%.*", "");
        assertThat(sans).as("addresses of %s", ni.getName()).contains(address);
      }
    }
    assertThat(server.tlsDescription()).contains("petrel_tls OpenSSL (BoringSSL)")
        .contains("grpc_tls OpenSSL (BoringSSL)").contains("TLSv1.3 only");
  }

  @Test
  void theCertificateFilesAreDeletedWhenTheServerCloses() throws Exception {
    BenchCertificates certs;
    try (BenchmarkServer other = BenchmarkServer.start(ServerOptions.parse("--bind", "127.0.0.1", "--port", "0",
        "--worker-threads", "1", "--frameworks", "petrel_tls"))) {
      certs = other.certificates();
      assertThat(certs.caFile()).isRegularFile();
      assertThat(certs.keyFile()).isRegularFile();
    }
    assertThat(certs.caFile()).doesNotExist();
    assertThat(certs.certificateFile()).doesNotExist();
    assertThat(certs.keyFile()).doesNotExist();
    assertThat(certs.caFile().getParent()).doesNotExist();
  }

  @Test
  void aServerWithoutTlsFrameworksMakesNoCertificateAndSaysSoToACaRequest() throws Exception {
    try (BenchmarkServer plain = BenchmarkServer.start(ServerOptions.parse("--bind", "127.0.0.1", "--port", "0",
        "--worker-threads", "1", "--frameworks", "petrel"))) {
      assertThat(plain.certificates()).isNull();
      assertThat(plain.tlsDescription()).isNull();
      Endpoints e = Endpoints.discover("127.0.0.1", plain.controlPort());
      assertThatThrownBy(e::caCertificate).hasMessageContaining("serves no TLS framework");
    }
  }

  @Test
  void petrelTlsCallsGoOverTls13WithTheHostNameVerifiedAndPlaintextIsRefused() throws Exception {
    Logger tlsLog = (Logger) LoggerFactory.getLogger("io.petrel.rpc.transport.netty.ServerTlsHandler");
    ListAppender<ILoggingEvent> appender = new ListAppender<>();
    appender.start();
    ch.qos.logback.classic.Level level = tlsLog.getLevel();
    tlsLog.setLevel(ch.qos.logback.classic.Level.DEBUG); // as the benchmarks' logback.xml sets it
    tlsLog.addAppender(appender);
    try {
      for (Payload payload : List.of(Payload.MESSAGE, Payload.BYTES_1K)) {
        try (BenchClient c = BenchClient.connect(Framework.PETREL_TLS, payload, endpoints, 1, IoMode.AUTO)) {
          assertThat(((PetrelBenchClient) c).isSecure()).isTrue();
          c.verify(c.call());
          c.verify(c.callAsync().get(10, TimeUnit.SECONDS));
        }
      }
      // What the server negotiated with that client, in its own words (the line the benchmark server prints).
      assertThat(appender.list).extracting(ILoggingEvent::getFormattedMessage)
          .anySatisfy(m -> assertThat(m).matches("TLS handshake with /127\\.0\\.0\\.1:\\d+ done: TLSv1\\.3 TLS_\\S+"));
    } finally {
      tlsLog.detachAppender(appender);
      tlsLog.setLevel(level);
    }
    // Hostname verification stays on in the benchmark's client settings.
    Path ca = Files.createTempFile("ca", ".pem");
    try {
      BenchCertificates.writePem(ca, endpoints.caCertificate());
      assertThat(PetrelBenchClient.tlsConfig(ca).hostnameVerification()).isTrue();
      assertThat(PetrelBenchClient.tlsConfig(ca).trustCertificatesFile()).isEqualTo(ca);
      // A TLS client against the plaintext Petrel port fails its handshake: the client does speak TLS.
      // (start() or the first call fails, whichever sees the failed handshake.)
      X509Certificate caCert = endpoints.caCertificate();
      assertThatThrownBy(() -> {
        try (PetrelBenchClient c = PetrelBenchClient.tls("127.0.0.1", endpoints.port(Framework.PETREL),
            Payload.EMPTY, 1, IoMode.AUTO, caCert)) {
          c.call();
        }
      }).isInstanceOf(StatusException.class).hasMessageContaining("UNAVAILABLE")
          .hasMessageContaining("TLS handshake failed");
    } finally {
      Files.deleteIfExists(ca);
    }
    // A plaintext client against the TLS port is refused: the port does speak TLS.
    assertThatThrownBy(() -> {
      try (PetrelBenchClient c = new PetrelBenchClient("127.0.0.1", endpoints.port(Framework.PETREL_TLS),
          Payload.EMPTY, 1, IoMode.AUTO)) {
        assertThat(c.isSecure()).isFalse();
        c.call();
      }
    }).isInstanceOf(StatusException.class).hasMessageContaining("UNAVAILABLE");
  }

  @Test
  void grpcTlsCallsGoOverTls13WithTheHostNameVerifiedAndPlaintextIsRefused() throws Exception {
    for (Payload payload : List.of(Payload.MESSAGE, Payload.BYTES_1K)) {
      try (BenchClient c = BenchClient.connect(Framework.GRPC_TLS, payload, endpoints, 1, IoMode.AUTO)) {
        c.verify(c.call());
        c.verify(c.callAsync().get(10, TimeUnit.SECONDS));
      }
    }
    assertThat(server.tlsSession(Framework.GRPC_TLS)).as("what the gRPC server saw negotiated")
        .matches("TLSv1\\.3 TLS_\\S+");

    int port = endpoints.port(Framework.GRPC_TLS);
    var tls = GrpcPeer.clientTls(endpoints.caCertificate());
    assertThat(GrpcPeer.provider(tls)).as("gRPC-java's client TLS provider").startsWith("OpenSSL (BoringSSL");
    // The client's side of the session: TLS 1.3.
    ManagedChannel channel = GrpcPeer.channel("127.0.0.1", port, grpcGroup, IoMode.NIO, false, tls);
    try {
      SSLSession session = sessionOfOneCall(channel);
      assertThat(session).isNotNull();
      assertThat(session.getProtocol()).isEqualTo("TLSv1.3");
      assertThat(session.getCipherSuite()).isEqualTo(server.tlsSession(Framework.GRPC_TLS).split(" ")[1]);
    } finally {
      GrpcPeer.shutdown(channel);
    }
    // Hostname verification is on: a name the certificate does not list is refused.
    ManagedChannel wrongName = NettyChannelBuilder.forAddress("127.0.0.1", port).sslContext(tls)
        .overrideAuthority("not-in-the-certificate.example").eventLoopGroup(grpcGroup)
        .channelType(NioSocketChannel.class).build();
    try {
      assertThatThrownBy(() -> oneCall(wrongName)).isInstanceOfSatisfying(StatusRuntimeException.class,
          e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
    } finally {
      GrpcPeer.shutdown(wrongName);
    }
    // A plaintext channel against the TLS port is refused.
    ManagedChannel plaintext = GrpcPeer.channel("127.0.0.1", port, grpcGroup, IoMode.NIO, false, null);
    try {
      assertThatThrownBy(() -> oneCall(plaintext)).isInstanceOfSatisfying(StatusRuntimeException.class,
          e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
    } finally {
      GrpcPeer.shutdown(plaintext);
    }
  }

  private static byte[] oneCall(ManagedChannel channel) {
    return ClientCalls.blockingUnaryCall(channel, GrpcPeer.ECHO_BYTES,
        CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), new byte[] {1, 2, 3});
  }

  /** Makes one call and returns the TLS session of its transport, as the client sees it. */
  private static SSLSession sessionOfOneCall(ManagedChannel channel) throws Exception {
    ClientCall<byte[], byte[]> call = channel.newCall(GrpcPeer.ECHO_BYTES,
        CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS));
    CompletableFuture<SSLSession> session = new CompletableFuture<>();
    call.start(new ClientCall.Listener<>() {
      @Override
      public void onHeaders(Metadata headers) {
        session.complete(call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION));
      }

      @Override
      public void onClose(Status status, Metadata trailers) {
        if (!status.isOk()) {
          session.completeExceptionally(status.asRuntimeException());
        }
      }
    }, new Metadata());
    call.request(1);
    call.sendMessage(new byte[] {42});
    call.halfClose();
    return session.get(10, TimeUnit.SECONDS);
  }
}
