package io.petrel.codegen;

import java.util.List;

/** The service interfaces are invalid; each {@link Problem} names file, line, what is wrong and the fix. */
public final class CodegenException extends Exception {
  private static final long serialVersionUID = 1L;

  private final transient List<Problem> problems;

  public CodegenException(List<Problem> problems) {
    super(format(problems));
    this.problems = List.copyOf(problems);
  }

  public List<Problem> problems() {
    return problems;
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
