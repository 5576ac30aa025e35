package io.petrel.rpc.internal;

import io.petrel.rpc.MethodDescriptor;

/** The server's meters as its dispatcher records them (the core's; absent without a meter registry). */
public interface ServerRecorder {
  /** The meters of {@code method}'s calls. */
  CallRecorder forMethod(MethodDescriptor<?, ?> method);

  /** A call of {@code service} was refused before it ran (business pool full). */
  void rejected(String service);
}
