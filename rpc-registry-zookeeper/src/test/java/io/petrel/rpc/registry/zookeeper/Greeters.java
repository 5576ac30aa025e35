package io.petrel.rpc.registry.zookeeper;

import io.petrel.rpc.Endpoint;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServerLifecycleListener;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.Status;
import io.petrel.rpc.marshal.Marshallers;
import io.petrel.rpc.NameResolver;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/** Real Petrel servers on loopback ports for the discovery tests, and a resolver that records what it says. */
final class Greeters {
  static final String SERVICE = "demo.Greeter";

  /** Answers with the name of the server that ran it. */
  static final MethodDescriptor<byte[], byte[]> WHO = MethodDescriptor.<byte[], byte[]>newBuilder()
      .serviceName(SERVICE).methodName("who")
      .requestMarshaller(Marshallers.bytes()).responseMarshaller(Marshallers.bytes())
      .build();

  private Greeters() {}

  /** A server on 127.0.0.1, port 0, that counts the calls it ran. */
  static final class Server implements AutoCloseable {
    final String name;
    final AtomicInteger calls = new AtomicInteger();
    final RpcServer server;

    Server(String name, ServerLifecycleListener registrar, Duration drainDelay) throws IOException {
      this.name = name;
      ServiceDefinition def = ServiceDefinition.builder(SERVICE).unary(WHO, req -> {
        calls.incrementAndGet();
        return name.getBytes(StandardCharsets.UTF_8);
      }).build();
      this.server = RpcServer.builder().bindAddress("127.0.0.1", 0).addService(def)
          .addLifecycleListener(registrar).drainDelay(drainDelay).build().start();
    }

    Endpoint endpoint() {
      return Endpoint.of("127.0.0.1", server.port());
    }

    @Override
    public void close() {
      server.close();
    }
  }

  /** Wraps a resolver and keeps every list it gave, so a test can wait for a list or check all of them. */
  static final class Recording implements NameResolver {
    final NameResolver delegate;
    final List<List<Endpoint>> lists = new CopyOnWriteArrayList<>();
    final List<Status> errors = new CopyOnWriteArrayList<>();
    private final List<Waiter> waiters = new ArrayList<>();

    private record Waiter(Predicate<List<Endpoint>> test, CompletableFuture<List<Endpoint>> done) {}

    Recording(NameResolver delegate) {
      this.delegate = delegate;
    }

    @Override
    public void start(Listener listener) {
      delegate.start(new Listener() {
        @Override
        public void onEndpoints(List<Endpoint> endpoints) {
          listener.onEndpoints(endpoints);
          lists.add(endpoints);
          synchronized (waiters) {
            waiters.removeIf(w -> w.test.test(endpoints) && w.done.complete(endpoints));
          }
        }

        @Override
        public void onError(Status error) {
          errors.add(error);
          listener.onError(error);
        }
      });
    }

    /** Completes with the first list (the current one included) that passes {@code test}. */
    CompletableFuture<List<Endpoint>> until(Predicate<List<Endpoint>> test) {
      CompletableFuture<List<Endpoint>> f = new CompletableFuture<>();
      synchronized (waiters) {
        if (!lists.isEmpty() && test.test(lists.get(lists.size() - 1))) {
          f.complete(lists.get(lists.size() - 1));
        } else {
          waiters.add(new Waiter(test, f));
        }
      }
      return f;
    }

    @Override
    public void refresh() {
      delegate.refresh();
    }

    @Override
    public void shutdown() {
      delegate.shutdown();
    }
  }

  static Predicate<List<Endpoint>> listing(Server... servers) {
    return list -> {
      for (Server s : servers) {
        if (list.stream().noneMatch(e -> e.sameAddress(s.endpoint()))) {
          return false;
        }
      }
      return true;
    };
  }

  static Predicate<List<Endpoint>> without(Server s) {
    return list -> list.stream().noneMatch(e -> e.sameAddress(s.endpoint()));
  }
}
