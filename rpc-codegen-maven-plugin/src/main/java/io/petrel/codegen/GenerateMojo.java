package io.petrel.codegen;

import java.io.File;
import java.util.List;
import org.apache.maven.artifact.DependencyResolutionRequiredException;
import org.apache.maven.plugins.annotations.LifecyclePhase;
import org.apache.maven.plugins.annotations.Mojo;
import org.apache.maven.plugins.annotations.Parameter;
import org.apache.maven.plugins.annotations.ResolutionScope;

/**
 * Generates, for every interface annotated {@code @RpcService} in the module's sources, a {@code FooRpc} class
 * (method descriptors, blocking and async client stubs, server binding) and a {@code FooAsync} interface, and
 * adds the output directory to the compile source roots.
 */
@Mojo(name = "generate", defaultPhase = LifecyclePhase.GENERATE_SOURCES, threadSafe = true,
    requiresDependencyResolution = ResolutionScope.COMPILE)
public class GenerateMojo extends AbstractGenerateMojo {

  /**
   * Directories whose Java sources are read: every {@code @RpcService} interface in them is generated, and
   * their other types resolve the types that service methods use. Default: the module's compile source roots
   * as they are when the goal runs (so sources generated earlier in generate-sources, such as protoc's, are
   * included), without the output directory.
   */
  @Parameter(property = "petrel.codegen.sourceDirectories")
  private List<File> sourceDirectories;

  /**
   * Where the generated sources go. Files the plugin generated there earlier and that no service produces any
   * more are deleted; nothing else in the directory is touched.
   */
  @Parameter(property = "petrel.codegen.outputDirectory",
      defaultValue = "${project.build.directory}/generated-sources/petrel", required = true)
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
    return project.getCompileSourceRoots();
  }

  @Override
  protected List<String> classpathElements() throws DependencyResolutionRequiredException {
    return project.getCompileClasspathElements();
  }

  @Override
  protected String ownClasses() {
    return project.getBuild().getOutputDirectory();
  }

  @Override
  protected void addSourceRoot(String directory) {
    project.addCompileSourceRoot(directory);
  }
}
