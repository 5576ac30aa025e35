package io.petrel.rpc.stub;

import io.petrel.rpc.CallOptions;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.StatusException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * How a checked exception that a service method declares reaches its caller as its own type, with neither
 * reflection nor Java serialization.
 *
 * <p><b>What travels.</b> When a handler throws an exception other than {@link StatusException} (and other than an
 * {@link Error}) that is an instance of one the method declares
 * ({@link io.petrel.rpc.MethodDescriptor#declaredExceptions()}, which generated code fills), the server answers
 * with its status (UNKNOWN unless an {@link io.petrel.rpc.ExceptionMapper} says otherwise, description
 * {@code "ExceptionClass: message"}) and adds to the response's metadata:
 * <ul>
 *   <li>{@value #CLASS_KEY}: one entry per class name, the thrown class first, then its superclasses up to, and
 *     not including, {@code java.lang.Exception} or {@code java.lang.RuntimeException} (at most
 *     {@value #MAX_CLASS_NAMES} names);</li>
 *   <li>{@value #MESSAGE_KEY}: the exception's message, absent when it is null; a message over
 *     {@value #MAX_MESSAGE_BYTES} bytes of UTF-8 is cut and ends with {@code "... [truncated N bytes]"}.</li>
 * </ul>
 * An exception the method does not declare sends neither its class nor its message (UNKNOWN with a description
 * that says so, or the mapper's status), unless the server was built with
 * {@code exceptionDetails(ExceptionDetails.ALL)}, which sends every exception's as above.
 *
 * <p><b>What the generated stub does with it.</b> For a method that declares {@code throws X}, where {@code X} has
 * a constructor {@code X(String)} that the generated class can call, the stub catches the call's
 * {@code StatusException}, looks for the first of the names above that is one of the declared types and throws
 * {@code new X(message)} with the {@code StatusException} as its cause. Anything else (no names, no declared type
 * among them, a client that predates this) stays the {@code StatusException}.
 *
 * <p>Generated code uses this class; it is stable for it. One instance serves one call.
 */
public final class DeclaredExceptions implements Consumer<Metadata> {
  /** Metadata key of the thrown exception's class names, most specific first. */
  public static final String CLASS_KEY = "petrel-exception-class";
  /** Metadata key of the thrown exception's message. */
  public static final String MESSAGE_KEY = "petrel-exception-message";
  /** At most this many class names are sent. */
  public static final int MAX_CLASS_NAMES = 8;
  /** A longer message is cut to this many bytes of UTF-8, mark included. */
  public static final int MAX_MESSAGE_BYTES = 4096;

  private final @Nullable Consumer<Metadata> next;
  private final CallOptions options;
  private volatile Metadata metadata = Metadata.EMPTY;

  private DeclaredExceptions(CallOptions options) {
    this.next = options.responseMetadataListener();
    this.options = options.withResponseMetadataListener(this);
  }

  /** Starts one call: keeps the server's response metadata, and still passes it to the options' own listener. */
  public static DeclaredExceptions capture(CallOptions options) {
    return new DeclaredExceptions(options);
  }

  /** The options to make the call with. */
  public CallOptions options() {
    return options;
  }

  @Override
  public void accept(Metadata md) {
    metadata = md;
    if (next != null) {
      next.accept(md);
    }
  }

  /**
   * The index in {@code declared} of the first class name the server sent that is one of {@code declared}, or -1.
   * {@code failure} is the call's exception; a failure made on this side (a deadline, a lost connection) comes
   * without the server's metadata and never matches.
   */
  public int match(StatusException failure, String... declared) {
    List<String> names = metadata.getAll(CLASS_KEY);
    for (String name : names) {
      for (int i = 0; i < declared.length; i++) {
        if (declared[i].equals(name)) {
          return i;
        }
      }
    }
    return -1;
  }

  /** The exception's message as the server sent it, or null. */
  public @Nullable String message() {
    return metadata.get(MESSAGE_KEY);
  }

  /** {@code declared} with {@code failure} as its cause (added as suppressed if its constructor set a cause). */
  public static <T extends Throwable> T withCause(T declared, StatusException failure) {
    try {
      declared.initCause(failure);
    } catch (IllegalStateException | IllegalArgumentException alreadySet) {
      declared.addSuppressed(failure);
    }
    return declared;
  }

  /**
   * The async stub's form: {@code future}, except that a failure matching one of the declared types completes
   * the returned future with the exception {@code factory} makes for that index (null: the failure as is).
   */
  public <T> CompletableFuture<T> map(CompletableFuture<T> future, Factory factory, String... declared) {
    CompletableFuture<T> out = new CompletableFuture<>();
    out.whenComplete((value, error) -> {
      if (out.isCancelled()) {
        future.cancel(false); // the caller gave up: so does the call
      }
    });
    future.whenComplete((value, error) -> {
      if (error == null) {
        out.complete(value);
        return;
      }
      Throwable cause = error;
      while (cause instanceof java.util.concurrent.CompletionException && cause.getCause() != null) {
        cause = cause.getCause();
      }
      Throwable mapped = null;
      if (cause instanceof StatusException se) {
        int i = match(se, declared);
        if (i >= 0) {
          Throwable made = factory.create(i, message());
          mapped = made == null ? null : withCause(made, se);
        }
      }
      out.completeExceptionally(mapped != null ? mapped : cause);
    });
    return out;
  }

  /** Makes the declared exception of index {@code i} from the message (generated as a switch). */
  @FunctionalInterface
  public interface Factory {
    @Nullable Throwable create(int index, @Nullable String message);
  }
}
