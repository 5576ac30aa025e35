package io.petrel.codegen;

import java.util.List;

/**
 * The service interfaces are invalid; each {@link Problem} names file, line, what is wrong and the fix. The
 * warnings found on the way are kept too, so that a failed build still shows them.
 */
public final class CodegenException extends Exception {
  private static final long serialVersionUID = 1L;

  private final transient List<Problem> problems;
  private final transient List<Problem> warnings;

  public CodegenException(List<Problem> problems) {
    this(problems, List.of());
  }

  public CodegenException(List<Problem> problems, List<Problem> warnings) {
    super(format(problems));
    this.problems = List.copyOf(problems);
    this.warnings = List.copyOf(warnings);
  }

  public List<Problem> problems() {
    return problems;
  }

  /** The warnings of the same run (not part of the message). */
  public List<Problem> warnings() {
    return warnings;
  }

  private static String format(List<Problem> problems) {
    StringBuilder sb = new StringBuilder("Petrel codegen found ").append(problems.size())
        .append(problems.size() == 1 ? " problem" : " problems").append(" in @RpcService interfaces:");
    for (Problem p : problems) {
      sb.append("\n  ").append(p);
    }
    return sb.toString();
  }
}
