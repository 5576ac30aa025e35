package io.petrel.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The package arrows of rpc-core's main code, read from its sources (an import, or a class named with its
 * package): the API names no other package, {@code spi} names no package but the API and no builder, and no
 * two packages refer to each other through others. docs/architecture.md ("Package arrows") prints the graph.
 */
class PackageArrowsTest {
  private static final Path SOURCES = Path.of("src/main/java");
  private static final String API = "io.petrel.rpc";
  /** A class named with its package: the package is the lower-case segments before the class's name. */
  private static final Pattern REFERENCE = Pattern.compile("\\bio\\.petrel\\.rpc((?:\\.[a-z][a-z0-9]*)*)\\.[A-Z]");
  /** package -> packages it refers to, each with the classes that do. */
  private static Map<String, Map<String, Set<String>>> arrows() throws IOException {
    Map<String, Map<String, Set<String>>> graph = new TreeMap<>();
    List<Path> files;
    try (Stream<Path> walk = Files.walk(SOURCES)) {
      files = walk.filter(p -> p.toString().endsWith(".java")).toList();
    }
    assertThat(files).as("rpc-core's sources under %s", SOURCES.toAbsolutePath()).hasSizeGreaterThan(50);
    for (Path f : files) {
      String pkg = SOURCES.relativize(f.getParent()).toString().replace(f.getFileSystem().getSeparator(), ".");
      String cls = f.getFileName().toString().replace(".java", "");
      String src = Files.readString(f, StandardCharsets.UTF_8)
          .replaceAll("(?s)/\\*.*?\\*/", "") // comments name classes for the reader, not the compiler
          .replaceAll("//[^\n]*", "");
      Matcher m = REFERENCE.matcher(src);
      while (m.find()) {
        String target = API + m.group(1);
        if (!target.equals(pkg)) {
          graph.computeIfAbsent(pkg, k -> new TreeMap<>()).computeIfAbsent(target, k -> new TreeSet<>()).add(cls);
        }
      }
    }
    return graph;
  }

  @Test
  void spiDependsOnTheApiAndNeverOnTheCoresRuntimeOrABuilder() throws IOException {
    Map<String, Set<String>> fromSpi = arrows().getOrDefault(API + ".spi", Map.of());
    // Interfaces and configs on API types only: the server's and client's runtimes are internal.
    Map<String, Set<String>> notApi = new TreeMap<>(fromSpi);
    notApi.remove(API);
    assertThat(notApi).as("packages other than the API that spi refers to, with the classes that do").isEmpty();
    Set<String> builders = Set.of("RpcClientBuilder", "RpcServerBuilder", "AbstractRpcBuilder");
    try (Stream<Path> walk = Files.walk(SOURCES.resolve("io/petrel/rpc/spi"))) {
      for (Path f : walk.filter(p -> p.toString().endsWith(".java")).toList()) {
        String src = Files.readString(f, StandardCharsets.UTF_8).replaceAll("(?s)/\\*.*?\\*/", "")
            .replaceAll("//[^\n]*", "");
        for (String b : builders) {
          assertThat(src).as("%s names the builder %s", f.getFileName(), b).doesNotContain(b);
        }
      }
    }
  }

  @Test
  void theApiNamesNoOtherPackageOfRpcCore() throws IOException {
    // As io.grpc never imports io.grpc.internal: the builders find the core through RpcProvider.
    Map<String, Set<String>> fromApi = arrows().getOrDefault(API, Map.of());
    assertThat(fromApi).as("packages the API refers to, with the classes that do").isEmpty();
  }

  @Test
  void noPackageCircle() throws IOException {
    Map<String, Map<String, Set<String>>> graph = arrows();
    assertThat(circles(graph)).as("package circles in rpc-core; arrows: %s", graph).isEmpty();
    assertThat(graph.keySet()).as("the graph was read").contains(API + ".spi", API + ".internal");
    // The check itself finds a circle when there is one.
    assertThat(circles(Map.of("a", Map.of("b", Set.of("A")), "b", Map.of("c", Set.of("B")),
        "c", Map.of("a", Set.of("C"))))).containsExactly(List.of("c", "b", "a"));
  }

  /** The strongly connected components of more than one package (Tarjan). */
  private static List<List<String>> circles(Map<String, Map<String, Set<String>>> graph) {
    Set<String> nodes = new TreeSet<>(graph.keySet());
    graph.values().forEach(m -> nodes.addAll(m.keySet()));
    Map<String, Integer> index = new TreeMap<>();
    Map<String, Integer> low = new TreeMap<>();
    List<String> stack = new ArrayList<>();
    List<List<String>> result = new ArrayList<>();
    int[] counter = {0};
    for (String n : nodes) {
      if (!index.containsKey(n)) {
        strongConnect(n, graph, index, low, stack, result, counter);
      }
    }
    return result;
  }

  private static void strongConnect(String v, Map<String, Map<String, Set<String>>> graph,
      Map<String, Integer> index, Map<String, Integer> low, List<String> stack, List<List<String>> result,
      int[] counter) {
    index.put(v, counter[0]);
    low.put(v, counter[0]);
    counter[0]++;
    stack.add(v);
    for (String w : graph.getOrDefault(v, Map.of()).keySet()) {
      if (!index.containsKey(w)) {
        strongConnect(w, graph, index, low, stack, result, counter);
        low.put(v, Math.min(low.get(v), low.get(w)));
      } else if (stack.contains(w)) {
        low.put(v, Math.min(low.get(v), index.get(w)));
      }
    }
    if (low.get(v).equals(index.get(v))) {
      List<String> component = new ArrayList<>();
      String w;
      do {
        w = stack.remove(stack.size() - 1);
        component.add(w);
      } while (!w.equals(v));
      if (component.size() > 1) {
        result.add(component);
      }
    }
  }
}
