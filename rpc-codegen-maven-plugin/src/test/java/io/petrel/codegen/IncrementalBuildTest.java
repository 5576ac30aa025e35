package io.petrel.codegen;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class IncrementalBuildTest {
  @TempDir
  Path tmp;

  private static final String PING = """
      package inc;

      @io.petrel.rpc.RpcService("inc.Ping")
      public interface Ping {
        String ping(String s);
      }
      """;

  private static final String PONG = """
      package inc;

      @io.petrel.rpc.RpcService("inc.Pong")
      public interface Pong {
        int pong(int i);
      }
      """;

  @Test
  void unchangedInputsWriteNothingAndChangedInputsRewriteOnlyWhatChanged() throws Exception {
    Path src = tmp.resolve("src");
    Path out = tmp.resolve("out");
    TestSources.write(src, Map.of("inc/Ping.java", PING));
    CodegenResult first = TestSources.generate(List.of(src), out);
    assertThat(first.upToDate()).isFalse();
    assertThat(first.written()).containsExactly("inc/PingRpc.java", "inc/PingAsync.java");

    Path pingRpc = out.resolve("inc/PingRpc.java");
    FileTime old = FileTime.fromMillis(1_000_000_000_000L);
    Files.setLastModifiedTime(pingRpc, old);

    CodegenResult second = TestSources.generate(List.of(src), out);
    assertThat(second.upToDate()).isTrue();
    assertThat(second.services()).containsExactly("inc.Ping");
    assertThat(Files.getLastModifiedTime(pingRpc)).isEqualTo(old);

    TestSources.write(src, Map.of("inc/Pong.java", PONG));
    CodegenResult third = TestSources.generate(List.of(src), out);
    assertThat(third.upToDate()).isFalse();
    assertThat(third.written()).containsExactly("inc/PongRpc.java", "inc/PongAsync.java");
    assertThat(third.unchanged()).containsExactly("inc/PingRpc.java", "inc/PingAsync.java");
    assertThat(Files.getLastModifiedTime(pingRpc)).isEqualTo(old);

    Files.delete(src.resolve("inc/Pong.java"));
    CodegenResult fourth = TestSources.generate(List.of(src), out);
    assertThat(fourth.deleted()).containsExactlyInAnyOrder("inc/PongRpc.java", "inc/PongAsync.java");
    assertThat(out.resolve("inc/PongRpc.java")).doesNotExist();
  }

  @Test
  void deletedOutputIsRegeneratedEvenWhenSourcesDidNotChange() throws Exception {
    Path src = tmp.resolve("src");
    Path out = tmp.resolve("out");
    TestSources.write(src, Map.of("inc/Ping.java", PING));
    TestSources.generate(List.of(src), out);
    Files.delete(out.resolve("inc/PingRpc.java"));

    CodegenResult again = TestSources.generate(List.of(src), out);
    assertThat(again.upToDate()).isFalse();
    assertThat(again.written()).containsExactly("inc/PingRpc.java");
  }

  @Test
  void filesThePluginDidNotWriteAreNeverDeleted() throws Exception {
    Path src = tmp.resolve("src");
    Path out = tmp.resolve("out");
    TestSources.write(src, Map.of("inc/Ping.java", PING));
    TestSources.write(out, Map.of("other/Handwritten.java", "package other; class Handwritten {}"));
    TestSources.generate(List.of(src), out);
    Files.delete(src.resolve("inc/Ping.java"));

    CodegenResult again = TestSources.generate(List.of(src), out);
    assertThat(again.deleted()).containsExactlyInAnyOrder("inc/PingRpc.java", "inc/PingAsync.java");
    assertThat(out.resolve("other/Handwritten.java")).exists();
  }
}
