package io.petrel.rpc.testing;

import static io.petrel.rpc.testing.CallFailures.assertFails;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.petrel.rpc.Status;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** What CallFailures says when a call did not fail as expected: each case names what happened instead. */
class CallFailuresTest {

  @Test
  void aCallThatReturnedNormallyIsSaidToHaveReturned() {
    assertThatThrownBy(() -> assertFails(() -> { }, Status.Code.UNKNOWN)).isInstanceOf(AssertionError.class)
        .hasMessage("the call returned normally; it should have failed with a StatusException");
    assertThatThrownBy(() -> assertFails(CompletableFuture.completedFuture("ok"), Status.Code.UNKNOWN))
        .isInstanceOf(AssertionError.class).hasMessage("the call succeeded with ok; a failure was expected");
  }

  @Test
  void anotherExceptionIsNamedAndAnotherCodeOrMessageIsShown() {
    assertThatThrownBy(() -> assertFails(() -> {
      throw new IllegalStateException("boom");
    }, Status.Code.UNKNOWN)).isInstanceOf(AssertionError.class).hasMessageContaining("IllegalStateException: boom");
    assertThatThrownBy(() -> assertFails(() -> {
      throw Status.NOT_FOUND.withDescription("no order zz").asException();
    }, Status.Code.UNKNOWN)).isInstanceOf(AssertionError.class).hasMessageContaining("NOT_FOUND");
    assertThatThrownBy(() -> assertFails(() -> {
      throw Status.NOT_FOUND.withDescription("no order zz").asException();
    }, Status.Code.NOT_FOUND, "no order yy")).isInstanceOf(AssertionError.class).hasMessageContaining("no order zz");
    assertThat(assertFails(() -> {
      throw Status.NOT_FOUND.withDescription("no order zz").asException();
    }, Status.Code.NOT_FOUND, "order zz").status().description()).isEqualTo("no order zz");
  }
}
