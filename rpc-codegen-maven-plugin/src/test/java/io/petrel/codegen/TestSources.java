package io.petrel.codegen;

import com.google.protobuf.StringValue;
import io.petrel.rpc.RpcService;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

/** Test inputs: the service sources under src/test/resources/services and the jars they compile against. */
final class TestSources {
  private TestSources() {}

  static Path serviceCase(String name) {
    return resource("services/" + name);
  }

  static Path resource(String path) {
    try {
      return Path.of(TestSources.class.getClassLoader().getResource(path).toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  /** protobuf-java, rpc-core and JSpecify: what a user's module has on its compile classpath. */
  static List<Path> classpath() {
    return List.of(locationOf(StringValue.class), locationOf(RpcService.class), locationOf(io.netty.buffer.ByteBuf.class),
        locationOf(org.slf4j.Logger.class), locationOf(org.jspecify.annotations.Nullable.class));
  }

  private static Path locationOf(Class<?> c) {
    try {
      return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  static CodegenResult generate(List<Path> roots, Path out) throws CodegenException, IOException {
    return new Codegen(s -> { }).run(new CodegenRequest(roots, classpath(), out, out.resolve(Codegen.STATE_FILE_NAME),
        true));
  }

  /** Writes {@code files} (relative path to content) under {@code root}. */
  static void write(Path root, Map<String, String> files) throws IOException {
    for (Map.Entry<String, String> e : files.entrySet()) {
      Path p = root.resolve(e.getKey());
      Files.createDirectories(p.getParent());
      Files.writeString(p, e.getValue(), StandardCharsets.UTF_8);
    }
  }

  static List<Path> javaFiles(Path... roots) throws IOException {
    List<Path> files = new ArrayList<>();
    for (Path root : roots) {
      try (Stream<Path> walk = Files.walk(root)) {
        walk.filter(p -> p.toString().endsWith(".java")).sorted().forEach(files::add);
      }
    }
    return files;
  }

  /** Compiles the sources with -Werror-level lint into {@code classes}; returns javac's output. */
  static String compile(Path classes, Path... roots) throws IOException {
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    List<String> args = new ArrayList<>(List.of("-d", classes.toString(), "-Xlint:all,-processing", "-Werror",
        "--release", "17", "-cp", String.join(java.io.File.pathSeparator, classpath().stream().map(Path::toString)
            .toList())));
    javaFiles(roots).forEach(p -> args.add(p.toString()));
    java.io.StringWriter log = new java.io.StringWriter();
    int rc = javac.run(null, null, new java.io.PrintStream(new java.io.ByteArrayOutputStream()) {
      @Override
      public void write(byte[] b, int off, int len) {
        log.write(new String(b, off, len, StandardCharsets.UTF_8));
      }
    }, args.toArray(new String[0]));
    if (rc != 0) {
      throw new AssertionError("javac failed:\n" + log);
    }
    return log.toString();
  }
}
