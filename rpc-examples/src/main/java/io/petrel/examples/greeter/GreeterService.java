package io.petrel.examples.greeter;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;

/** The server side: a plain implementation of the interface; {@code GreeterRpc.bind(this)} serves it. */
public final class GreeterService implements Greeter {
  private static final Set<String> VIPS = Set.of("Ada", "Grace");

  private final BlockingQueue<String> logged = new LinkedBlockingQueue<>();
  private final Executor replies;

  /** @param replies where the asynchronous method completes its replies (the server does not own it) */
  public GreeterService(Executor replies) {
    this.replies = replies;
  }

  @Override
  public HelloReply sayHello(HelloRequest request) {
    return HelloReply.newBuilder().setMessage("Hello, " + request.getName() + "!").build();
  }

  @Override
  public int add(int a, int b) {
    return a + b;
  }

  @Override
  public void log(String line) {
    logged.add(line);
  }

  @Override
  public CompletableFuture<HelloReply> sayHelloLater(HelloRequest request) {
    // Returns at once; no server thread waits while the reply is produced elsewhere.
    return CompletableFuture.supplyAsync(
        () -> HelloReply.newBuilder().setMessage("Hello later, " + request.getName() + "!").build(), replies);
  }

  @Override
  public Map<String, Integer> countWords(List<String> words) {
    Map<String, Integer> counts = new LinkedHashMap<>();
    for (String w : words) {
      counts.merge(w, 1, Integer::sum);
    }
    return counts;
  }

  @Override
  public HelloReply greetVip(HelloRequest request) throws NotOnTheListException {
    if (!VIPS.contains(request.getName())) {
      throw new NotOnTheListException(request.getName() + " is not on the list");
    }
    return HelloReply.newBuilder().setMessage("Welcome back, " + request.getName() + ".").build();
  }

  /** The lines that oneway {@link #log} calls delivered, in arrival order. */
  public BlockingQueue<String> logged() {
    return logged;
  }
}
