package io.petrel.rpc;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A method descriptor bound to its server-side handler: exactly one of a blocking {@link UnaryHandler} or a
 * non-blocking {@link AsyncUnaryHandler}.
 */
public final class ServerMethodDefinition<Req, Resp> {
  private final MethodDescriptor<Req, Resp> method;
  private final @Nullable UnaryHandler<Req, Resp> handler;
  private final @Nullable AsyncUnaryHandler<Req, Resp> asyncHandler;

  private ServerMethodDefinition(MethodDescriptor<Req, Resp> method, @Nullable UnaryHandler<Req, Resp> handler,
      @Nullable AsyncUnaryHandler<Req, Resp> asyncHandler) {
    this.method = Objects.requireNonNull(method, "method");
    this.handler = handler;
    this.asyncHandler = asyncHandler;
  }

  public static <Req, Resp> ServerMethodDefinition<Req, Resp> of(
      MethodDescriptor<Req, Resp> method, UnaryHandler<Req, Resp> handler) {
    return new ServerMethodDefinition<>(method, Objects.requireNonNull(handler, "handler"), null);
  }

  public static <Req, Resp> ServerMethodDefinition<Req, Resp> ofAsync(
      MethodDescriptor<Req, Resp> method, AsyncUnaryHandler<Req, Resp> handler) {
    return new ServerMethodDefinition<>(method, null, Objects.requireNonNull(handler, "handler"));
  }

  public MethodDescriptor<Req, Resp> method() {
    return method;
  }

  /** The blocking handler, or null when the method is asynchronous. */
  public @Nullable UnaryHandler<Req, Resp> handler() {
    return handler;
  }

  /** The non-blocking handler, or null when the method is blocking. */
  public @Nullable AsyncUnaryHandler<Req, Resp> asyncHandler() {
    return asyncHandler;
  }

  public boolean isAsync() {
    return asyncHandler != null;
  }
}
