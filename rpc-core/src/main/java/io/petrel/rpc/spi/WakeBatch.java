package io.petrel.rpc.spi;

/**
 * The wake-ups of blocking callers that a transport thread gathers while it reads a batch of responses, and makes
 * at the end of the batch ({@link #flush}): the core's, made with {@link ClientTransportContext#newWakeBatch()},
 * one per connection, and handed to the core with each response ({@link ClientStream#wakeBatch()}). The core
 * posts a finished blocking call to its caller without waking it; {@link #flush} wakes a few, who wake the others.
 */
public interface WakeBatch {
  /** Wakes the callers posted to since the last flush (some directly, the rest through them). Transport thread. */
  void flush();

  /** True if no posted caller still awaits its wake-up. */
  boolean isEmpty();
}
