package io.petrel.rpc.internal;

import io.petrel.rpc.Deadline;
import org.jspecify.annotations.Nullable;

/** A transport's call future that knows its deadline, so a blocking caller can enforce it itself. */
public interface CallDeadline {
  /** When the call must end, or null for none. */
  @Nullable Deadline callDeadline();
}
