package io.petrel.examples.start;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * docs/getting-started.md shows the generated-code service and its whole program as files of this package: the
 * page's blocks are these files word for word, and the program runs and prints what the page says.
 */
class GettingStartedTest {
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final Path SOURCES = ROOT.resolve("rpc-examples/src/main/java/io/petrel/examples/start");

  /** A file of this package, with Unix line ends (as the page is read line by line). */
  private static String source(String name) throws Exception {
    return Files.readString(SOURCES.resolve(name), StandardCharsets.UTF_8).replace("\r\n", "\n");
  }

  /** The page's ```java blocks that are files of this package. */
  private static List<String> pageBlocks() throws Exception {
    List<String> lines = Files.readAllLines(ROOT.resolve("docs/getting-started.md"), StandardCharsets.UTF_8);
    List<String> blocks = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).trim().equals("```java")) {
        StringBuilder b = new StringBuilder();
        for (i++; i < lines.size() && !lines.get(i).trim().equals("```"); i++) {
          b.append(lines.get(i)).append('\n');
        }
        if (b.toString().startsWith("package io.petrel.examples.start;")) {
          blocks.add(b.toString());
        }
      }
    }
    return blocks;
  }

  @Test
  void thePageShowsTheseFilesAsTheyAre() throws Exception {
    assertThat(pageBlocks()).containsExactly(source("Greeter.java"), source("GreeterMain.java"));
  }

  @Test
  void theProgramPrintsWhatThePageSays() throws Exception {
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    PrintStream original = System.out;
    System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
    try {
      GreeterMain.main(new String[0]);
    } finally {
      System.setOut(original);
    }
    assertThat(captured.toString(StandardCharsets.UTF_8).lines())
        .contains("Hello Ada, 42", "server got: a oneway line");
  }
}
