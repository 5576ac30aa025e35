package io.petrel.rpc.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.petrel.rpc.Endpoint;
import io.petrel.rpc.Status;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * How long an endpoint whose server refused a call for a limit stays refusing ({@link ClientSubchannel#refused}):
 * 10 ms, doubled by each pause that ends in another refusal, up to 1 s; refusals within a pause change nothing; a
 * call the server answers starts again from 10 ms. The pauses are measured on the real clock, so the bounds are
 * wide (a 10 ms pause against a 640 ms one).
 */
class RefusalPauseTest {
  private static final class Endpoint1 extends ClientSubchannel {
    Endpoint1() {
      super(new Endpoint("10.0.0.1", 7000, 1));
    }

    @Override
    public boolean isAvailable() {
      return true;
    }

    @Override
    public CompletionStage<Void> close() {
      return CompletableFuture.completedFuture(null);
    }
  }

  /** Milliseconds from a refusal until the endpoint is no longer refusing (at most 5 s). */
  private static long pauseMs(ClientSubchannel s) {
    long start = System.nanoTime();
    s.refused();
    assertThat(s.isRefusing()).isTrue();
    long until = start + TimeUnit.SECONDS.toNanos(5);
    while (s.isRefusing()) {
      assertThat(System.nanoTime()).as("the pause ended").isLessThan(until);
      Thread.onSpinWait();
    }
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
  }

  @Test
  void aPauseDoublesOnlyWhenTheRefusalsGoOnAfterItAndAnAnswerStartsItOver() {
    Endpoint1 s = new Endpoint1();
    assertThat(s.isRefusing()).isFalse();

    // Eight calls refused at once (sent before the first refusal came back): one pause, not 10 ms << 7.
    long start = System.nanoTime();
    for (int i = 0; i < 8; i++) {
      s.refused();
    }
    while (s.isRefusing()) {
      Thread.onSpinWait();
    }
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).as("a burst's one pause, ms")
        .isLessThan(300);

    // The second to seventh pauses in a row: 20, 40, 80, 160, 320 and 640 ms.
    long last = 0;
    for (int i = 2; i <= 7; i++) {
      last = pauseMs(s);
    }
    assertThat(last).as("the seventh pause in a row, ms").isGreaterThanOrEqualTo(600);

    // A call the server answered: the next pause is the shortest again. Calls ended otherwise (the client's
    // deadline, a lost connection) say nothing about the server's room.
    s.callStarted();
    s.callEnded(Status.DEADLINE_EXCEEDED, 1);
    s.callStarted();
    s.callEnded(Status.UNAVAILABLE, 1);
    assertThat(pauseMs(s)).as("after calls the server did not answer, ms").isGreaterThanOrEqualTo(600);
    s.callStarted();
    s.callEnded(Status.OK, 1);
    assertThat(pauseMs(s)).as("after an answer, ms").isLessThan(300);
  }
}
