package io.petrel.spring.boot;

import io.petrel.rpc.ConnectivityState;
import io.petrel.rpc.InProcessAddress;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;

/**
 * {@code petrel} health: UP while the server serves (details: port, calls in flight, services' count) or when the
 * context has nothing to serve; DOWN before the server has started and once it is shutting down, so a load
 * balancer stops sending calls while it drains. Each client adds its pending calls, whether it is shut down, and
 * whether it reaches its target: its endpoints by state ({@link RpcClient#endpointStates()}) and, with a
 * {@link MeterRegistry} in the context, its connections (the {@code rpc.client.connections} gauge).
 * A client that cannot reach its target (no endpoint ready, one backing off) does not change the status unless
 * {@code petrel.health.clients-affect-status=true}, which makes it OUT_OF_SERVICE: by default one service's outage
 * does not take every caller out of its load balancer too.
 */
public final class PetrelHealthIndicator implements HealthIndicator {
  /** The states the details list, in this order. */
  private static final List<ConnectivityState> STATES = List.of(ConnectivityState.READY,
      ConnectivityState.CONNECTING, ConnectivityState.BACKING_OFF, ConnectivityState.IDLE);

  private final ObjectProvider<PetrelServerLifecycle> server;
  private final ObjectProvider<PetrelClients> clients;
  private final Supplier<@Nullable MeterRegistry> meterRegistry;
  private final boolean clientsAffectStatus;
  /** What the providers gave once they had it: a closed context creates no bean, and its provider throws. */
  private volatile @Nullable PetrelServerLifecycle lifecycle;
  private volatile @Nullable PetrelClients allClients;
  private volatile @Nullable MeterRegistry registry;

  PetrelHealthIndicator(ObjectProvider<PetrelServerLifecycle> server, ObjectProvider<PetrelClients> clients,
      Supplier<@Nullable MeterRegistry> meterRegistry, boolean clientsAffectStatus) {
    this.server = server;
    this.clients = clients;
    this.meterRegistry = meterRegistry;
    this.clientsAffectStatus = clientsAffectStatus;
  }

  @Override
  public Health health() {
    PetrelServerLifecycle lifecycle = this.lifecycle;
    PetrelClients all = allClients;
    try {
      if (lifecycle == null) {
        lifecycle = this.lifecycle = server.getIfAvailable();
      }
      if (all == null) {
        all = allClients = clients.getIfAvailable();
      }
      if (registry == null && all != null && !all.names().isEmpty()) {
        registry = meterRegistry.get();
      }
    } catch (BeansException | IllegalStateException e) {
      // Asked after the context closed (or while it fails to start), before it had the beans: nothing serves.
      return Health.down().withDetail("server", "the application context is closed (or failed to start)")
          .build();
    }
    return health(lifecycle, all, registry);
  }

  private Health health(@Nullable PetrelServerLifecycle lifecycle, @Nullable PetrelClients all,
      @Nullable MeterRegistry registry) {
    Health.Builder health = Health.up();
    if (lifecycle != null) {
      RpcServer s = lifecycle.server();
      if (s == null) {
        if (lifecycle.hasNoServices()) {
          health.withDetail("server", "not started: the context has no services");
        } else {
          health.down().withDetail("server", "not started yet");
        }
      } else if (s.isShutdown()) {
        health.down().withDetail("server", s.isTerminated() ? "stopped" : "draining")
            .withDetail("inFlightCalls", s.inFlightCalls());
      } else {
        health.withDetail("server", "serving");
        if (s.address() instanceof InProcessAddress a) {
          health.withDetail("inProcessName", a.name());
        } else {
          health.withDetail("port", s.port());
        }
        health.withDetail("inFlightCalls", s.inFlightCalls());
      }
    }
    if (all != null && !all.names().isEmpty()) {
      Map<String, Object> byName = new LinkedHashMap<>();
      List<String> unreachable = new ArrayList<>();
      for (String name : all.names()) {
        RpcClient c = all.client(name);
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("pendingCalls", c.pendingCalls());
        details.put("shutdown", c.isShutdown());
        Map<String, Integer> endpoints = endpoints(c);
        ConnectivityState state = c.state();
        details.put("state", state.name().toLowerCase(java.util.Locale.ROOT));
        if (endpoints.isEmpty() && state == ConnectivityState.IDLE) {
          details.put("endpoints", "none: an in-process client has no endpoints");
        } else {
          details.put("endpoints", endpoints);
          if (registry != null) {
            details.put("connections", connections(registry, name));
          }
          if (state == ConnectivityState.BACKING_OFF) {
            // Nothing connected, and no endpoint to call or one that failed since it was last ready (also while
            // it tries again): RpcClient.state().
            details.put("reachable", false);
            unreachable.add(name);
          } else {
            details.put("reachable", true);
          }
        }
        byName.put(name, details);
      }
      health.withDetail("clients", byName);
      if (clientsAffectStatus && !unreachable.isEmpty() && health.build().getStatus().equals(Status.UP)) {
        health.outOfService().withDetail("unreachableClients", unreachable);
      }
    }
    return health.build();
  }

  /**
   * The client's endpoints by state ({@link RpcClient#endpointStates()}), named as the {@code rpc.client.endpoints}
   * gauges' {@code state} tag; empty for an in-process client.
   */
  private static Map<String, Integer> endpoints(RpcClient client) {
    Map<String, Integer> byState = new LinkedHashMap<>();
    Map<ConnectivityState, Integer> now = client.endpointStates();
    if (now.isEmpty()) {
      return byState;
    }
    for (ConnectivityState state : STATES) {
      byState.put(state.name().toLowerCase(java.util.Locale.ROOT), now.getOrDefault(state, 0));
    }
    return byState;
  }

  /** The client's usable connections, from its {@code rpc.client.connections} gauge. */
  private static int connections(MeterRegistry registry, String client) {
    int n = 0;
    for (Gauge g : registry.find("rpc.client.connections").tag("client", client).gauges()) {
      n += (int) g.value();
    }
    return n;
  }
}
