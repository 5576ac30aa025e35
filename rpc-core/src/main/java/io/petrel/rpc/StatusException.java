package io.petrel.rpc;

/**
 * A call failed with a {@link Status}. Unchecked, so that generated stubs can implement plain service
 * interfaces. The message is the status's {@code CODE: description}.
 */
public final class StatusException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final transient Status status;

  public StatusException(Status status) {
    super(status.toString(), status.cause());
    this.status = status;
  }

  public Status status() {
    return status;
  }

  public Status.Code code() {
    return status.code();
  }
}
