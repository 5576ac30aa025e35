package io.petrel.rpc;

/**
 * Hears when a server starts serving and when it is about to drain, for example to register the server in a
 * service registry once its port is bound and to deregister it before it tells its clients to go away. Added with
 * {@link RpcServerBuilder#addLifecycleListener}; each method is called at most once per server, on the thread
 * that calls {@link RpcServer#start()} or {@link RpcServer#shutdown()} / {@link RpcServer#shutdownNow()}, in the
 * order the listeners were added. A listener that throws is logged (WARN) and does not stop the server or the
 * other listeners; one that blocks delays that method.
 */
public interface ServerLifecycleListener {

  /**
   * The server is serving: bound, so {@link RpcServer#address()} and {@link RpcServer#port()} are valid, and
   * taking calls. Called from {@link RpcServer#start()} before it returns; not called if the start fails.
   */
  default void onServing(RpcServer server) {}

  /**
   * The server is about to drain; called first in {@link RpcServer#shutdown()} or {@link RpcServer#shutdownNow()}
   * (whichever comes first), only if {@link #onServing} was. After a graceful {@code shutdown()} the server
   * keeps serving as before for {@link RpcServerBuilder#drainDelay} (so that clients hear of the deregistration
   * and stop sending here), then tells its connections to go away (GOAWAY) and lets calls in flight finish.
   */
  default void onDraining(RpcServer server) {}
}
