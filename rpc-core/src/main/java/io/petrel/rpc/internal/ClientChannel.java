package io.petrel.rpc.internal;

import io.petrel.rpc.spi.RateLimitedLog;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.spi.ClientConfig;
import io.petrel.rpc.spi.ClientTransport;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.LoggerFactory;

/**
 * The client users hold, whatever the transport: the core's {@link RpcClient} runs every call, and this channel
 * owns the endpoints ({@link ClientEndpoints}: the resolver, one {@link InternalSubchannel} per endpoint with its
 * connections, their reconnect backoff and waiting calls, the load balancer), picks one per attempt, and hands
 * the attempt to a connection of the {@link ClientTransport} the builder made for it. Transports implement
 * {@link ClientTransport}; none subclasses {@link RpcClient}.
 */
public final class ClientChannel extends RpcClient {
  private final ClientTransport transport;
  /** The endpoints and their subchannels; null for a transport without endpoints (in-process). */
  private final @Nullable ClientEndpoints<InternalSubchannel> endpoints;
  private final ClientConfig config;

  /**
   * @param secure what {@link #isSecure()} says: TLS configured, or a transport whose calls never leave the
   *     process
   * @param transport makes the transport with this client's runtime (once, here)
   */
  public ClientChannel(ClientConfig config, boolean secure, Function<ClientRuntime, ClientTransport> transport) {
    super(config, secure);
    ClientTransport t = transport.apply(runtime());
    this.transport = t;
    this.config = config;
    if (config.resolver() != null) {
      java.util.concurrent.ScheduledExecutorService scheduler = t.scheduler();
      String stopped = "client '" + config.name() + "' is shut down";
      ClientEndpoints<InternalSubchannel> e = new ClientEndpoints<>(config,
          endpoint -> new InternalSubchannel(endpoint, t, scheduler, config, () -> stopped),
          new RateLimitedLog(LoggerFactory.getLogger(ClientEndpoints.class)));
      this.endpoints = e;
      e.start(); // a static resolver answers at once, on this thread
    } else {
      this.endpoints = null;
    }
  }

  /** The transport carrying this client's calls (for its own tests). */
  public static ClientTransport transportOf(RpcClient client) {
    return ((ClientChannel) client).transport;
  }

  /** The runtime of the client's calls (tests: the retry budget). */
  public static ClientRuntime runtimeOf(RpcClient client) {
    return ((ClientChannel) client).runtime();
  }

  /** The client's endpoints, or null for a transport without endpoints (tests, meters). */
  public static @Nullable ClientEndpoints<InternalSubchannel> endpointsOf(RpcClient client) {
    return ((ClientChannel) client).endpoints;
  }

  /**
   * Connects to every endpoint now and waits up to the connect timeout. Succeeds when at least one connection is
   * made; otherwise throws UNAVAILABLE naming each failure. Either way the client stays usable: an endpoint that
   * failed is in its backoff, as after any failed attempt, and later calls reach it once it is up. A client
   * dropped after a failed {@code build().start()} holds no connection and, once its backoff has passed, no
   * timer.
   */
  @Override
  public RpcClient start() {
    ClientEndpoints<InternalSubchannel> e = endpoints;
    if (e == null) {
      transport.start();
      return this;
    }
    List<InternalSubchannel> subs = e.subchannels();
    if (subs.isEmpty()) {
      throw e.noEndpoint("").asException();
    }
    List<CompletableFuture<?>> attempts = new ArrayList<>();
    List<String> owners = new ArrayList<>();
    for (InternalSubchannel sub : subs) {
      for (CompletableFuture<?> f : sub.connectNow()) {
        attempts.add(f);
        owners.add(sub.authority());
      }
    }
    long waitMs = TimeUnit.NANOSECONDS.toMillis(config.connectTimeoutNanos()) + 1000;
    long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
    StatusException first = null;
    List<String> failures = new ArrayList<>();
    int ok = 0;
    for (int i = 0; i < attempts.size(); i++) {
      long left = Math.max(0, TimeUnit.NANOSECONDS.toMillis(until - System.nanoTime()));
      StatusException failure = null;
      try {
        attempts.get(i).get(left, TimeUnit.MILLISECONDS);
        ok++;
      } catch (TimeoutException t) {
        failure = Status.UNAVAILABLE.withDescription("cannot connect to " + owners.get(i) + " within " + waitMs
            + " ms").asException();
      } catch (InterruptedException ie) {
        Thread.currentThread().interrupt();
        throw Status.CANCELLED.withDescription("interrupted while connecting to " + config.target())
            .withCause(ie).asException();
      } catch (ExecutionException ee) {
        Throwable cause = ee.getCause();
        failure = cause instanceof StatusException se ? new StatusException(se.status()) // described; our stack
            : Status.UNAVAILABLE.withDescription("cannot connect to " + owners.get(i) + ": " + cause)
                .withCause(cause != null ? cause : ee).asException();
      }
      if (failure != null) {
        first = first == null ? failure : first;
        failures.add(failure.status().description());
      }
    }
    if (ok > 0) {
      if (!failures.isEmpty()) {
        LoggerFactory.getLogger(RpcClient.class).warn("client '{}' for {}: {} of {} connections failed at start,"
            + " calls go to the others: {}", config.name(), config.target(), failures.size(), attempts.size(),
            summarize(failures));
      }
      return this;
    }
    if (attempts.size() == 1 && first != null) {
      throw first;
    }
    throw Status.UNAVAILABLE.withDescription("cannot connect to any endpoint of " + config.target() + ": "
        + summarize(failures)).asException();
  }

  /**
   * The distinct failures, each once with how often it happened ("3 x cannot connect to h:7000 ...; ..."), at most
   * five of them: a client with thousands of connections must not write thousands of lines' worth into one.
   */
  public static String summarize(List<String> failures) {
    Map<String, Integer> counts = new LinkedHashMap<>();
    for (String f : failures) {
      counts.merge(f, 1, Integer::sum);
    }
    StringBuilder sb = new StringBuilder();
    int shown = 0;
    for (Map.Entry<String, Integer> en : counts.entrySet()) {
      if (shown == 5) {
        sb.append("; and ").append(counts.size() - shown).append(" other failures");
        break;
      }
      sb.append(shown == 0 ? "" : "; ").append(en.getValue() > 1 ? en.getValue() + " x " : "").append(en.getKey());
      shown++;
    }
    return sb.toString();
  }

  /** Picks the endpoint of this attempt (another than a failed attempt's when there is one) and sends it there. */
  @Override
  protected void startAttempt(ClientCall<?> call) throws Exception {
    ClientEndpoints<InternalSubchannel> e = endpoints;
    if (e == null) {
      call.startStream(transport, null);
      return;
    }
    InternalSubchannel previous = (InternalSubchannel) call.picked();
    InternalSubchannel sub = e.pick(call, previous);
    if (sub == null) {
      call.fail(e.noPick(call, "; " + call.method().fullName() + " not sent"));
      return;
    }
    call.picked(sub);
    sub.send(call);
  }

  /** Closes every subchannel (their calls in flight fail with UNAVAILABLE), then the transport. */
  @Override
  protected void terminate(Runnable done) {
    ClientEndpoints<InternalSubchannel> e = endpoints;
    if (e == null) {
      transport.terminate(done);
      return;
    }
    e.shutdown().whenComplete((v, t) -> transport.terminate(done));
  }

  @Override
  protected boolean isTransportThread() {
    return transport.isTransportThread();
  }

  @Override
  public void reloadTls() throws java.io.IOException {
    transport.reloadTls();
  }

  @Override
  public String toString() {
    ClientEndpoints<InternalSubchannel> e = endpoints;
    return transport + (e == null ? "" : ", subchannels=" + e.subchannels());
  }
}
