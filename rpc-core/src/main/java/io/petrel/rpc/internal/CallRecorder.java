package io.petrel.rpc.internal;

import io.petrel.rpc.Status;

/** Records the end of one call in the meters of a client or a server (the core's). */
public interface CallRecorder {
  /** Records nothing: a client or server without a meter registry. */
  CallRecorder NOOP = (code, nanos, requestBytes, responseBytes) -> { };

  /**
   * @param nanos how long the call took
   * @param requestBytes the encoded request's size, or -1 if unknown
   * @param responseBytes the encoded response's size, or -1 if none
   */
  void record(Status.Code code, long nanos, int requestBytes, int responseBytes);
}
