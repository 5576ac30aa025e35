package io.petrel.codegen;

import com.github.javaparser.JavaParser;
import com.github.javaparser.ParseResult;
import com.github.javaparser.ParserConfiguration;
import com.github.javaparser.ast.CompilationUnit;
import com.palantir.javapoet.JavaFile;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * The generator: finds {@code @RpcService} interfaces in the request's source roots and writes their stubs
 * and dispatchers. Independent of Maven (the Mojo only builds the request), so tests drive it directly.
 *
 * <p>Incremental in two steps: when the fingerprint of all inputs (source files, classpath entries, the
 * generator itself) matches the last run's, nothing is parsed or written; otherwise every file is generated
 * in memory but written only when its content changed, so the compiler sees unchanged timestamps.
 */
public final class Codegen {
  /** Kept in the output directory; not a .java file, so the compiler ignores it. */
  static final String STATE_FILE_NAME = ".petrel-codegen-state";

  private final Consumer<String> debug;

  public Codegen(Consumer<String> debug) {
    this.debug = debug;
  }

  public CodegenResult run(CodegenRequest request) throws CodegenException, IOException {
    Path out = request.outputDirectory().toAbsolutePath().normalize();
    List<Path> sources = sourceFiles(request.sourceRoots(), out);
    String fingerprint = fingerprint(request, sources);
    State previous = State.read(request.stateFile());
    if (request.incremental() && previous != null && previous.fingerprint.equals(fingerprint)
        && previous.files.stream().allMatch(f -> Files.isRegularFile(out.resolve(f)))) {
      return new CodegenResult(previous.services, true, List.of(), List.of(), List.of(), previous.warnings);
    }

    List<Problem> warnings = new ArrayList<>();
    List<ServiceModel> services = readServices(request, sources, warnings);
    Map<String, String> files = new LinkedHashMap<>();
    for (ServiceModel service : services) {
      for (JavaFile file : new ServiceWriter(service).write()) {
        String relative = (file.packageName().isEmpty() ? "" : file.packageName().replace('.', '/') + "/")
            + file.typeSpec().name() + ".java";
        files.put(relative, file.toString());
      }
    }

    List<String> written = new ArrayList<>();
    List<String> unchanged = new ArrayList<>();
    for (Map.Entry<String, String> e : files.entrySet()) {
      Path target = out.resolve(e.getKey());
      byte[] content = e.getValue().getBytes(StandardCharsets.UTF_8);
      if (Files.isRegularFile(target) && java.util.Arrays.equals(Files.readAllBytes(target), content)) {
        unchanged.add(e.getKey());
      } else {
        Files.createDirectories(target.getParent());
        Files.write(target, content);
        written.add(e.getKey());
        debug.accept("wrote " + target);
      }
    }
    List<String> deleted = deleteStale(out, previous, files.keySet());
    List<String> names = services.stream().map(s -> s.iface().canonicalName()).toList();
    new State(fingerprint, names, List.copyOf(files.keySet()), warnings).write(request.stateFile());
    return new CodegenResult(names, false, written, unchanged, deleted, warnings);
  }

  /** The valid services; their warnings, sorted by file and line, are added to {@code warnings}. */
  private List<ServiceModel> readServices(CodegenRequest request, List<Path> sources, List<Problem> warnings)
      throws CodegenException, IOException {
    JavaParser parser = new JavaParser(new ParserConfiguration()
        .setLanguageLevel(ParserConfiguration.LanguageLevel.JAVA_21)
        .setCharacterEncoding(StandardCharsets.UTF_8));
    List<Problem> problems = new ArrayList<>();
    List<ServiceModel> services = new ArrayList<>();
    List<ServiceReader.Named> named = new ArrayList<>();
    try (TypeIndex types = new TypeIndex(request.classpath())) {
      Map<Path, CompilationUnit> candidates = new LinkedHashMap<>();
      for (Path file : sources) {
        String text = Files.readString(file, StandardCharsets.UTF_8);
        ParseResult<CompilationUnit> parsed = parser.parse(text);
        boolean candidate = text.contains("RpcService");
        if (!parsed.isSuccessful() || parsed.getResult().isEmpty()) {
          if (candidate) {
            var first = parsed.getProblems().get(0);
            int line = first.getLocation().flatMap(l -> l.getBegin().getRange()).map(r -> r.begin.line).orElse(0);
            problems.add(new Problem(file, line, "cannot parse this file (" + first.getMessage().lines().findFirst()
                .orElse("syntax error") + "); fix the syntax so that its @RpcService interface can be read"));
          } else {
            debug.accept("skipped " + file + ": JavaParser cannot parse it and it declares no @RpcService");
          }
          continue;
        }
        CompilationUnit cu = parsed.getResult().get();
        types.addSource(cu, file.getFileName().toString().equals("package-info.java"));
        if (candidate) {
          candidates.put(file, cu);
        }
      }
      ServiceReader reader = new ServiceReader(types, problems, warnings);
      for (Map.Entry<Path, CompilationUnit> e : candidates.entrySet()) {
        services.addAll(reader.read(e.getKey(), e.getValue()));
      }
      named.addAll(reader.named());
    }
    Map<String, ServiceModel> byClass = new LinkedHashMap<>();
    for (ServiceModel s : services) {
      ServiceModel other = byClass.putIfAbsent(s.rpcClass().canonicalName(), s);
      if (other != null) {
        problems.add(new Problem(s.source(), s.line(), "services " + other.iface().canonicalName() + " ("
            + other.where() + ") and " + s.iface().canonicalName() + " would both generate "
            + s.rpcClass().canonicalName() + ": rename one of the interfaces"));
      }
    }
    // Over every service read, valid or not: a clash is reported with the services' other problems.
    Map<String, ServiceReader.Named> byName = new LinkedHashMap<>();
    for (ServiceReader.Named s : named) {
      ServiceReader.Named other = byName.putIfAbsent(s.serviceName(), s);
      if (other != null) {
        problems.add(new Problem(s.source(), s.line(), "services " + other.iface() + " (" + other.where()
            + ") and " + s.iface() + " have the same name on the wire, '" + s.serviceName() + "': a server"
            + " serves only one of them and a client of one would reach the other; give each its own @RpcService"
            + " name"));
      }
    }
    Comparator<Problem> byPlace = Comparator.comparing((Problem p) -> p.file().toString())
        .thenComparingInt(Problem::line);
    warnings.sort(byPlace);
    if (!problems.isEmpty()) {
      problems.sort(byPlace);
      throw new CodegenException(problems, warnings);
    }
    return services;
  }

  private static List<Path> sourceFiles(List<Path> roots, Path out) throws IOException {
    Set<Path> files = new TreeSet<>();
    for (Path root : roots) {
      Path r = root.toAbsolutePath().normalize();
      if (!Files.isDirectory(r) || r.startsWith(out)) {
        continue;
      }
      try (Stream<Path> walk = Files.walk(r)) {
        walk.filter(p -> p.toString().endsWith(".java") && Files.isRegularFile(p)).forEach(files::add);
      }
    }
    return List.copyOf(files);
  }

  /**
   * Deletes what an earlier run generated and this one did not. Only files recorded in the state are touched,
   * so a mistaken output directory never loses files the plugin did not write.
   */
  private List<String> deleteStale(Path out, @Nullable State previous, Set<String> keep) throws IOException {
    List<String> deleted = new ArrayList<>();
    if (previous == null) {
      return deleted;
    }
    for (String relative : previous.files) {
      Path p = out.resolve(relative).normalize();
      if (!keep.contains(relative) && p.startsWith(out) && Files.deleteIfExists(p)) {
        deleted.add(relative);
        debug.accept("deleted stale " + p);
      }
    }
    return deleted;
  }

  /** Changes when any input that can change the output changes: sources, classpath, options, the plugin. */
  private static String fingerprint(CodegenRequest request, List<Path> sources) throws IOException {
    MessageDigest md;
    try {
      md = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every JVM", e);
    }
    update(md, "out " + request.outputDirectory().toAbsolutePath().normalize());
    update(md, "generator " + describe(generatorLocation()));
    for (Path p : sources) {
      update(md, "source " + describe(p));
    }
    for (Path p : request.classpath()) {
      update(md, "classpath " + describe(p));
      if (Files.isDirectory(p)) {
        // A directory of classes (the main classes, for generate-test; another module's, in a reactor build) is
        // read as a jar is, whose size and date stand for its content: its class files stand for it here (a main
        // package-info.class that became @NullMarked changes the test sources' FooAsync).
        try (Stream<Path> walk = Files.walk(p)) {
          for (Path f : walk.filter(f -> f.toString().endsWith(".class")).sorted().toList()) {
            update(md, "  " + describe(f));
          }
        }
      }
    }
    return HexFormat.of().formatHex(md.digest());
  }

  private static Path generatorLocation() {
    try {
      return Path.of(Codegen.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException | RuntimeException e) {
      return Path.of("unknown");
    }
  }

  private static String describe(Path p) {
    try {
      if (!Files.exists(p)) {
        return p + " absent";
      }
      BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class);
      return a.isDirectory() ? p + " dir" : p + " " + a.size() + " " + a.lastModifiedTime().toMillis();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void update(MessageDigest md, String s) {
    md.update(s.getBytes(StandardCharsets.UTF_8));
    md.update((byte) '\n');
  }

  /**
   * The last run: its input fingerprint, the services it found, the files it generated and its warnings (an
   * up-to-date run repeats them, so that a warning does not vanish from the second build on).
   */
  private record State(String fingerprint, List<String> services, List<String> files, List<Problem> warnings) {
    static @Nullable State read(Path file) throws IOException {
      if (!Files.isRegularFile(file)) {
        return null;
      }
      String fingerprint = null;
      List<String> services = new ArrayList<>();
      List<String> files = new ArrayList<>();
      List<Problem> warnings = new ArrayList<>();
      for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
        int space = line.indexOf(' ');
        if (space < 0) {
          continue;
        }
        String value = line.substring(space + 1);
        switch (line.substring(0, space)) {
          case "fingerprint" -> fingerprint = value;
          case "service" -> services.add(value);
          case "file" -> files.add(value);
          case "warning" -> {
            // line TAB message TAB file (the message holds no tab; the path comes last, whatever it holds)
            String[] parts = value.split("\t", 3);
            if (parts.length == 3 && !parts[0].isEmpty() && parts[0].length() < 10
                && parts[0].chars().allMatch(Character::isDigit)) {
              warnings.add(new Problem(Path.of(parts[2]), Integer.parseInt(parts[0]), parts[1]));
            }
          }
          default -> { }
        }
      }
      return fingerprint == null ? null : new State(fingerprint, services, files, warnings);
    }

    void write(Path file) throws IOException {
      StringBuilder sb = new StringBuilder("fingerprint ").append(fingerprint).append('\n');
      services.forEach(s -> sb.append("service ").append(s).append('\n'));
      files.forEach(f -> sb.append("file ").append(f).append('\n'));
      warnings.forEach(w -> sb.append("warning ").append(w.line()).append('\t')
          .append(w.message().replace('\t', ' ').replace('\n', ' ')).append('\t').append(w.file()).append('\n'));
      Files.createDirectories(file.toAbsolutePath().getParent());
      Files.writeString(file, sb, StandardCharsets.UTF_8);
    }
  }
}
