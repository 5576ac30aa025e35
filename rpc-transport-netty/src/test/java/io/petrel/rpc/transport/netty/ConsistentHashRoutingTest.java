package io.petrel.rpc.transport.netty;

import static org.assertj.core.api.Assertions.assertThat;

import io.petrel.rpc.CallOptions;
import io.petrel.rpc.Endpoint;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.marshal.Marshallers;
import io.petrel.rpc.NameResolver;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** consistent_hash through real servers on loopback: a key sticks to its server, and only a leaver's keys move. */
class ConsistentHashRoutingTest {
  private static final MethodDescriptor<byte[], byte[]> WHO = MethodDescriptor.<byte[], byte[]>newBuilder()
      .serviceName("test.Who").methodName("who")
      .requestMarshaller(Marshallers.bytes()).responseMarshaller(Marshallers.bytes())
      .build();

  /** A resolver whose list the test sets. */
  private static final class Manual implements NameResolver {
    private @Nullable Listener listener;
    private List<Endpoint> endpoints;

    Manual(List<Endpoint> endpoints) {
      this.endpoints = endpoints;
    }

    @Override
    public synchronized void start(Listener l) {
      listener = l;
      l.onEndpoints(endpoints);
    }

    synchronized void set(List<Endpoint> now) {
      endpoints = now;
      if (listener != null) {
        listener.onEndpoints(now);
      }
    }

    @Override
    public void shutdown() {}
  }

  private final List<RpcServer> servers = new ArrayList<>();

  private RpcServer server(String name) throws Exception {
    RpcServer s = RpcServer.builder().bindAddress("127.0.0.1", 0).addService(ServiceDefinition.builder("test.Who")
        .unary(WHO, req -> name.getBytes(StandardCharsets.UTF_8)).build()).build().start();
    servers.add(s);
    return s;
  }

  @AfterEach
  void stop() throws Exception {
    for (RpcServer s : servers) {
      s.shutdownNow();
      assertThat(s.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
  }

  private static String who(RpcClient client, String key) {
    return new String(client.unaryCall(WHO, new byte[0], CallOptions.DEFAULT.withHashKey(key)),
        StandardCharsets.UTF_8);
  }

  @Test
  void aKeyStaysOnItsServerAndOnlyTheKeysOfAServerThatLeavesMove() throws Exception {
    List<Endpoint> all = new ArrayList<>();
    for (String name : List.of("a", "b", "c")) {
      all.add(Endpoint.of("127.0.0.1", server(name).port()));
    }
    Manual resolver = new Manual(all);
    try (RpcClient client = RpcClient.builder().nameResolver("manual://abc", resolver)
        .loadBalancer("consistent_hash").build()) {
      Map<String, String> before = new HashMap<>();
      for (int i = 0; i < 300; i++) {
        before.put("user-" + i, who(client, "user-" + i));
      }
      assertThat(before.values()).contains("a", "b", "c");
      for (int i = 0; i < 300; i++) {
        assertThat(who(client, "user-" + i)).isEqualTo(before.get("user-" + i));
      }

      resolver.set(List.of(all.get(0), all.get(1))); // c leaves
      for (Map.Entry<String, String> e : before.entrySet()) {
        String now = who(client, e.getKey());
        if (e.getValue().equals("c")) {
          assertThat(now).isIn("a", "b");
        } else {
          assertThat(now).as("key %s", e.getKey()).isEqualTo(e.getValue());
        }
      }
    }
  }
}
