package io.petrel.rpc.stub;

import io.petrel.rpc.AsyncUnaryHandler;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.ServerMethodDefinition;
import io.petrel.rpc.Status;
import io.petrel.rpc.UnaryHandler;
import java.util.concurrent.CompletionStage;

/**
 * Server-side helpers that generated dispatchers call. A generated service has one handler object per
 * implementation that switches on the method id (no reflection, no per-method lambda classes); these methods
 * attach that untyped handler to each typed descriptor and check what the implementation returned.
 */
public final class ServerCalls {
  private ServerCalls() {}

  /**
   * The blocking definition of {@code method}, served by a generated handler that casts the request to the
   * descriptor's request type and returns a value of its response type.
   */
  @SuppressWarnings("unchecked")
  public static <Req, Resp> ServerMethodDefinition<Req, Resp> blocking(
      MethodDescriptor<Req, Resp> method, UnaryHandler<Object, Object> handler) {
    return ServerMethodDefinition.of(method, (UnaryHandler<Req, Resp>) (UnaryHandler<?, ?>) handler);
  }

  /** The non-blocking definition of {@code method}; see {@link #blocking}. */
  @SuppressWarnings("unchecked")
  public static <Req, Resp> ServerMethodDefinition<Req, Resp> async(
      MethodDescriptor<Req, Resp> method, AsyncUnaryHandler<Object, Object> handler) {
    return ServerMethodDefinition.ofAsync(method, (AsyncUnaryHandler<Req, Resp>) (AsyncUnaryHandler<?, ?>) handler);
  }

  /**
   * A protobuf response must not be null: it travels as its own bytes, which cannot say "null". The caller
   * gets INTERNAL naming the method rather than an encoder failure.
   */
  public static <T> T message(T response, MethodDescriptor<?, ?> method) {
    if (response == null) {
      throw Status.INTERNAL.withDescription(method.fullName() + " returned null; a protobuf message response"
          + " cannot be null (return its getDefaultInstance())").asException();
    }
    return response;
  }

  /**
   * An asynchronous implementation must return a future, never null. Typed as {@code Object} for the generated
   * handler, which serves methods of several response types.
   */
  @SuppressWarnings("unchecked")
  public static CompletionStage<Object> future(CompletionStage<?> response, MethodDescriptor<?, ?> method) {
    if (response == null) {
      throw Status.INTERNAL.withDescription(method.fullName() + " returned a null CompletableFuture;"
          + " return a future and complete it with the response").asException();
    }
    return (CompletionStage<Object>) response;
  }

  /**
   * {@link #future} of a method whose interface returns the primitive {@code type}: a null completion has no
   * value to send (written as 0 it would reach the caller as a plausible answer), so the caller gets INTERNAL
   * naming the method instead.
   */
  public static CompletionStage<Object> primitiveFuture(
      CompletionStage<?> response, MethodDescriptor<?, ?> method, Class<?> type) {
    return future(response, method).thenApply(value -> {
      if (value == null) {
        String boxed = type == int.class ? "Integer" : type == char.class ? "Character"
            : Character.toUpperCase(type.getName().charAt(0)) + type.getName().substring(1);
        throw Status.INTERNAL.withDescription(method.fullName() + " completed its future with null; its response type "
            + type.getName() + " cannot be null (complete it with a value, or return " + boxed
            + " in the interface if null is meant to be a value)").asException();
      }
      return value;
    });
  }

  /** {@link #future} whose value is a protobuf message, checked like {@link #message}. */
  public static CompletionStage<Object> messageFuture(CompletionStage<?> response, MethodDescriptor<?, ?> method) {
    return future(response, method).thenApply(value -> message(value, method));
  }
}
