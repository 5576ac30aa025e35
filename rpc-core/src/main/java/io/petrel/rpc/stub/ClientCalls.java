package io.petrel.rpc.stub;

import io.petrel.rpc.CallOptions;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.RpcClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Client-side helpers that generated stubs call; each is a line or two so that stubs stay readable. */
public final class ClientCalls {
  private static final Logger log = LoggerFactory.getLogger(ClientCalls.class);

  private ClientCalls() {}

  /**
   * Sends a oneway request from a blocking stub without waiting for the write: the caller's {@code void}
   * method returns at once. A failure to send reaches no caller (that is the contract of oneway), so it is
   * logged at DEBUG; the async stub returns the send future for callers who want to know.
   */
  public static <Req> void fireAndForget(
      RpcClient client, MethodDescriptor<Req, ?> method, Req request, CallOptions options) {
    client.oneway(method, request, options).whenComplete((ignored, error) -> {
      if (error != null) {
        log.debug("oneway call {} was not sent", method.fullName(), error);
      }
    });
  }

  /**
   * Rejects a null protobuf argument before anything is sent: a message sent as its own bytes has no way to
   * say "null" (an empty body is the default instance).
   */
  public static <T> T requireMessage(T message, MethodDescriptor<?, ?> method, String parameter) {
    if (message == null) {
      throw new NullPointerException(method.fullName() + ": argument '" + parameter
          + "' is null; a protobuf message argument cannot be null (pass its getDefaultInstance())");
    }
    return message;
  }
}
