package io.petrel.rpc.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.petrel.rpc.transport.netty.IoMode;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;

class ServerOptionsTest {

  @Test
  void parsesEveryOptionAndWritesThemBack() {
    ServerOptions o = ServerOptions.parse("--port", "7100", "--bind", "127.0.0.1", "--worker-threads", "2",
        "--business-threads", "8", "--business-queue", "100", "--executor", "cached", "--io", "nio",
        "--frameworks", "petrel+netty", "--exit-on-stdin-eof", "--max-calls-per-connection", "1000");
    assertThat(o.port()).isEqualTo(7100);
    assertThat(o.bind()).isEqualTo("127.0.0.1");
    assertThat(o.workerThreads()).isEqualTo(2);
    assertThat(o.businessThreads()).isEqualTo(8);
    assertThat(o.businessQueue()).isEqualTo(100);
    assertThat(o.executor()).isEqualTo("cached");
    assertThat(o.io()).isEqualTo(IoMode.NIO);
    assertThat(o.frameworks()).isEqualTo(EnumSet.of(Framework.PETREL, Framework.NETTY));
    assertThat(o.exitOnStdinEof()).isTrue();
    assertThat(o.maxCallsPerConnection()).isEqualTo(1000);
    assertThat(ServerOptions.parse(o.toArgs().toArray(new String[0]))).isEqualTo(o);
  }

  @Test
  void defaultsServeEverythingOnPort7000() {
    ServerOptions o = ServerOptions.parse();
    assertThat(o.port()).isEqualTo(7000);
    assertThat(o.frameworks()).containsExactlyInAnyOrder(Framework.values());
    assertThat(o.io()).isEqualTo(IoMode.AUTO);
    assertThat(o.maxCallsPerConnection()).isEqualTo(65_536);
  }

  @Test
  void tlsFrameworksComeLastSoThatTheOtherPortsStayWhereTheyWere() {
    assertThat(Framework.values()).containsExactly(Framework.PETREL, Framework.PETREL_DIRECT, Framework.GRPC,
        Framework.GRPC_DIRECT, Framework.NETTY, Framework.PETREL_TLS, Framework.GRPC_TLS);
    assertThat(ServerOptions.parse("--frameworks", "petrel_tls+grpc_tls").frameworks())
        .containsExactly(Framework.PETREL_TLS, Framework.GRPC_TLS);
    assertThat(ServerOptions.USAGE).contains("petrel_tls,grpc_tls", "Petrel over TLS P+6", "gRPC-java over TLS P+7");
  }

  @Test
  void aServerABenchmarkStartsForAPlaintextFrameworkServesNoTls() {
    ServerOptions all = ServerOptions.parse();
    assertThat(Target.forOwnServer(all, Framework.PETREL).frameworks()).containsExactly(Framework.PETREL,
        Framework.PETREL_DIRECT, Framework.GRPC, Framework.GRPC_DIRECT, Framework.NETTY);
    assertThat(Target.forOwnServer(all, Framework.GRPC_TLS).frameworks()).containsExactlyInAnyOrder(
        Framework.values());
    // Frameworks named in serverArgs are served as named.
    ServerOptions named = ServerOptions.parse("--frameworks", "petrel,petrel_tls");
    assertThat(Target.forOwnServer(named, Framework.PETREL)).isEqualTo(named);
  }

  @Test
  void aServerABenchmarkStartsUsesTheClientsIoUnlessItsArgumentsSetOne() {
    assertThat(Target.ownServerOptions("", "nio").io()).isEqualTo(IoMode.NIO);
    assertThat(Target.ownServerOptions("--business-queue 8192", "epoll").io()).isEqualTo(IoMode.EPOLL);
    assertThat(Target.ownServerOptions("--business-queue 8192", "epoll").businessQueue()).isEqualTo(8192);
    assertThat(Target.ownServerOptions("--io nio", "epoll").io()).isEqualTo(IoMode.NIO);
    assertThat(Target.ownServerOptions("", "auto")).isEqualTo(ServerOptions.defaults());
  }

  @Test
  void rejectsBadOptionsNamingThem() {
    assertThatThrownBy(() -> ServerOptions.parse("--port", "-1")).hasMessageContaining("--port must be >= 0: -1");
    assertThatThrownBy(() -> ServerOptions.parse("--executor", "virtual"))
        .hasMessageContaining("--executor must be pool or cached: virtual");
    assertThatThrownBy(() -> ServerOptions.parse("--nope", "1")).hasMessageContaining("unknown option --nope");
    assertThatThrownBy(() -> ServerOptions.parse("--port")).hasMessageContaining("option --port needs a value");
    assertThatThrownBy(() -> ServerOptions.parse("--max-calls-per-connection", "0"))
        .hasMessageContaining("--max-calls-per-connection must be > 0: 0");
  }
}
