package io.petrel.rpc;

import java.net.SocketAddress;

/**
 * What a server handler can know about the call it is serving: method, request metadata, deadline and peer.
 * Available as {@link #current()} on the thread that runs a blocking handler, and when an asynchronous handler
 * is invoked (capture it there if a later stage needs it).
 */
public final class ServerContext {
  private static final ThreadLocal<ServerContext> CURRENT = new ThreadLocal<>();

  private final MethodDescriptor<?, ?> method;
  private final Metadata metadata;
  private final Deadline deadline;
  private final SocketAddress peer;
  private volatile boolean cancelled;

  /** Created by transports for each incoming call. */
  public ServerContext(MethodDescriptor<?, ?> method, Metadata metadata, Deadline deadline, SocketAddress peer) {
    this.method = method;
    this.metadata = metadata;
    this.deadline = deadline;
    this.peer = peer;
  }

  /** The context of the call being served on this thread, or null outside a handler. */
  public static ServerContext current() {
    return CURRENT.get();
  }

  /** Sets the current context and returns the previous one, to be restored with {@link #restore}. */
  public ServerContext attach() {
    ServerContext prev = CURRENT.get();
    CURRENT.set(this);
    return prev;
  }

  /** Restores the context that {@link #attach()} returned. */
  public static void restore(ServerContext previous) {
    if (previous == null) {
      CURRENT.remove();
    } else {
      CURRENT.set(previous);
    }
  }

  public MethodDescriptor<?, ?> method() {
    return method;
  }

  public Metadata metadata() {
    return metadata;
  }

  /** The caller's deadline as seen on this server, or null if the caller set none. */
  public Deadline deadline() {
    return deadline;
  }

  public SocketAddress peer() {
    return peer;
  }

  /** True once the call no longer has a caller waiting: deadline passed, connection closed or call cancelled. */
  public boolean isCancelled() {
    return cancelled || (deadline != null && deadline.isExpired());
  }

  /** Marks the call cancelled (transports call this when the connection closes). */
  public void cancel() {
    cancelled = true;
  }
}
