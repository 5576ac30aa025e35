package io.petrel.examples.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.StringWriter;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every ```java snippet of README.md and docs/*.md compiles against the project's classes (rpc-core, the Netty
 * transport, rpc-testing, this module's example with its generated GreeterRpc and protoc's HelloRequest/HelloReply),
 * so that the docs stay true.
 *
 * <p>The convention, for whoever writes a snippet:
 * <ul>
 *   <li>Leading {@code import} lines are the snippet's imports: a snippet shows the imports it needs.</li>
 *   <li>A snippet with a {@code package} line is a whole file, compiled as is.</li>
 *   <li>A snippet whose code (after its imports) declares a type ({@code public interface Greeter ...}) is a
 *     file of its own package.</li>
 *   <li>Anything else is a fragment: its statements become the body of a method (which may throw anything) in a
 *     class of its own package.</li>
 *   <li>{@code <!-- snippet: continues -->} on the line before the fence: the snippet goes on from the file's
 *     previous snippet (its imports join, its statements follow), so that sections that build on each other
 *     compile, and run, in order.</li>
 *   <li>{@code <!-- snippet: not compiled (why) -->} on the line before the fence: an excerpt (generated code with
 *     "..."); the reason is required.</li>
 * </ul>
 * A failure names the file and the line of the snippet's fence, with javac's message.
 */
class DocSnippetsTest {
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final Pattern TYPE = Pattern.compile(
      "^(public\\s+|abstract\\s+|final\\s+|sealed\\s+)*(class|interface|enum|record|@interface)\\s+\\w+.*");
  private static final Pattern MARKER = Pattern.compile("<!--\\s*snippet:\\s*(.*?)\\s*-->");

  @TempDir
  Path out;

  /** One snippet, or several joined by "continues" markers. */
  private record Snippet(Path file, int line, List<String> imports, List<String> code, boolean hasPackage) {
    String name() {
      return ROOT.relativize(file) + ":" + line;
    }
  }

  @TestFactory
  Stream<DynamicTest> everyJavaSnippetInTheDocsCompiles() throws IOException {
    List<Path> files = new ArrayList<>();
    files.add(ROOT.resolve("README.md"));
    try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
      docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(files::add);
    }
    List<Snippet> snippets = new ArrayList<>();
    for (Path f : files) {
      snippets.addAll(snippets(f));
    }
    assertThat(snippets).as("snippets found in README.md and docs/").hasSizeGreaterThan(10);
    List<DynamicTest> tests = new ArrayList<>();
    for (int i = 0; i < snippets.size(); i++) {
      Snippet s = snippets.get(i);
      int n = i;
      tests.add(DynamicTest.dynamicTest(s.name(), () -> compile(s, "s" + n)));
    }
    return tests.stream();
  }

  private static List<Snippet> snippets(Path file) throws IOException {
    List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    List<Snippet> out = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      if (!lines.get(i).trim().equals("```java")) {
        continue;
      }
      String marker = "";
      for (int j = i - 1; j >= 0 && j >= i - 2; j--) {
        var m = MARKER.matcher(lines.get(j));
        if (m.find()) {
          marker = m.group(1);
          break;
        }
      }
      int fence = i + 1;
      List<String> body = new ArrayList<>();
      for (i++; i < lines.size() && !lines.get(i).trim().equals("```"); i++) {
        body.add(lines.get(i));
      }
      if (marker.startsWith("not compiled")) {
        assertThat(marker).as("%s:%d: say why the snippet is not compiled: <!-- snippet: not compiled (why) -->",
            file, fence).matches("not compiled \\(.+\\)");
        continue;
      }
      List<String> imports = new ArrayList<>();
      List<String> code = new ArrayList<>();
      boolean hasPackage = false;
      boolean head = true;
      for (String l : body) {
        String t = l.trim();
        if (head && (t.startsWith("import ") || t.isEmpty())) {
          if (!t.isEmpty()) {
            imports.add(t);
          }
          continue;
        }
        if (head && t.startsWith("package ")) {
          hasPackage = true;
        }
        head = false;
        code.add(l);
      }
      if (marker.equals("continues")) {
        assertThat(out).as("%s:%d: 'continues' needs an earlier snippet in the file", file, fence).isNotEmpty();
        Snippet prev = out.remove(out.size() - 1);
        List<String> joinedImports = new ArrayList<>(prev.imports());
        imports.stream().filter(x -> !joinedImports.contains(x)).forEach(joinedImports::add);
        List<String> joinedCode = new ArrayList<>(prev.code());
        joinedCode.add("// ---- " + ROOT.relativize(file) + ":" + fence);
        joinedCode.addAll(code);
        out.add(new Snippet(file, prev.line(), joinedImports, joinedCode, prev.hasPackage()));
      } else {
        out.add(new Snippet(file, fence, imports, code, hasPackage));
      }
    }
    return out;
  }

  private void compile(Snippet s, String pkg) throws IOException {
    String source;
    String className;
    String imports = String.join("\n", s.imports());
    String code = String.join("\n", s.code());
    if (s.hasPackage()) {
      source = imports.isEmpty() ? code : code.replaceFirst("(?m)^(package [^;]+;)", "$1\n" + imports);
      className = declaredType(s.code());
    } else if (s.code().stream().map(String::trim).filter(l -> !l.startsWith("@") && !l.startsWith("//")
        && !l.startsWith("/*") && !l.startsWith("*") && !l.isEmpty()).findFirst()
        .map(l -> TYPE.matcher(l).matches()).orElse(false)) {
      source = "package snippets." + pkg + ";\n" + imports + "\n" + code + "\n";
      className = declaredType(s.code());
    } else {
      className = "Snippet";
      source = "package snippets." + pkg + ";\n" + imports + "\n\nclass Snippet {\n  void snippet() throws Exception {\n"
          + code + "\n  }\n}\n";
    }
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
    JavaFileObject file = new SimpleJavaFileObject(URI.create("string:///snippets/" + pkg + "/" + className
        + ".java"), JavaFileObject.Kind.SOURCE) {
      @Override
      public CharSequence getCharContent(boolean ignoreEncodingErrors) {
        return source;
      }
    };
    try (StandardJavaFileManager files = javac.getStandardFileManager(diagnostics, Locale.ROOT,
        StandardCharsets.UTF_8)) {
      List<String> options = List.of("-proc:none", "-d", Files.createDirectories(out.resolve(pkg)).toString(),
          "-cp", System.getProperty("java.class.path"));
      StringWriter log = new StringWriter();
      boolean ok = javac.getTask(log, files, diagnostics, options, null, List.of(file)).call();
      StringBuilder why = new StringBuilder();
      for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
        if (d.getKind() == Diagnostic.Kind.ERROR) {
          why.append("\n  line ").append(d.getLineNumber()).append(" of the compiled source: ")
              .append(d.getMessage(Locale.ROOT));
        }
      }
      assertThat(ok).as("the java snippet at %s does not compile:%s\n%s\n--- compiled as ---\n%s", s.name(), why,
          log, source).isTrue();
    }
  }

  private static String declaredType(List<String> code) {
    for (String l : code) {
      var m = Pattern.compile("\\b(class|interface|enum|record)\\s+(\\w+)").matcher(l);
      if (m.find() && !l.trim().startsWith("//") && !l.trim().startsWith("*")) {
        return m.group(2);
      }
    }
    return "Snippet";
  }
}
