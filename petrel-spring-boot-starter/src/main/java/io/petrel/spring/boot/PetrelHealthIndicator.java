package io.petrel.spring.boot;

import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * {@code petrel} health: UP while the server serves (details: port, calls in flight, services' count) or when the
 * context has nothing to serve; DOWN before the server has started and once it is shutting down, so a load
 * balancer stops sending calls while it drains. Each client adds its pending calls and whether it is shut down.
 */
public final class PetrelHealthIndicator implements HealthIndicator {
  private final ObjectProvider<PetrelServerLifecycle> server;
  private final ObjectProvider<PetrelClients> clients;
  /** What the providers gave once they had it: a closed context creates no bean, and its provider throws. */
  private volatile @Nullable PetrelServerLifecycle lifecycle;
  private volatile @Nullable PetrelClients allClients;

  PetrelHealthIndicator(ObjectProvider<PetrelServerLifecycle> server, ObjectProvider<PetrelClients> clients) {
    this.server = server;
    this.clients = clients;
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
    } catch (BeansException | IllegalStateException e) {
      // Asked after the context closed (or while it fails to start), before it had the beans: nothing serves.
      return Health.down().withDetail("server", "the application context is closed (or failed to start)")
          .build();
    }
    return health(lifecycle, all);
  }

  private static Health health(@Nullable PetrelServerLifecycle lifecycle, @Nullable PetrelClients all) {
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
        health.withDetail("server", "serving").withDetail("port", s.port())
            .withDetail("inFlightCalls", s.inFlightCalls());
      }
    }
    if (all != null && !all.names().isEmpty()) {
      Map<String, Object> byName = new LinkedHashMap<>();
      for (String name : all.names()) {
        RpcClient c = all.client(name);
        byName.put(name, Map.of("pendingCalls", c.pendingCalls(), "shutdown", c.isShutdown()));
      }
      health.withDetail("clients", byName);
    }
    return health.build();
  }
}
