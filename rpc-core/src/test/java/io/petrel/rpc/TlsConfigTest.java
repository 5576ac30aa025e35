package io.petrel.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TlsConfigTest {
  @TempDir
  Path dir;

  private Path file(String name) throws Exception {
    return Files.writeString(dir.resolve(name), "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n");
  }

  @Test
  void defaultsAreDefaultTrustNoClientAuthHostnameVerificationAndNoReload() {
    TlsConfig c = TlsConfig.builder().build();
    assertThat(c.usesDefaultTrust()).isTrue();
    assertThat(c.hasOwnCertificate()).isFalse();
    assertThat(c.clientAuth()).isEqualTo(TlsConfig.ClientAuth.NONE);
    assertThat(c.hostnameVerification()).isTrue();
    assertThat(c.reloadInterval()).isEqualTo(Duration.ZERO);
    assertThat(c.files()).isEmpty();
  }

  @Test
  void missingFilesAndDoubleSettingsAreRefusedNamingTheOption() throws Exception {
    Path cert = file("a.pem");
    Path key = file("a.key");
    assertThatThrownBy(() -> TlsConfig.builder().keyPair(cert, dir.resolve("nope.key")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("keyPair private key file")
        .hasMessageContaining("nope.key");
    assertThatThrownBy(() -> TlsConfig.builder().trustCertificates(dir.resolve("nope.pem")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("trustCertificates");
    assertThatThrownBy(() -> TlsConfig.builder().keyPair(cert, key).keyStore(cert, new char[0]))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("already set");
    assertThatThrownBy(() -> TlsConfig.builder().trustCertificates(cert).trustStore(cert, null))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("already set");
    assertThatThrownBy(() -> TlsConfig.builder().reloadInterval(Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("reloadInterval");
  }

  @Test
  void passwordsAreCopiedAndNeverPrinted() throws Exception {
    char[] password = "hunter2".toCharArray();
    TlsConfig c = TlsConfig.builder().keyStore(file("ks.p12"), password).trustCertificates(file("ca.pem"))
        .build();
    password[0] = 'X';
    assertThat(c.keyStorePassword()).containsExactly("hunter2".toCharArray());
    assertThat(c.toString()).doesNotContain("hunter2").contains("ks.p12", "ca.pem");
    assertThat(c.files()).hasSize(2);
  }

  @Test
  void serverAndClientBuildersRefuseOptionsOfTheOtherSide() throws Exception {
    TlsConfig noKey = TlsConfig.builder().build();
    assertThatThrownBy(() -> RpcServer.builder().tls(noKey)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("keyPair");
    TlsConfig lax = TlsConfig.builder().keyPair(file("s.pem"), file("s.key")).insecureSkipHostnameVerification()
        .build();
    assertThatThrownBy(() -> RpcServer.builder().tls(lax)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("client option");
    TlsConfig named = TlsConfig.builder().keyPair(file("s.pem"), file("s.key")).serverName("greeter.example")
        .build();
    assertThatThrownBy(() -> RpcServer.builder().tls(named)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("serverName(\"greeter.example\") is a client option");
    TlsConfig mutual = TlsConfig.builder().clientAuth(TlsConfig.ClientAuth.REQUIRE).build();
    assertThatThrownBy(() -> RpcClient.builder().tls(mutual)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("server option");
  }

  @Test
  void aServerNameIsAHostNameOrAnIpAddressWithoutPortOrScheme() {
    assertThat(TlsConfig.builder().build().serverName()).isNull();
    assertThat(TlsConfig.builder().serverName("greeter.default.svc").build().serverName())
        .isEqualTo("greeter.default.svc");
    assertThat(TlsConfig.builder().serverName("10.0.0.7").build().toString()).contains("serverName=10.0.0.7");
    assertThat(TlsConfig.builder().serverName("fd00::7").build().serverName()).isEqualTo("fd00::7");
    for (String bad : new String[] {"", " greeter", "greeter.svc:7000", "https://greeter.svc", "greeter/x",
        "[fd00::7]", "grüßer.example", "a b"}) {
      assertThatThrownBy(() -> TlsConfig.builder().serverName(bad)).as(bad)
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("serverName");
    }
  }
}
