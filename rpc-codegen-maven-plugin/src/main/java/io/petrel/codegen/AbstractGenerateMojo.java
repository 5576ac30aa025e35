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
import org.apache.maven.plugins.annotations.Parameter;
import org.apache.maven.project.MavenProject;

/**
 * What the {@code generate} and {@code generate-test} goals share: read the sources, generate, add the output as a
 * source root. The goals differ only in which sources, which classpath and which source root (main or test).
 */
abstract class AbstractGenerateMojo extends AbstractMojo {

  @Parameter(defaultValue = "${project}", readonly = true, required = true)
  protected MavenProject project;

  /** Skips generation (the output directory is then not added as a source root either). */
  @Parameter(property = "petrel.codegen.skip", defaultValue = "false")
  private boolean skip;

  /**
   * When true (the default), a build whose inputs (sources, compile classpath, plugin) did not change reads and
   * writes nothing, and a regenerated file whose content did not change is not rewritten.
   */
  @Parameter(property = "petrel.codegen.incremental", defaultValue = "true")
  private boolean incremental;

  /** The directories to read, or null/empty for the default ({@link #defaultSourceRoots}). */
  protected abstract List<File> sourceDirectories();

  protected abstract File outputDirectory();

  /** The module's source roots of this scope, as they are when the goal runs. */
  protected abstract List<String> defaultSourceRoots();

  /** The classpath of this scope, with the directory this scope's classes are compiled to. */
  protected abstract List<String> classpathElements() throws DependencyResolutionRequiredException;

  protected abstract String ownClasses();

  protected abstract void addSourceRoot(String directory);

  @Override
  public void execute() throws MojoExecutionException, MojoFailureException {
    File outputDirectory = outputDirectory();
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
      warn(e.warnings());
      throw new MojoFailureException(e.getMessage(), e);
    } catch (IOException | RuntimeException e) {
      throw new MojoExecutionException("Petrel codegen failed while reading sources or writing "
          + outputDirectory + ": " + e, e);
    }
    addSourceRoot(outputDirectory.getAbsolutePath());
    warn(result.warnings());
    report(result);
  }

  /** One WARNING line per warning, "file:line: message", as the errors are listed and as javac writes them. */
  private void warn(List<Problem> warnings) {
    warnings.forEach(w -> getLog().warn(w.toString()));
  }

  private List<Path> sourceRoots(Path out) {
    List<Path> roots = new ArrayList<>();
    List<File> sourceDirectories = sourceDirectories();
    if (sourceDirectories != null && !sourceDirectories.isEmpty()) {
      sourceDirectories.forEach(d -> roots.add(d.toPath()));
    } else {
      defaultSourceRoots().forEach(r -> roots.add(Path.of(r)));
    }
    roots.removeIf(r -> r.toAbsolutePath().normalize().equals(out.toAbsolutePath().normalize()));
    return roots;
  }

  private List<Path> classpath() throws MojoExecutionException {
    try {
      String ownClasses = ownClasses();
      List<Path> cp = new ArrayList<>();
      for (String element : classpathElements()) {
        if (!element.equals(ownClasses)) {
          cp.add(Path.of(element));
        }
      }
      return cp;
    } catch (DependencyResolutionRequiredException e) {
      throw new MojoExecutionException("the classpath is not resolved: " + e.getMessage(), e);
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
