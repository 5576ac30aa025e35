package io.petrel.examples.start;

import io.petrel.examples.greeter.HelloReply;
import io.petrel.examples.greeter.HelloRequest;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

public class GreeterMain {
  /** The service: plain Java, no Petrel types. */
  static class MyGreeter implements Greeter {
    final CountDownLatch logged = new CountDownLatch(1);

    @Override
    public HelloReply sayHello(HelloRequest request) {
      return HelloReply.newBuilder().setMessage("Hello " + request.getName()).build();
    }

    @Override
    public int add(int a, int b) {
      return a + b;
    }

    @Override
    public void log(String line) {
      System.out.println("server got: " + line);
      logged.countDown();
    }
  }

  public static void main(String[] args) throws Exception {
    MyGreeter service = new MyGreeter();
    try (RpcServer server = RpcServer.builder()
            .bindAddress("127.0.0.1", 0)
            .addService(GreeterRpc.bind(service))      // generated: the server's side
            .build()
            .start();
        RpcClient client = RpcClient.builder().address("127.0.0.1", server.port()).build()) {
      Greeter greeter = GreeterRpc.stub(client)        // generated: implements Greeter
          .withDeadline(Duration.ofSeconds(2));        // each call's deadline, from when it starts
      HelloReply reply = greeter.sayHello(HelloRequest.newBuilder().setName("Ada").build()); // blocking
      CompletableFuture<Integer> sum = GreeterRpc.asyncStub(client)
          .withDeadline(Duration.ofSeconds(2))         // each stub has its own options
          .add(40, 2);                                 // async
      greeter.log("a oneway line");                    // oneway: returns once the request is handed over
      System.out.println(reply.getMessage() + ", " + sum.get(2, TimeUnit.SECONDS));        // Hello Ada, 42
      if (!service.logged.await(2, TimeUnit.SECONDS)) { // the server runs the oneway call: "server got: ..."
        throw new IllegalStateException("the oneway call did not reach the server within 2 s");
      }
    }
  }
}
