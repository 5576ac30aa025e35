package io.petrel.examples.build;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * petrel-bom stays complete: it manages every library module of the build (all but the examples and the
 * benchmarks, which are not published), at the build's version, and inherits no third-party versions.
 */
class BomTest {
  /** Modules that are built but not published for users to depend on. */
  private static final Set<String> NOT_PUBLISHED = Set.of("rpc-examples", "rpc-benchmarks", "petrel-bom",
      "petrel-spring-boot-sample");

  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

  @Test
  void theBomManagesEveryPublishedModuleAtTheBuildsVersion() throws Exception {
    Document root = parse(ROOT.resolve("pom.xml"));
    Document bom = parse(ROOT.resolve("petrel-bom/pom.xml"));
    String version = child(root.getDocumentElement(), "version").getTextContent().trim();

    assertThat(child(bom.getDocumentElement(), "parent")).as("petrel-bom must not inherit petrel-parent").isNull();
    assertThat(child(bom.getDocumentElement(), "version").getTextContent().trim()).isEqualTo(version);

    List<String> published = new ArrayList<>();
    for (Element module : children(child(root.getDocumentElement(), "modules"), "module")) {
      String dir = module.getTextContent().trim();
      Document pom = parse(ROOT.resolve(dir).resolve("pom.xml"));
      String artifactId = child(pom.getDocumentElement(), "artifactId").getTextContent().trim();
      if (!NOT_PUBLISHED.contains(artifactId)) {
        published.add(artifactId);
      }
    }
    List<String> managed = new ArrayList<>();
    Element deps = child(child(bom.getDocumentElement(), "dependencyManagement"), "dependencies");
    for (Element dep : children(deps, "dependency")) {
      assertThat(child(dep, "groupId").getTextContent()).isEqualTo("io.petrel");
      assertThat(child(dep, "version").getTextContent()).isEqualTo("${project.version}");
      managed.add(child(dep, "artifactId").getTextContent().trim());
    }
    assertThat(managed).as("add the new module to petrel-bom/pom.xml").containsExactlyInAnyOrderElementsOf(published);
  }

  private static Document parse(Path pom) throws Exception {
    assertThat(pom).exists();
    DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
    f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
    try (var in = Files.newInputStream(pom)) {
      return f.newDocumentBuilder().parse(in);
    }
  }

  private static Element child(Element parent, String name) {
    List<Element> all = children(parent, name);
    return all.isEmpty() ? null : all.get(0);
  }

  private static List<Element> children(Element parent, String name) {
    List<Element> out = new ArrayList<>();
    for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
      if (n instanceof Element e && e.getTagName().equals(name)) {
        out.add(e);
      }
    }
    return out;
  }
}
