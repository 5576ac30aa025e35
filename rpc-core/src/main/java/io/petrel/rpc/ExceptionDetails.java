package io.petrel.rpc;

/**
 * What a server tells a caller about an exception its handler threw (other than a {@link StatusException}, whose
 * status is the answer): set with {@link RpcServerBuilder#exceptionDetails}, default {@link #DECLARED}.
 *
 * <p>An exception's class names and message are the server's internals (a NullPointerException's text, an SQL
 * error, a file path) unless the method declares it: a caller must not learn them by making the server fail. The
 * server logs every such exception with its stack trace (rate-limited), whatever this option says. The same
 * holds for the exception of a marshaller that cannot encode a handler's response: the caller gets INTERNAL
 * "server could not encode the response of svc/method", followed by the exception's class and message only with
 * {@link #ALL}.
 */
public enum ExceptionDetails {
  /**
   * The default. An exception that is an instance of one the method declares ({@link
   * MethodDescriptor#declaredExceptions()}, which generated code fills from the interface's {@code throws}) travels
   * as itself: its class names and message in the response's metadata (so that the generated stub rethrows it,
   * see {@link io.petrel.rpc.stub.DeclaredExceptions}), and, unless an {@link ExceptionMapper} chose the status,
   * UNKNOWN with the description {@code "ExceptionClass: message"}. Any other exception sends neither its class
   * nor its message: the caller gets UNKNOWN with a description that says the handler threw an exception the
   * method does not declare, or the status and description the exceptionMapper chose, unchanged.
   */
  DECLARED,
  /**
   * Every exception's class names and message travel, declared or not (the behaviour before this option): for
   * internal services whose callers may see the server's internals.
   */
  ALL
}
