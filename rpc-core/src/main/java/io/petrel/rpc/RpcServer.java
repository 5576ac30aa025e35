package io.petrel.rpc;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A running (or stopped) Petrel server. Create with {@link #builder()}, then {@link #start()}. It listens on a
 * network address ({@code port(...)}, {@code bindAddress(...)}) or, with {@code inProcess(name)}, serves clients
 * of the same JVM by name, without a socket.
 *
 * <p>Lifecycle: {@link #shutdown()} stops accepting connections, tells connected clients to go away, lets
 * in-flight calls finish for up to the configured grace period, then closes everything;
 * {@link #shutdownNow()} fails in-flight calls and closes at once. {@link #awaitTermination} waits for
 * either to finish.
 */
public abstract class RpcServer implements AutoCloseable {

  public static RpcServerBuilder builder() {
    return RpcProvider.get().newServerBuilder();
  }

  /**
   * Binds and starts serving. Throws {@link IOException} naming the address if it cannot bind; the server is then
   * terminated (what it had made is released), and a later {@code shutdown()}, {@code shutdownNow()} or
   * {@code close()} does nothing more.
   */
  public abstract RpcServer start() throws IOException;

  /**
   * The bound network address; valid after {@link #start()}.
   *
   * @throws IllegalStateException if the server is not started, or is in-process (it has no network address;
   *     see {@link #address()})
   */
  public abstract InetSocketAddress localAddress();

  /**
   * Where the server can be reached; valid after {@link #start()}: the bound {@link InetSocketAddress} of a
   * network server, or the {@link InProcessAddress} of an in-process one
   * ({@code RpcServer.builder().inProcess(name)}), whose {@link InProcessAddress#name()} clients call with
   * {@code RpcClient.builder().inProcess(name)}.
   */
  public SocketAddress address() {
    return localAddress();
  }

  /**
   * The bound port (useful with port 0); valid after {@link #start()}.
   *
   * @throws IllegalStateException if the server is not started, or is in-process (no port; see {@link #address()})
   */
  public int port() {
    return localAddress().getPort();
  }

  /**
   * The services this server serves, in the order they were added ({@link RpcServerBuilder#addService}); a call
   * for any other service is answered UNIMPLEMENTED. Valid before and after {@link #start()}.
   */
  public abstract List<ServiceDefinition> services();

  /**
   * How long a graceful {@link #shutdown()} lets calls in flight finish after its GOAWAY, as configured
   * ({@link RpcServerBuilder#shutdownGracePeriod}); then their connections close.
   */
  public abstract Duration shutdownGracePeriod();

  /**
   * How long a graceful {@link #shutdown()} keeps serving as before, after telling its lifecycle listeners, before
   * its GOAWAY, as configured ({@link RpcServerBuilder#drainDelay}). A graceful shutdown ends within this delay
   * plus the {@link #shutdownGracePeriod()} (and the time closing takes).
   */
  public abstract Duration drainDelay();

  /**
   * Loads the server's TLS certificate, key and trust material again (from its {@link TlsConfig}'s files, or
   * its key stores' current entries), for example after the certificate was renewed: connections accepted from
   * now on use the new material, connections already open keep theirs. If the new material cannot be loaded
   * (missing file, key not matching the certificate) the server keeps the previous one and this throws.
   *
   * @throws IllegalStateException if the server has no TLS or is not started
   * @throws IOException naming the file and the problem, if the material cannot be loaded
   */
  public void reloadTls() throws IOException {
    throw new IllegalStateException("transport " + getClass().getName() + " cannot reload TLS");
  }

  /** Graceful shutdown; returns at once. New calls are refused with UNAVAILABLE. */
  public abstract RpcServer shutdown();

  /** Immediate shutdown; in-flight calls are failed with UNAVAILABLE. Returns at once. */
  public abstract RpcServer shutdownNow();

  public abstract boolean isShutdown();

  public abstract boolean isTerminated();

  public abstract boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException;

  /**
   * Waits, without a time limit, until the server has terminated: after {@link #shutdown()} (once the calls in
   * flight have ended, within the grace period), {@link #shutdownNow()}, or an error that stopped it (see
   * docs/reliability.md). A program that only serves calls this at the end of its {@code main}: the server's
   * event loops are daemon threads, so a JVM whose {@code main} has returned exits with nothing else keeping it
   * alive (as with gRPC-java's {@code Server.awaitTermination()}).
   *
   * <pre>{@code
   * RpcServer server = RpcServer.builder().port(7000).addService(service).build().start();
   * Runtime.getRuntime().addShutdownHook(new Thread(server::close));   // Ctrl-C, SIGTERM: drain, then stop
   * server.awaitTermination();
   * }</pre>
   *
   * @throws InterruptedException if the waiting thread is interrupted (the server keeps running)
   */
  public void awaitTermination() throws InterruptedException {
    while (!awaitTermination(1, TimeUnit.DAYS)) {
      // still serving: wait on
    }
  }

  /** Calls served so far and currently in flight, for operators and tests. */
  public abstract long inFlightCalls();

  /**
   * {@link #shutdown()} and wait for termination: the {@link #drainDelay()}, the {@link #shutdownGracePeriod()} and
   * 5 s for closing; then {@link #shutdownNow()} (and up to 10 s more).
   */
  @Override
  public void close() {
    shutdown();
    try {
      if (!awaitTermination(drainDelay().plus(shutdownGracePeriod()).toMillis() + 5_000, TimeUnit.MILLISECONDS)) {
        shutdownNow();
        awaitTermination(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      shutdownNow();
      Thread.currentThread().interrupt();
    }
  }
}
