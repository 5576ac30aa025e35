package io.petrel.rpc.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.Map;

/**
 * A fuzz test's committed seed corpus, made by code: writes it where Jazzer replays it (a resource directory next
 * to the test class) and checks that what is committed is what the code makes.
 */
public final class SeedCorpus {
  private SeedCorpus() {}

  /**
   * Writes {@code seeds} under {@code moduleDir}/src/test/resources/&lt;package of owner&gt;/{@code corpus}.
   */
  public static void write(Class<?> owner, String corpus, Map<String, byte[]> seeds, String moduleDir)
      throws IOException {
    Path dir = Paths.get(moduleDir).resolve("src/test/resources")
        .resolve(owner.getPackageName().replace('.', '/')).resolve(corpus);
    for (Map.Entry<String, byte[]> seed : seeds.entrySet()) {
      Path file = dir.resolve(seed.getKey());
      Files.createDirectories(file.getParent());
      Files.write(file, seed.getValue());
    }
    System.out.println("wrote " + seeds.size() + " seeds to " + dir);
  }

  /**
   * Fails unless every seed is committed as the resource {@code corpus/name} next to {@code owner}, byte for byte.
   *
   * @param maker the class whose {@code main} rewrites the corpus, named in the failure message
   */
  public static void assertCommitted(Class<?> owner, String corpus, Map<String, byte[]> seeds, Class<?> maker)
      throws IOException {
    for (Map.Entry<String, byte[]> seed : seeds.entrySet()) {
      String resource = corpus + "/" + seed.getKey();
      try (InputStream committed = owner.getResourceAsStream(resource)) {
        if (committed == null) {
          throw new AssertionError(resource + " is not committed (run " + maker.getSimpleName()
              + ".main to write it)");
        }
        if (!Arrays.equals(committed.readAllBytes(), seed.getValue())) {
          throw new AssertionError(resource + " differs from what " + maker.getSimpleName() + " makes (run its"
              + " main to rewrite it)");
        }
      }
    }
  }

  /** The parts one after the other. */
  public static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      out.writeBytes(p);
    }
    return out.toByteArray();
  }
}
