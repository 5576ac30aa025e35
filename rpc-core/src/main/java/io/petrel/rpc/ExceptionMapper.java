package io.petrel.rpc;

import org.jspecify.annotations.Nullable;

/**
 * Chooses the status a caller gets when a handler throws (or its future fails with) an exception other than
 * {@link StatusException}: set with {@code RpcServer.builder().exceptionMapper(...)}. Without a mapper, or when it
 * returns null, the status is {@code UNKNOWN}: described as {@code "ExceptionClass: message"} if the method
 * declares the exception (or the server sends every exception's details, {@link ExceptionDetails#ALL}), else by a
 * description that names neither (see {@link RpcServerBuilder#exceptionDetails}).
 *
 * <p>The mapper chooses the status only; its description is sent as it is. An exception the method declares (or
 * any, with {@link ExceptionDetails#ALL}) also sends its class names and message in the response's metadata (see
 * {@link io.petrel.rpc.stub.DeclaredExceptions}), so that a generated stub throws it as its own type, whatever
 * status the mapper chose; any other exception sends neither. A {@link StatusException} anywhere in the cause
 * chain keeps its own status and never reaches the mapper; when it is the cause of a declared checked exception (a
 * declared exception a stub rebuilt from another service's answer, thrown on by the handler), that exception's
 * class names travel too, so its caller's stub rethrows it as itself, with that status. A future the handler
 * returned that was cancelled because its call was ({@code CancellationException}) ends CANCELLED without the
 * mapper; nor does anything a handler throws while the server is being stopped with {@code shutdownNow} (the
 * caller gets UNAVAILABLE).
 *
 * <p>Called on the thread that ends the call, once per failed call. It must not block. A mapper that throws, or
 * returns an OK status, is ignored for that call (the default status is used and the mapper's own exception is
 * logged at WARN).
 */
@FunctionalInterface
public interface ExceptionMapper {

  /**
   * The status for {@code exception}, thrown by the handler of {@code method}; null for the default.
   *
   * @param exception what the handler threw, with {@code CompletionException} and {@code ExecutionException}
   *     wrappers removed
   */
  @Nullable Status toStatus(MethodDescriptor<?, ?> method, Throwable exception);
}
