package io.petrel.rpc.transport.netty;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The Netty transport depends on rpc-core's API and its transport SPI only, never on the core's runtime
 * ({@code io.petrel.rpc.internal}): what it needs of the core is a contract in {@code spi}.
 */
class ImportRulesTest {
  @Test
  void theTransportNamesNoClassOfTheCoresRuntime() throws IOException {
    List<Path> files;
    try (Stream<Path> walk = Files.walk(Path.of("src/main/java"))) {
      files = walk.filter(p -> p.toString().endsWith(".java")).toList();
    }
    assertThat(files).hasSizeGreaterThan(20);
    for (Path f : files) {
      String src = Files.readString(f, StandardCharsets.UTF_8).replaceAll("(?s)/\\*.*?\\*/", "")
          .replaceAll("//[^\n]*", "");
      assertThat(src).as("%s refers to the core's runtime", f.getFileName()).doesNotContain("io.petrel.rpc.internal");
    }
  }
}
