package io.petrel.rpc.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.petrel.rpc.transport.netty.IoMode;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The jar's own checks of its command line, made before any trial: a parameter value that names nothing would
 * otherwise fail every trial in JMH and still exit 0.
 */
class BenchmarkMainTest {
  @Test
  void aFrameworkPayloadOrIoThatNamesNothingIsRefusedListingTheValidOnes() {
    assertThat(BenchmarkMain.checkParams(List.of("SyncCallBenchmark", "-p", "framework=PETREL,NETTY",
        "-p", "payload=BYTES_1K", "-p", "io=Epoll", "-p", "window=1000"))).isNull();
    assertThat(BenchmarkMain.checkParams(List.of("-p", "framework=PETREL,PETRL")))
        .startsWith("unknown value 'PETRL' in -p framework=PETREL,PETRL: one of PETREL, PETREL_DIRECT, GRPC")
        .endsWith("(written as here, in capitals)");
    // JMH takes enum parameters by their exact names: lower case fails every trial too.
    assertThat(BenchmarkMain.checkParams(List.of("-p", "framework=petrel"))).contains("one of PETREL");
    assertThat(BenchmarkMain.checkParams(List.of("-p", "payload=BYTES_5"))).contains("BYTES_4");
    assertThat(BenchmarkMain.checkParams(List.of("-p", "io=uring"))).contains("one of auto, epoll, io_uring, nio");
  }

  @Test
  void seedAndServerOptionsTakeNamesInAnyCaseAndSayWhichExist() {
    assertThat(EnumArgs.parse(Framework.class, " Petrel_Direct ", "--framework")).isEqualTo(Framework.PETREL_DIRECT);
    assertThat(NettyIo.parse("NIO")).isEqualTo(IoMode.NIO);
    assertThatThrownBy(() -> EnumArgs.parse(Framework.class, "petrl", "--framework"))
        .hasMessage("unknown --framework 'petrl': one of petrel, petrel_direct, grpc, grpc_direct, netty, petrel_tls,"
            + " grpc_tls");
    assertThatThrownBy(() -> ServerOptions.parse("--frameworks", "petrel,petrl"))
        .hasMessageContaining("unknown --frameworks value 'petrl': one of petrel,");
    assertThatThrownBy(() -> ServerOptions.parse("--io", "foo")).hasMessageContaining("unknown I/O mode 'foo'");
  }

  /** A seed pointed at a running server (--host) does not take options for a server of its own. */
  @Test
  void aSeedWithHostRefusesTheOptionsOfAServerItWouldStart() {
    assertThatThrownBy(() -> SeedServer.open(new SeedArgs(List.of("--host", "127.0.0.1", "--server-jvm", "-Xmx2g")),
        "")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--server-jvm sets up a server the seed starts itself");
  }
}
