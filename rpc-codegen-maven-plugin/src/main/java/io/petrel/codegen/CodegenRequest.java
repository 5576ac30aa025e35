package io.petrel.codegen;

import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/**
 * What the generator needs, independent of Maven: where to read sources, where to write, and the compile
 * classpath used to tell protobuf messages and enums of dependencies from other classes.
 *
 * @param sourceRoots directories of Java sources; every {@code @RpcService} interface in them is generated,
 *     and their other types (protoc output included) resolve the types that service methods use
 * @param classpath jars and class directories of the compile classpath (without this module's own classes)
 * @param outputDirectory where generated sources go; files generated there by an earlier run and no longer produced are deleted
 * @param stateFile where the fingerprint of the last run's inputs is kept, for incremental builds
 * @param incremental false to regenerate even when the inputs did not change
 */
public record CodegenRequest(
    List<Path> sourceRoots, List<Path> classpath, Path outputDirectory, Path stateFile, boolean incremental) {

  public CodegenRequest {
    sourceRoots = List.copyOf(sourceRoots);
    classpath = List.copyOf(classpath);
    Objects.requireNonNull(outputDirectory, "outputDirectory");
    Objects.requireNonNull(stateFile, "stateFile");
  }
}
