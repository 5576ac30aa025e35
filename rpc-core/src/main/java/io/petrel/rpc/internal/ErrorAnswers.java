package io.petrel.rpc.internal;

import io.petrel.rpc.ExceptionDetails;
import io.petrel.rpc.ExceptionMapper;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.stub.DeclaredExceptions;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a server sends when a handler fails: the status (the exception's own, the user's mapper's, or UNKNOWN),
 * its description capped with a visible mark, and the metadata that lets a generated stub rethrow a declared
 * exception (see {@link DeclaredExceptions}). An exception's class names and message reach the caller only if
 * {@link #exposes} says so (the server's {@link ExceptionDetails}).
 */
public final class ErrorAnswers {
  private static final Logger log = LoggerFactory.getLogger(ErrorAnswers.class);

  /** Descriptions are for humans: longer ones are cut to this many bytes of UTF-8, mark included. */
  public static final int MAX_DESCRIPTION_BYTES = 64 * 1024;

  private ErrorAnswers() {}

  /** The {@link StatusException} in {@code t}'s cause chain, which decides the answer's status; or null. */
  private static @Nullable StatusException statusException(Throwable t) {
    for (Throwable cur = t; cur != null; cur = cur.getCause()) {
      if (cur instanceof StatusException se) {
        return se;
      }
      if (cur.getCause() == cur) {
        break;
      }
    }
    return null;
  }

  /** Whether {@code t}'s cause chain holds a {@link StatusException}, whose status is then the answer's. */
  public static boolean carriesStatus(Throwable t) {
    return statusException(t) != null;
  }

  /**
   * Whether the answer to {@code t} names its classes, so that a stub that declares one rethrows it as itself: an
   * exception other than a {@link StatusException}, unless a status in its cause chain decides the answer and it
   * only wraps that status (an unchecked exception, an {@code ExecutionException} from {@code future.get()}, an
   * {@code InvocationTargetException}). A checked exception always does, whatever its cause: a declared exception
   * that a stub rebuilt from the next service's answer (its cause that answer's {@code StatusException}) and the
   * handler throws on reaches its own caller as itself, with the status that answer had.
   */
  private static boolean answersAsItself(Throwable t) {
    if (!(t instanceof Exception) || t instanceof StatusException) {
      return false;
    }
    return statusException(t) == null || !(t instanceof RuntimeException
        || t instanceof java.util.concurrent.ExecutionException
        || t instanceof java.lang.reflect.InvocationTargetException);
  }

  /**
   * Whether the caller may learn the class and message of {@code t}, thrown by {@code method}'s handler: always
   * with {@link ExceptionDetails#ALL}; with {@link ExceptionDetails#DECLARED}, when {@code t} is an instance of a
   * class the method declares ({@link MethodDescriptor#declaredExceptions()}).
   */
  public static boolean exposes(Throwable t, MethodDescriptor<?, ?> method, ExceptionDetails details) {
    if (details == ExceptionDetails.ALL) {
      return true;
    }
    List<String> declared = method.declaredExceptions();
    if (declared.isEmpty()) {
      return false;
    }
    for (Class<?> c = t.getClass(); c != null; c = c.getSuperclass()) {
      if (declared.contains(c.getName())) {
        return true;
      }
    }
    return false;
  }

  /**
   * The description of an exception the caller may not learn of (see {@link #exposes}): what happened and what
   * to do, without the exception's class or message.
   */
  public static String undeclared(MethodDescriptor<?, ?> method) {
    return method.fullName() + " failed on the server: its handler threw an exception the method does not declare"
        + " (the server logs it; declare it on the method, map it with RpcServer.builder().exceptionMapper, or let"
        + " the server send it with exceptionDetails(ALL))";
  }

  /**
   * The status for what a handler threw: its own, the mapper's (if any), or UNKNOWN, described as
   * {@code "Class: message"} if {@link #exposes} allows it, else by {@link #undeclared}.
   */
  public static Status statusOf(Throwable t, MethodDescriptor<?, ?> method, @Nullable ExceptionMapper mapper,
      ExceptionDetails details) {
    StatusException se = statusException(t);
    if (se != null) {
      return se.status();
    }
    Status mapped = mapped(t, method, mapper);
    if (mapped != null) {
      return mapped;
    }
    String description = exposes(t, method, details) ? Status.describe(t) : undeclared(method);
    return Status.UNKNOWN.withDescription(description).withCause(t);
  }

  /**
   * The status {@code mapper} chose for what a handler threw (not a {@link StatusException}: that is its own
   * answer), or null: no mapper, it returned null or OK (WARN), or it threw (WARN).
   */
  public static @Nullable Status mapped(Throwable t, MethodDescriptor<?, ?> method, @Nullable ExceptionMapper mapper) {
    if (statusException(t) != null) {
      return null;
    }
    if (mapper != null) {
      try {
        Status mapped = mapper.toStatus(method, t);
        if (mapped != null && !mapped.isOk()) {
          return mapped.cause() == null ? mapped.withCause(t) : mapped;
        }
        if (mapped != null) {
          log.warn("exceptionMapper returned OK for {} thrown by {}; an error cannot be OK: the caller gets UNKNOWN",
              t.getClass().getName(), method.fullName());
        }
      } catch (RuntimeException | Error e) {
        log.warn("exceptionMapper threw on {} thrown by {}; the caller gets UNKNOWN", t.getClass().getName(),
            method.fullName(), e);
      }
    }
    return null;
  }

  /**
   * {@code responseMetadata} plus the thrown exception's class names and message, when {@code t} is an exception
   * that a stub may rethrow as its own type (see {@link #answersAsItself}; never a {@link StatusException} or an
   * {@link Error}) and the caller may learn of it ({@link #exposes}).
   */
  public static Metadata metadataOf(Throwable t, MethodDescriptor<?, ?> method, ExceptionDetails details,
      Metadata responseMetadata) {
    if (!answersAsItself(t) || !exposes(t, method, details)) {
      return responseMetadata;
    }
    Metadata md = responseMetadata;
    int n = 0;
    for (Class<?> c = t.getClass(); c != null && c != Exception.class && c != RuntimeException.class
        && n < DeclaredExceptions.MAX_CLASS_NAMES; c = c.getSuperclass(), n++) {
      md = md.with(DeclaredExceptions.CLASS_KEY, c.getName());
    }
    String message = t.getMessage();
    if (message != null) {
      md = md.with(DeclaredExceptions.MESSAGE_KEY, cut(message, DeclaredExceptions.MAX_MESSAGE_BYTES));
    }
    return md;
  }

  /** {@code status} with a description of at most {@link #MAX_DESCRIPTION_BYTES} bytes of UTF-8. */
  public static Status capped(Status status) {
    String d = status.description();
    if (d == null || d.length() <= MAX_DESCRIPTION_BYTES / 3) {
      return status; // three bytes per char at most: short enough without encoding it
    }
    String cut = cut(d, MAX_DESCRIPTION_BYTES);
    return cut == d ? status : status.withDescription(cut);
  }

  /**
   * {@code s} if its UTF-8 form fits in {@code maxBytes}, else its longest prefix (whole characters) followed by
   * {@code "... [truncated N bytes]"} that fits, N being the bytes left out.
   */
  public static String cut(String s, int maxBytes) {
    byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
    if (bytes.length <= maxBytes) {
      return s;
    }
    // The mark's length depends on N; N has at most as many digits as the whole length.
    int markBytes = ("... [truncated " + bytes.length + " bytes]").length();
    int end = Math.max(0, maxBytes - markBytes);
    while (end > 0 && (bytes[end] & 0xC0) == 0x80) {
      end--; // not inside a character's bytes
    }
    return new String(bytes, 0, end, StandardCharsets.UTF_8) + "... [truncated " + (bytes.length - end)
        + " bytes]";
  }
}
