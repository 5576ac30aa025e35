package io.petrel.rpc.transport.netty;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The soak runner itself, briefly: it runs every fault of its cycle once and its checks hold. */
class SoakRunnerTest {
  @Test
  void aShortSoakPassesItsChecks() throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    boolean ok = new SoakRunner(Duration.ofSeconds(30), Duration.ofSeconds(10), out).run();
    String report = bytes.toString(StandardCharsets.UTF_8);
    System.out.println(report);
    assertThat(report).contains("every call ended with a result or a status").contains("soak: PASSED");
    assertThat(ok).isTrue();
  }
}
