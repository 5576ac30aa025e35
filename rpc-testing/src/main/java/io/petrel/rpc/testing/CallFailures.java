package io.petrel.rpc.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;

/**
 * The one way to check a failed call in a test: it failed with a {@link StatusException}, of the expected code,
 * whose description says each expected fragment. Used for blocking calls (a callable that must throw) and async
 * ones (a future that must fail, waited for a bounded time). Petrel's own tests use it, and so can yours:
 *
 * <pre>{@code
 * assertFails(() -> greeter.greetVip(request), Status.Code.UNKNOWN, "is not on the list");
 * assertFails(asyncGreeter.sayHelloLater(request), Status.Code.DEADLINE_EXCEEDED);
 * }</pre>
 */
public final class CallFailures {
  /** How long {@link #failureOf(Future)} waits for a future to end. */
  public static final Duration WAIT = Duration.ofSeconds(20);

  private CallFailures() {}

  /** The StatusException that {@code call} throws; fails the test if it throws anything else or nothing. */
  public static StatusException failureOf(ThrowingCallable call) {
    Throwable t = catchThrowable(call);
    if (t == null) {
      throw new AssertionError("the call returned normally; it should have failed with a StatusException");
    }
    assertThat(t).as("the call should have failed with a StatusException").isInstanceOf(StatusException.class);
    return (StatusException) t;
  }

  /** The StatusException the future fails with, within {@link #WAIT}; fails the test otherwise. */
  public static StatusException failureOf(Future<?> f) throws InterruptedException {
    try {
      Object value = f.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
      throw new AssertionError("the call succeeded with " + value + "; a failure was expected");
    } catch (ExecutionException e) {
      assertThat(e.getCause()).as("the call should have failed with a StatusException")
          .isInstanceOf(StatusException.class);
      return (StatusException) Objects.requireNonNull(e.getCause(), "checked above: a StatusException");
    } catch (TimeoutException e) {
      throw new AssertionError("the call did not end within " + WAIT.toSeconds() + " s");
    }
  }

  /** Asserts that {@code call} fails with {@code code} and a description containing every fragment. */
  public static StatusException assertFails(ThrowingCallable call, Status.Code code, String... fragments) {
    return check(failureOf(call), code, fragments);
  }

  /** Asserts that the future fails (within {@link #WAIT}) with {@code code} and every fragment. */
  public static StatusException assertFails(Future<?> f, Status.Code code, String... fragments)
      throws InterruptedException {
    return check(failureOf(f), code, fragments);
  }

  private static StatusException check(StatusException e, Status.Code code, String... fragments) {
    assertThat(e.status().code()).as("status of %s", e.status()).isEqualTo(code);
    for (String f : fragments) {
      assertThat(e.status().description()).as("description of %s", e.status()).contains(f);
    }
    return e;
  }
}
