package io.petrel.examples.greeter;

import io.petrel.rpc.Metadata;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.StatusException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Starts a Greeter server on 127.0.0.1 (a free port), calls every method through the generated stubs and
 * prints what comes back. Run: {@code java -jar rpc-examples/target/rpc-examples.jar}.
 */
public final class GreeterExample {
  private GreeterExample() {}

  public static void main(String[] args) throws Exception {
    run(System.out::println);
  }

  /** Runs the example, reporting each step to {@code out}. */
  public static void run(Consumer<String> out) throws Exception {
    ExecutorService replies = Executors.newSingleThreadExecutor();
    GreeterService service = new GreeterService(replies);
    try (RpcServer server = RpcServer.builder()
            .bindAddress("127.0.0.1", 0)
            .addService(GreeterRpc.bind(service))
            .build()
            .start();
        RpcClient client = RpcClient.builder().address("127.0.0.1", server.port()).build()) {
      out.accept("server listening on 127.0.0.1:" + server.port());

      // The blocking stub implements Greeter itself; withDeadline/withMetadata return configured copies.
      GreeterRpc.GreeterStub greeter = GreeterRpc.stub(client)
          .withDeadline(Duration.ofSeconds(5))
          .withMetadata(Metadata.of("example", "greeter"));
      HelloRequest petrel = HelloRequest.newBuilder().setName("Petrel").build();
      out.accept("sayHello: " + greeter.sayHello(petrel).getMessage());
      out.accept("add(2, 40): " + greeter.add(2, 40));
      out.accept("countWords: " + greeter.countWords(List.of("to", "be", "or", "not", "to", "be")));

      greeter.log("a oneway line");
      out.accept("log (oneway) delivered: " + service.logged().poll(5, TimeUnit.SECONDS));

      // A declared exception arrives as itself: its class name and message travel with the error status.
      try {
        greeter.greetVip(petrel);
      } catch (NotOnTheListException e) {
        out.accept("greetVip(Petrel) threw NotOnTheListException: " + e.getMessage() + " (status "
            + (e.getCause() instanceof StatusException cause ? cause.code() : "none") + ")");
      }
      out.accept("greetVip(Ada): " + greeter.greetVip(HelloRequest.newBuilder().setName("Ada").build())
          .getMessage());

      // The async stub: every method returns a CompletableFuture, whatever the interface returns.
      GreeterAsync async = GreeterRpc.asyncStub(client);
      out.accept("sayHelloLater (async): " + async.sayHelloLater(HelloRequest.newBuilder().setName("async").build())
          .thenApply(HelloReply::getMessage)
          .get(5, TimeUnit.SECONDS));
      out.accept("add(20, 22) (async): " + async.add(20, 22).get(5, TimeUnit.SECONDS));
    } finally {
      replies.shutdown();
    }
  }
}
