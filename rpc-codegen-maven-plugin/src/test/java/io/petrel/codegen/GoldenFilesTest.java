package io.petrel.codegen;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The generated sources of representative services, compared with the files under src/test/resources/golden.
 * After an intended change to the generator, regenerate them with
 * {@code ./mvnw -pl rpc-codegen-maven-plugin test -Dtest=GoldenFilesTest -Dpetrel.golden.update=true} and
 * review the diff.
 */
class GoldenFilesTest {
  private static final boolean UPDATE = Boolean.getBoolean("petrel.golden.update");

  @TempDir
  Path tmp;

  @ParameterizedTest
  @ValueSource(strings = {"greeter", "collections", "options", "evolution", "nullness", "nullmarked"})
  void generatedSourcesMatchTheGoldenFilesAndCompileWithoutWarnings(String name) throws Exception {
    Path input = TestSources.serviceCase(name);
    Path out = tmp.resolve("out");
    CodegenResult result = TestSources.generate(List.of(input), out);
    assertThat(result.written()).isNotEmpty();
    if (name.equals("evolution")) {
      // Billing.refund declares an exception without a (String) constructor on purpose: the stub leaves it a
      // StatusException, and the plugin says so.
      assertThat(result.warnings()).as("the evolution case's one deliberate warning").singleElement()
          .satisfies(w -> assertThat(w.message()).startsWith("method refund declares throws OpaqueException, but"));
    } else {
      assertThat(result.warnings()).as("the golden services are what the plugin expects: no warnings").isEmpty();
    }

    Path golden = goldenDir().resolve(name);
    List<Path> generated = TestSources.javaFiles(out);
    if (UPDATE) {
      for (Path file : generated) {
        Path target = golden.resolve(out.relativize(file).toString());
        Files.createDirectories(target.getParent());
        Files.copy(file, target, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      }
    }
    List<String> expectedFiles = TestSources.javaFiles(golden).stream()
        .map(p -> golden.relativize(p).toString().replace('\\', '/')).toList();
    assertThat(result.written()).containsExactlyInAnyOrderElementsOf(expectedFiles);
    for (String relative : expectedFiles) {
      assertThat(Files.readString(out.resolve(relative), StandardCharsets.UTF_8))
          .as("%s differs from golden/%s/%s; if the change is intended, rerun with -Dpetrel.golden.update=true",
              relative, name, relative)
          .isEqualTo(Files.readString(golden.resolve(relative), StandardCharsets.UTF_8));
    }

    TestSources.compile(Files.createDirectories(tmp.resolve("classes")), input, out);
  }

  /** The source tree's golden directory (not the copy in target/test-classes), so that updates land in git. */
  private static Path goldenDir() {
    String dir = System.getProperty("petrel.golden.dir");
    return dir != null && !dir.isEmpty() ? Path.of(dir) : Path.of("src/test/resources/golden");
  }
}
