package io.petrel.rpc.internal;

import io.petrel.rpc.Deadline;

/** A transport's call future that knows its deadline, so a blocking caller can enforce it itself. */
public interface CallDeadline {
  Deadline callDeadline();
}
