package io.petrel.rpc;

import org.jspecify.annotations.Nullable;

/**
 * A blocking server method: runs on the server's business executor and returns the response (or throws).
 * For oneway methods the returned value is ignored; a method that returns nothing answers null.
 */
@FunctionalInterface
public interface UnaryHandler<Req, Resp> {
  @Nullable Resp invoke(Req request) throws Exception;
}
