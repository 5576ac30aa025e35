package io.petrel.rpc;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The outcome of a call: a {@link Code}, a human-readable description and, on the side that produced it, an
 * optional cause. Immutable. A status other than {@link Code#OK} travels to the caller as a
 * {@link StatusException}; the cause never crosses the wire (the description carries what the caller needs).
 */
public final class Status {

  /**
   * The status codes Petrel uses. The numeric values are part of the wire protocol (one byte in the response
   * header) and never change; they match gRPC's codes where both have the code.
   */
  public enum Code {
    /** The call completed normally. */
    OK(0),
    /** The call was cancelled, typically by the caller. */
    CANCELLED(1),
    /** An error with no better code: an unexpected exception in a handler, an unknown status byte. */
    UNKNOWN(2),
    /** The request was malformed or could not be decoded by the server. */
    INVALID_ARGUMENT(3),
    /** The deadline passed before the call completed. The server may or may not have run it. */
    DEADLINE_EXCEEDED(4),
    /** A requested entity was not found (application use). */
    NOT_FOUND(5),
    /** What a client tried to create exists already (application use). */
    ALREADY_EXISTS(6),
    /** The caller is known but may not do this (application use: authorization, as UNAUTHENTICATED is for identity). */
    PERMISSION_DENIED(7),
    /** A limit was hit: frame size, business pool and queue, calls per connection, pending calls. */
    RESOURCE_EXHAUSTED(8),
    /**
     * The call was made in a state where it cannot work, e.g. a blocking call on the client's own event loop;
     * the message says what to change. Retrying as is fails again.
     */
    FAILED_PRECONDITION(9),
    /**
     * The operation was aborted, typically by a concurrency conflict (a failed optimistic transaction); the caller
     * may retry the whole read-modify-write (application use; Petrel never retries it by itself).
     */
    ABORTED(10),
    /** An argument is past the valid range of the current state, e.g. reading past the end (application use). */
    OUT_OF_RANGE(11),
    /** The service or method is not registered on the server. */
    UNIMPLEMENTED(12),
    /** A bug: a broken invariant, an encoding failure of a response, a protocol violation by the peer. */
    INTERNAL(13),
    /** The server cannot be reached or stopped serving this call (connection lost, shutting down). Retry. */
    UNAVAILABLE(14),
    /** Unrecoverable data loss or corruption (application use). */
    DATA_LOSS(15),
    /** The caller did not present valid credentials. */
    UNAUTHENTICATED(16);

    private static final Code[] BY_VALUE = new Code[256];

    static {
      for (Code c : values()) {
        BY_VALUE[c.value] = c;
      }
    }

    private final int value;

    Code(int value) {
      this.value = value;
    }

    /** The code's number on the wire. */
    public int value() {
      return value;
    }

    /** The code for a wire value; an unknown value maps to {@link #UNKNOWN}. */
    public static Code fromValue(int value) {
      Code c = value >= 0 && value < BY_VALUE.length ? BY_VALUE[value] : null;
      return c == null ? UNKNOWN : c;
    }

    /** The status of this code with no description. */
    public Status toStatus() {
      return CANONICAL[ordinal()];
    }
  }

  private static final Status[] CANONICAL = new Status[Code.values().length];

  static {
    for (Code c : Code.values()) {
      CANONICAL[c.ordinal()] = new Status(c, null, null);
    }
  }

  public static final Status OK = Code.OK.toStatus();
  public static final Status CANCELLED = Code.CANCELLED.toStatus();
  public static final Status UNKNOWN = Code.UNKNOWN.toStatus();
  public static final Status INVALID_ARGUMENT = Code.INVALID_ARGUMENT.toStatus();
  public static final Status DEADLINE_EXCEEDED = Code.DEADLINE_EXCEEDED.toStatus();
  public static final Status NOT_FOUND = Code.NOT_FOUND.toStatus();
  public static final Status ALREADY_EXISTS = Code.ALREADY_EXISTS.toStatus();
  public static final Status PERMISSION_DENIED = Code.PERMISSION_DENIED.toStatus();
  public static final Status RESOURCE_EXHAUSTED = Code.RESOURCE_EXHAUSTED.toStatus();
  public static final Status FAILED_PRECONDITION = Code.FAILED_PRECONDITION.toStatus();
  public static final Status ABORTED = Code.ABORTED.toStatus();
  public static final Status OUT_OF_RANGE = Code.OUT_OF_RANGE.toStatus();
  public static final Status UNIMPLEMENTED = Code.UNIMPLEMENTED.toStatus();
  public static final Status INTERNAL = Code.INTERNAL.toStatus();
  public static final Status UNAVAILABLE = Code.UNAVAILABLE.toStatus();
  public static final Status DATA_LOSS = Code.DATA_LOSS.toStatus();
  public static final Status UNAUTHENTICATED = Code.UNAUTHENTICATED.toStatus();

  private final Code code;
  private final @Nullable String description;
  private final @Nullable Throwable cause;

  private Status(Code code, @Nullable String description, @Nullable Throwable cause) {
    this.code = Objects.requireNonNull(code, "code");
    this.description = description;
    this.cause = cause;
  }

  /** The status for a wire code value. */
  public static Status fromCodeValue(int value) {
    return Code.fromValue(value).toStatus();
  }

  /**
   * The status a throwable stands for: the status of a {@link StatusException}, otherwise {@link #UNKNOWN}
   * described by the exception's class and message, with the throwable as cause.
   */
  public static Status fromThrowable(Throwable t) {
    Throwable cur = t;
    while (cur != null) {
      if (cur instanceof StatusException se) {
        return se.status();
      }
      cur = cur.getCause();
    }
    return UNKNOWN.withDescription(describe(t)).withCause(t);
  }

  /** "ClassName: message" for a throwable, the form in which server exceptions reach callers. */
  public static String describe(Throwable t) {
    String msg = t.getMessage();
    return msg == null ? t.getClass().getName() : t.getClass().getName() + ": " + msg;
  }

  public Code code() {
    return code;
  }

  /** The description, or null when there is none. */
  public @Nullable String description() {
    return description;
  }

  /** The local cause, or null. Causes are never sent over the wire. */
  public @Nullable Throwable cause() {
    return cause;
  }

  public boolean isOk() {
    return code == Code.OK;
  }

  public Status withDescription(String description) {
    return Objects.equals(this.description, description) ? this : new Status(code, description, cause);
  }

  /** This status with the description extended by {@code ": " + more} (or set to it if there was none). */
  public Status augmentDescription(String more) {
    if (more == null) {
      return this;
    }
    return new Status(code, description == null ? more : description + ": " + more, cause);
  }

  public Status withCause(Throwable cause) {
    return this.cause == cause ? this : new Status(code, description, cause);
  }

  /** A new exception carrying this status. */
  public StatusException asException() {
    return new StatusException(this);
  }

  @Override
  public boolean equals(Object o) {
    // Equality on code and description; causes are local detail.
    return o instanceof Status s && s.code == code && Objects.equals(s.description, description);
  }

  @Override
  public int hashCode() {
    return Objects.hash(code, description);
  }

  @Override
  public String toString() {
    return description == null ? code.name() : code.name() + ": " + description;
  }
}
