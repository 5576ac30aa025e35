package io.petrel.examples.greeter;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** docs/testing.md shows GreeterServiceTest exactly as it is compiled and run here. */
class TestingDocTest {
  @Test
  void theGuideShowsTheTestThatRunsHere() throws Exception {
    String doc = Files.readString(Path.of("..", "docs", "testing.md"), StandardCharsets.UTF_8);
    String test = Files.readString(Path.of("src", "test", "java", "io", "petrel", "examples", "greeter",
        "GreeterServiceTest.java"), StandardCharsets.UTF_8);
    assertThat(doc).contains("```java\n" + test + "```\n");
  }
}
