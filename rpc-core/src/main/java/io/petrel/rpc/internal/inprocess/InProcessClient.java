package io.petrel.rpc.internal.inprocess;

import io.petrel.rpc.CallOptions;
import io.petrel.rpc.Deadline;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.Status;
import io.petrel.rpc.spi.ClientConfig;
import io.petrel.rpc.spi.ClientStream;
import io.petrel.rpc.spi.ClientStreamListener;
import io.petrel.rpc.spi.ClientTransport;
import io.petrel.rpc.spi.ClientTransportContext;
import io.petrel.rpc.spi.Connection;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A client of an in-process server ({@code RpcClient.builder().inProcess("name")}): no socket, no event loop.
 * Each call marshals its request into a buffer of its own and hands it to the server of that name in this
 * JVM, found at the call (so a server started after the client, or restarted, is found); the server answers
 * with a marshalled response, decoded on the caller's side. The client is one connection to that server, which
 * enforces its per-connection limits on it.
 *
 * <p>What every call needs whatever the transport (the count against {@code maxPendingCalls}, the single
 * completion, the callback executor, the response metadata, the call meters) is the core's
 * ({@link io.petrel.rpc.RpcClient}, {@code internal.ClientCall}); this class is the transport: each attempt is an
 * {@link InProcessStream}, which carries the request to the server and arms the deadline.
 *
 * <p>Deadlines run on one daemon thread shared by every in-process client of the JVM. Without a callback
 * executor, a call's future completes on the thread that ends it: the server's thread that answered (the
 * caller's own in direct mode), or that shared deadline thread; callbacks must not block there.
 * {@link #isSecure()} is true: in-process calls never leave the process.
 */
public final class InProcessClient implements ClientTransport {
  private static final Logger log = LoggerFactory.getLogger(InProcessClient.class);

  private final ClientConfig config;
  /** What the core says of the client this transport serves. */
  private final ClientTransportContext runtime;
  private final String serverName;
  private final String target;
  /** Set (under this) when the client terminates: no new connection after that. */
  private boolean terminated;
  /** This client's connection to the server of its name; replaced when that one closes. */
  private volatile @Nullable InProcessConnection connection;

  /** The one thread that fires the deadlines of every in-process client's calls. */
  private static final class Timer {
    static final ScheduledThreadPoolExecutor INSTANCE = create();

    private static ScheduledThreadPoolExecutor create() {
      ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, r -> {
        Thread thread = new Thread(r, "petrel-inprocess-deadlines");
        thread.setDaemon(true);
        return thread;
      });
      t.setRemoveOnCancelPolicy(true); // a call that ends in time leaves nothing behind in the queue
      return t;
    }
  }

  static ScheduledThreadPoolExecutor timer() {
    return Timer.INSTANCE;
  }

  /** Made by {@link io.petrel.rpc.RpcClientBuilder#build()} for {@code inProcess(serverName)}. */
  public InProcessClient(String serverName, ClientConfig config, ClientTransportContext runtime) {
    this.runtime = runtime;
    this.config = config;
    this.serverName = serverName;
    this.target = config.target();
    log.debug("Petrel client '{}' for {} (in-process)", config.name(), target);
  }

  String target() {
    return target;
  }

  String name() {
    return config.name();
  }

  int maxFrameSize() {
    return config.maxFrameSize();
  }

  int maxMetadataSize() {
    return config.maxMetadataSize();
  }

  /**
   * Checks that the server of this client's name is running and taking calls; if not, throws UNAVAILABLE
   * saying so. The client stays usable either way (it holds no thread or connection without a server): its
   * later calls reach the server once one of that name has started.
   */
  @Override
  public void start() {
    if (connection() == null) {
      throw unavailable(null).asException();
    }
  }

  @Override
  public void reloadTls() {
    throw new IllegalStateException("in-process client '" + config.name() + "' has no TLS: its calls never leave"
        + " the JVM");
  }

  /** Why there is no connection: no server of that name, or it is shutting down, or this client is. */
  Status unavailable(@Nullable MethodDescriptor<?, ?> method) {
    String notSent = method == null ? "" : "; " + method.fullName() + " not sent";
    if (runtime.isShutdown()) {
      return Status.UNAVAILABLE.withDescription("client '" + config.name() + "' is shut down" + notSent);
    }
    if (InProcessRegistry.lookup(serverName) != null) {
      return Status.UNAVAILABLE.withDescription("in-process server '" + serverName + "' is shutting down and"
          + " takes no new calls" + notSent);
    }
    return Status.UNAVAILABLE.withDescription("no in-process server named '" + serverName + "' is running; start"
        + " one with RpcServer.builder().inProcess(\"" + serverName + "\")" + notSent);
  }

  /** The open connection to the server, or a new one; null if there is no server taking calls. */
  @Nullable InProcessConnection connection() {
    InProcessConnection c = connection;
    if (c != null && c.isUsable()) {
      return c;
    }
    synchronized (this) {
      c = connection;
      if (c != null && c.isUsable()) {
        return c;
      }
      if (terminated) {
        return null;
      }
      InProcessServerTransport server = InProcessRegistry.lookup(serverName);
      c = server == null ? null : server.connect(config.name());
      connection = c;
      return c;
    }
  }

  @Override
  public ClientStream newStream(@Nullable Connection connection, MethodDescriptor<?, ?> method,
      CallOptions options, @Nullable Deadline deadline, ClientStreamListener listener) {
    return new InProcessStream(this, method, options.metadata(), deadline, listener);
  }

  /** Closes the connection: calls still in flight fail with UNAVAILABLE and are cancelled on the server. */
  @Override
  public void terminate(Runnable done) {
    InProcessConnection c;
    synchronized (this) {
      c = connection;
      connection = null;
      terminated = true;
    }
    if (c != null) {
      c.close(true, "client '" + config.name() + "' was shut down");
    }
    done.run();
  }

  @Override
  public String toString() {
    return "InProcessClient{" + target + ", pending=" + runtime.pendingCalls() + "}";
  }
}
