package io.petrel.rpc;

/**
 * A blocking server method: runs on the server's business executor and returns the response (or throws).
 * For oneway methods the returned value is ignored.
 */
@FunctionalInterface
public interface UnaryHandler<Req, Resp> {
  Resp invoke(Req request) throws Exception;
}
