package io.petrel.rpc.spi;

import io.petrel.rpc.Status;

/** Records the end of one call in the client's meters (the core's; a no-op without a meter registry). */
public interface CallRecorder {
  /**
   * @param nanos how long the call took
   * @param requestBytes the encoded request's size, or -1 if unknown
   * @param responseBytes the encoded response's size, or -1 if none
   */
  void record(Status.Code code, long nanos, int requestBytes, int responseBytes);
}
