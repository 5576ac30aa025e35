package io.petrel.codegen;

import java.io.File;
import java.util.List;
import org.apache.maven.artifact.DependencyResolutionRequiredException;
import org.apache.maven.plugins.annotations.LifecyclePhase;
import org.apache.maven.plugins.annotations.Mojo;
import org.apache.maven.plugins.annotations.Parameter;
import org.apache.maven.plugins.annotations.ResolutionScope;

/**
 * The {@code generate} goal for services declared in test sources (a service that exists only for a test, a fake
 * of a remote dependency): reads the test source roots, resolves types against the test classpath (the module's
 * own classes included), writes to {@code generated-test-sources/petrel} and adds it to the test source roots.
 */
@Mojo(name = "generate-test", defaultPhase = LifecyclePhase.GENERATE_TEST_SOURCES, threadSafe = true,
    requiresDependencyResolution = ResolutionScope.TEST)
public class GenerateTestMojo extends AbstractGenerateMojo {

  /**
   * Test source directories to read. Default: the module's test source roots as they are when the goal runs
   * (protoc's test output included), without the output directory.
   */
  @Parameter(property = "petrel.codegen.testSourceDirectories")
  private List<File> sourceDirectories;

  /**
   * Where the generated sources go. Files the plugin generated there earlier and that no service produces any
   * more are deleted; nothing else in the directory is touched.
   */
  @Parameter(property = "petrel.codegen.testOutputDirectory",
      defaultValue = "${project.build.directory}/generated-test-sources/petrel", required = true)
  private File outputDirectory;

  @Override
  protected List<File> sourceDirectories() {
    return sourceDirectories;
  }

  @Override
  protected File outputDirectory() {
    return outputDirectory;
  }

  @Override
  protected List<String> defaultSourceRoots() {
    return project.getTestCompileSourceRoots();
  }

  @Override
  protected List<String> classpathElements() throws DependencyResolutionRequiredException {
    return project.getTestClasspathElements();
  }

  @Override
  protected String ownClasses() {
    return project.getBuild().getTestOutputDirectory();
  }

  @Override
  protected void addSourceRoot(String directory) {
    project.addTestCompileSourceRoot(directory);
  }
}
