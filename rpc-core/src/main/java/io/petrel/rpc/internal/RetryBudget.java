package io.petrel.rpc.internal;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A client's retry budget, gRPC's retry throttling: a bucket of tokens, full at start, counted in thousandths.
 * Each attempt that fails with UNAVAILABLE takes a whole token; each call that succeeds gives back
 * {@code ratio} of one, up to the bucket's size; a retry is allowed only while more than half the bucket is left.
 * So while every server fails, retries stop after about half the bucket, whatever the number of calls. A hedge
 * sent on its timer takes a whole token too ({@link #tryTake}), under the same rule. One per client; thread-safe. A healthy client (bucket full) pays one volatile read per successful call.
 */
public final class RetryBudget {
  private final int max;
  private final int threshold;
  private final int perSuccess;
  private final AtomicInteger milliTokens;

  /**
   * @param tokens the bucket's size (>= 1)
   * @param ratio what a success gives back, in tokens (0 < ratio <= 1)
   */
  public RetryBudget(int tokens, double ratio) {
    this.max = Math.multiplyExact(tokens, 1000);
    this.threshold = max / 2;
    this.perSuccess = Math.max(1, (int) Math.round(ratio * 1000));
    this.milliTokens = new AtomicInteger(max);
  }

  /** An attempt failed with UNAVAILABLE: takes a token (never below zero). */
  public void onFailure() {
    int n;
    do {
      n = milliTokens.get();
      if (n == 0) {
        return;
      }
    } while (!milliTokens.compareAndSet(n, Math.max(0, n - 1000)));
  }

  /** A call succeeded: gives back a fraction of a token; nothing to do while the bucket is full. */
  public void onSuccess() {
    add(perSuccess);
  }

  /** Whether a retry may be made now: more than half the bucket is left. */
  public boolean mayRetry() {
    return milliTokens.get() > threshold;
  }

  /**
   * Takes a whole token for a hedge if a retry may be made now (more than half the bucket left); false, taking
   * nothing, otherwise. So hedges and failures draw on the same bucket, and hedging stops with retries.
   */
  public boolean tryTake() {
    int n;
    do {
      n = milliTokens.get();
      if (n <= threshold) {
        return false;
      }
    } while (!milliTokens.compareAndSet(n, n - 1000));
    return true;
  }

  /**
   * Gives back the whole token a {@link #tryTake} took for a hedge that was then not sent (the call ended, or the
   * client had no room for another attempt): a hedge that never went out costs the budget nothing.
   */
  public void giveBack() {
    add(1000);
  }

  /** Adds {@code milli} thousandths of a token, up to the bucket's size; one read while the bucket is full. */
  private void add(int milli) {
    int n;
    do {
      n = milliTokens.get();
      if (n >= max) {
        return;
      }
    } while (!milliTokens.compareAndSet(n, Math.min(max, n + milli)));
  }

  /** Tokens left, in thousandths (tests, toString). */
  public int milliTokens() {
    return milliTokens.get();
  }

  @Override
  public String toString() {
    return "RetryBudget{" + milliTokens.get() / 1000.0 + " of " + max / 1000 + " tokens}";
  }
}
