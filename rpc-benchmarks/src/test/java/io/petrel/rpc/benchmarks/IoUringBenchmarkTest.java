package io.petrel.rpc.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.netty.channel.uring.IoUringSocketChannel;
import io.petrel.rpc.transport.netty.IoMode;
import java.nio.file.Path;
import java.util.Collection;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.TimeValue;

/** {@code -p io=io_uring}: Petrel and the raw echo on Netty's io_uring transport, both sides, where it loads. */
class IoUringBenchmarkTest {
  @TempDir
  Path dir;

  @Test
  void anUnavailableIoUringFailsSayingWhyAndAvailableOneGivesTheEchoIoUringChannels() {
    if (!IoUring.isAvailable()) {
      assertThatThrownBy(() -> NettyIo.serverChannel(IoMode.IO_URING))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageStartingWith("io_uring requested but not available: ");
      return;
    }
    assertThat(NettyIo.serverChannel(IoMode.IO_URING)).isEqualTo(IoUringServerSocketChannel.class);
    assertThat(NettyIo.channel(IoMode.IO_URING)).isEqualTo(IoUringSocketChannel.class);
  }

  @Test
  @Timeout(value = 2, unit = TimeUnit.MINUTES)
  void petrelAndTheEchoRunOnIoUring() throws Exception {
    assumeTrue(IoUring.isAvailable(), () -> "io_uring is not available here: " + IoUring.unavailabilityCause());
    try (BenchmarkServer server = BenchmarkServer.start(ServerOptions.parse("--bind", "127.0.0.1", "--port", "0",
        "--worker-threads", "2", "--io", "io_uring", "--frameworks", "petrel,petrel_direct,netty"))) {
      Collection<RunResult> results = new Runner(BenchmarksSmokeTest.shortRun("SyncCallBenchmark",
              dir.resolve("uring.json"), server.controlPort())
          .measurementTime(TimeValue.milliseconds(200))
          .threads(2)
          .mode(Mode.Throughput)
          .param("framework", "PETREL", "PETREL_DIRECT", "NETTY")
          .param("payload", Payload.MESSAGE.name())
          .param("io", "io_uring")
          .build()).run();
      assertThat(results).hasSize(3);
      for (RunResult r : results) {
        assertThat(r.getPrimaryResult().getScore()).as(r.getParams().toString()).isPositive();
        assertThat(r.getSecondaryResults().get("calls.failed").getScore()).as(r.getParams().toString()).isZero();
      }
    }
  }
}
