package io.petrel.rpc.internal.inprocess;

import io.petrel.rpc.InProcessAddress;
import io.petrel.rpc.spi.ServerConfig;
import io.petrel.rpc.spi.ServerDispatcher;
import io.petrel.rpc.spi.ServerTransport;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * The server side of the in-process transport: registers its name in this JVM at {@link #start} (a second live
 * server of the same name fails to start) and frees it at {@link #release}. Every in-process client is one
 * {@link InProcessConnection}, with the per-connection limit the Netty transport enforces per socket. Options
 * about sockets and peers (I/O mode, worker threads, connection counts, timeouts, TLS, water marks, the buffer
 * budget) do not apply: the callers' own threads carry the requests, and each caller's future carries the answer.
 */
public final class InProcessServerTransport implements ServerTransport {
  private final String name;
  private final ServerConfig config;
  private final InProcessAddress address;
  private final Set<InProcessConnection> connections = ConcurrentHashMap.newKeySet();
  private final AtomicInteger connectionIds = new AtomicInteger();
  private volatile boolean draining;
  private volatile @Nullable ServerDispatcher dispatcher;

  /** Made by {@link io.petrel.rpc.RpcServerBuilder#build()} for {@code inProcess(name)}. */
  public InProcessServerTransport(String name, ServerConfig config) {
    this.name = name;
    this.config = config;
    this.address = new InProcessAddress(name);
  }

  String name() {
    return name;
  }

  ServerConfig config() {
    return config;
  }

  ServerDispatcher dispatcher() {
    return Objects.requireNonNull(dispatcher, "dispatcher: set by start(), before any connection");
  }

  @Override
  public void start(ServerDispatcher dispatcher) throws IOException {
    this.dispatcher = dispatcher;
    if (!InProcessRegistry.register(name, this)) {
      throw new IOException("cannot start server '" + config.name() + "': an in-process server named '" + name
          + "' is already running in this JVM (in-process names are JVM-wide: shut that one down first, or choose"
          + " another name)");
    }
  }

  @Override
  public InProcessAddress localAddress() {
    return address;
  }

  /** A client connects: a new connection, or null when the server is shutting down. */
  @Nullable InProcessConnection connect(String clientName) {
    ServerDispatcher d = dispatcher;
    if (draining || d == null || d.isShutdown()) {
      return null; // (shutting down: its dispatcher refuses calls a moment before stopAccepting runs)
    }
    InProcessConnection c = new InProcessConnection(this,
        new InProcessAddress(name + "#" + connectionIds.incrementAndGet()), clientName);
    connections.add(c);
    if (draining) {
      // Shutdown began while connecting: stopAccepting may not have seen this one.
      connections.remove(c);
      return null;
    }
    return c;
  }

  void connectionClosed(InProcessConnection c) {
    connections.remove(c);
  }

  @Override
  public void stopAccepting(boolean goAway) {
    draining = true;
    if (goAway) {
      for (InProcessConnection c : connections) {
        c.goaway();
      }
    }
  }

  @Override
  public long inFlightCalls() {
    long n = 0;
    for (InProcessConnection c : connections) {
      n += c.inFlight();
    }
    return n;
  }

  @Override
  public CompletionStage<Void> closeConnections(boolean now) {
    List<CompletableFuture<Void>> closes = new ArrayList<>();
    for (InProcessConnection c : connections) {
      c.close(now, now ? "the server '" + config.name() + "' stopped" : "the server '" + config.name()
          + "' shut down");
      closes.add(c.drained());
    }
    return CompletableFuture.allOf(closes.toArray(new CompletableFuture<?>[0]));
  }

  @Override
  public CompletionStage<Void> release() {
    InProcessRegistry.unregister(name, this);
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public String describe() {
    return "in-process, no socket";
  }

  @Override
  public String toString() {
    return "InProcessServerTransport{" + address + ", " + connections.size() + " connections}";
  }
}
