package io.petrel.codegen;

import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.maven.artifact.DependencyResolutionRequiredException;
import org.apache.maven.plugin.AbstractMojo;
import org.apache.maven.plugin.MojoExecutionException;
import org.apache.maven.plugin.MojoFailureException;
import org.apache.maven.plugins.annotations.LifecyclePhase;
import org.apache.maven.plugins.annotations.Mojo;
import org.apache.maven.plugins.annotations.Parameter;
import org.apache.maven.plugins.annotations.ResolutionScope;
import org.apache.maven.project.MavenProject;

/**
 * Generates, for every interface annotated {@code @RpcService} in the module's sources, a {@code FooRpc} class
 * (method descriptors, blocking and async client stubs, server binding) and a {@code FooAsync} interface, and
 * adds the output directory to the compile source roots.
 */
@Mojo(name = "generate", defaultPhase = LifecyclePhase.GENERATE_SOURCES, threadSafe = true,
    requiresDependencyResolution = ResolutionScope.COMPILE)
public class GenerateMojo extends AbstractMojo {

  @Parameter(defaultValue = "${project}", readonly = true, required = true)
  private MavenProject project;

  /** Skips generation (the output directory is then not added as a source root either). */
  @Parameter(property = "petrel.codegen.skip", defaultValue = "false")
  private boolean skip;

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

  /**
   * When true (the default), a build whose inputs (sources, compile classpath, plugin) did not change reads and
   * writes nothing, and a regenerated file whose content did not change is not rewritten.
   */
  @Parameter(property = "petrel.codegen.incremental", defaultValue = "true")
  private boolean incremental;

  @Override
  public void execute() throws MojoExecutionException, MojoFailureException {
    if (skip) {
      getLog().info("Petrel codegen skipped (petrel.codegen.skip=true)");
      return;
    }
    Path out = outputDirectory.toPath();
    CodegenRequest request = new CodegenRequest(sourceRoots(out), classpath(), out,
        out.resolve(Codegen.STATE_FILE_NAME), incremental);
    CodegenResult result;
    try {
      result = new Codegen(getLog()::debug).run(request);
    } catch (CodegenException e) {
      throw new MojoFailureException(e.getMessage(), e);
    } catch (IOException | RuntimeException e) {
      throw new MojoExecutionException("Petrel codegen failed while reading sources or writing "
          + outputDirectory + ": " + e, e);
    }
    project.addCompileSourceRoot(outputDirectory.getAbsolutePath());
    report(result);
  }

  private List<Path> sourceRoots(Path out) {
    List<Path> roots = new ArrayList<>();
    if (sourceDirectories != null && !sourceDirectories.isEmpty()) {
      sourceDirectories.forEach(d -> roots.add(d.toPath()));
    } else {
      project.getCompileSourceRoots().forEach(r -> roots.add(Path.of(r)));
    }
    roots.removeIf(r -> r.toAbsolutePath().normalize().equals(out.toAbsolutePath().normalize()));
    return roots;
  }

  private List<Path> classpath() throws MojoExecutionException {
    try {
      String ownClasses = project.getBuild().getOutputDirectory();
      List<Path> cp = new ArrayList<>();
      for (String element : project.getCompileClasspathElements()) {
        if (!element.equals(ownClasses)) {
          cp.add(Path.of(element));
        }
      }
      return cp;
    } catch (DependencyResolutionRequiredException e) {
      throw new MojoExecutionException("the compile classpath is not resolved: " + e.getMessage(), e);
    }
  }

  private void report(CodegenResult r) {
    if (r.services().isEmpty()) {
      getLog().info("Petrel codegen: no @RpcService interfaces found");
    } else if (r.upToDate()) {
      getLog().info("Petrel codegen: " + r.services().size() + " service(s) up to date, inputs unchanged "
          + r.services());
    } else {
      getLog().info("Petrel codegen: generated " + r.services().size() + " service(s) " + r.services() + ": "
          + r.written().size() + " file(s) written, " + r.unchanged().size() + " unchanged, "
          + r.deleted().size() + " stale deleted");
    }
  }
}
