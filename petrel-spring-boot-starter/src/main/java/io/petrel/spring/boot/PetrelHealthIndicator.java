package io.petrel.spring.boot;

import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import java.util.LinkedHashMap;
import java.util.Map;
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

  PetrelHealthIndicator(ObjectProvider<PetrelServerLifecycle> server, ObjectProvider<PetrelClients> clients) {
    this.server = server;
    this.clients = clients;
  }

  @Override
  public Health health() {
    Health.Builder health = Health.up();
    PetrelServerLifecycle lifecycle = server.getIfAvailable();
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
    PetrelClients all = clients.getIfAvailable();
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
