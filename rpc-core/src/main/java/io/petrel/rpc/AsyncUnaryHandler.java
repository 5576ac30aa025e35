package io.petrel.rpc;

import java.util.concurrent.CompletionStage;

/**
 * A non-blocking server method: returns at once with a stage that completes later with the response or an
 * exception. The stage may complete on any thread.
 */
@FunctionalInterface
public interface AsyncUnaryHandler<Req, Resp> {
  CompletionStage<Resp> invoke(Req request) throws Exception;
}
