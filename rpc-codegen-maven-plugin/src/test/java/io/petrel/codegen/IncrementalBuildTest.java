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

  /**
   * generate-test reads the main classes, a directory on the test classpath: when a class there changes (here the
   * package-info that null-marks the package), the test sources' services are generated again.
   */
  @Test
  void aChangedClassInAClasspathDirectoryIsAChangedInput() throws Exception {
    Path mainSrc = tmp.resolve("main");
    Path classes = Files.createDirectories(tmp.resolve("classes"));
    TestSources.write(mainSrc, Map.of("inc/Main.java", "package inc;\n\npublic final class Main {}\n"));
    TestSources.compile(classes, mainSrc);
    Path src = tmp.resolve("src");
    Path out = tmp.resolve("out");
    TestSources.write(src, Map.of("inc/Svc.java", """
        package inc;

        @io.petrel.rpc.RpcService("inc.Svc")
        public interface Svc {
          void ping();
        }
        """));
    List<Path> classpath = new java.util.ArrayList<>(TestSources.classpath());
    classpath.add(classes);
    CodegenRequest request = new CodegenRequest(List.of(src), classpath, out, out.resolve(Codegen.STATE_FILE_NAME),
        true);
    assertThat(new Codegen(s -> { }).run(request).upToDate()).isFalse();
    assertThat(Files.readString(out.resolve("inc/SvcAsync.java"))).contains("CompletableFuture<Void> ping();");

    TestSources.write(mainSrc, Map.of("inc/package-info.java", "@org.jspecify.annotations.NullMarked\npackage inc;\n"));
    TestSources.compile(classes, mainSrc);
    CodegenResult second = new Codegen(s -> { }).run(request);
    assertThat(second.upToDate()).isFalse();
    assertThat(second.written()).contains("inc/SvcAsync.java");
    assertThat(Files.readString(out.resolve("inc/SvcAsync.java")))
        .contains("CompletableFuture<@Nullable Void> ping();");
  }
}
