package io.petrel.spring.boot;

import io.petrel.rpc.RpcClient;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The context's clients: one {@link RpcClient} per {@code petrel.clients.<name>}, made when the context starts and
 * shared by every stub of that name. Clients connect on their first call. They are shut down when the context
 * closes, after the server has drained.
 */
public final class PetrelClients implements AutoCloseable {
  private final Map<String, RpcClient> clients;
  /** Run once the clients are shut down (their SSL bundles' materials stop following the bundles). */
  private final Runnable afterClose;

  PetrelClients(Set<String> names, Function<String, RpcClient> factory) {
    this(names, factory, () -> { });
  }

  PetrelClients(Set<String> names, Function<String, RpcClient> factory, Runnable afterClose) {
    this.afterClose = afterClose;
    Map<String, RpcClient> made = new LinkedHashMap<>();
    try {
      for (String name : names) {
        made.put(name, factory.apply(name));
      }
    } catch (RuntimeException e) {
      made.values().forEach(RpcClient::shutdownNow);
      afterClose.run();
      throw e;
    }
    this.clients = Collections.unmodifiableMap(made);
  }

  /** The client configured as {@code petrel.clients.<name>}. */
  public RpcClient client(String name) {
    RpcClient client = clients.get(name);
    if (client == null) {
      throw new IllegalArgumentException("no Petrel client named '" + name + "': configure petrel.clients." + name
          + ".target (configured: " + clients.keySet() + ")");
    }
    return client;
  }

  /**
   * A stub of the client {@code name}: {@code stub("greeter", Greeter.class)} is {@code GreeterRpc.stub(client)},
   * {@code stub("greeter", GreeterAsync.class)} is {@code GreeterRpc.asyncStub(client)}. Call it once and keep the
   * stub (it is immutable and thread-safe); its calls run through the generated code.
   */
  public <T> T stub(String name, Class<T> type) {
    return type.cast(GeneratedCode.stub(type, client(name)));
  }

  /** Names of the configured clients. */
  public Set<String> names() {
    return clients.keySet();
  }

  /** Shuts every client down and waits for its calls to end (up to 10 s each, then cuts them). */
  @Override
  public void close() {
    clients.values().forEach(RpcClient::shutdown);
    try {
      for (RpcClient c : clients.values()) {
        try {
          if (!c.awaitTermination(10, TimeUnit.SECONDS)) {
            c.shutdownNow();
          }
        } catch (InterruptedException e) {
          c.shutdownNow();
          Thread.currentThread().interrupt();
        }
      }
    } finally {
      afterClose.run();
    }
  }
}
