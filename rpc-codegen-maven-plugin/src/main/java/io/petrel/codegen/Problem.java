package io.petrel.codegen;

import java.nio.file.Path;

/**
 * One thing wrong with a service interface, at a place in a source file: an error (the build fails) or a warning
 * (the build goes on; something is accepted that does not do what it seems to).
 *
 * @param file the source file
 * @param line 1-based line, or 0 when the problem has no single line
 * @param message what is wrong and what to do instead
 */
public record Problem(Path file, int line, String message) {
  @Override
  public String toString() {
    return line > 0 ? file + ":" + line + ": " + message : file + ": " + message;
  }
}
