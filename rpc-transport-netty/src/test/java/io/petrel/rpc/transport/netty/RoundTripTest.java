package io.petrel.rpc.transport.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.StringValue;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.ExceptionDetails;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class RoundTripTest extends TransportFixture {

  @Test
  void protobufCallRoundTrips() throws Exception {
    RpcServer server = startServer();
    RpcClient client = client(server.port());
    StringValue reply = client.unaryCall(TestService.ECHO, StringValue.of("héllo 世界"), CallOptions.DEFAULT);
    assertThat(reply.getValue()).isEqualTo("héllo 世界");
  }

  @Test
  void scalarArgumentsRoundTrip() throws Exception {
    RpcServer server = startServer();
    RpcClient client = client(server.port());
    assertThat(client.unaryCall(TestService.ADD, new Object[] {40, 2})).isEqualTo(42);
    assertThat(client.unaryCall(TestService.ADD, new Object[] {-7, Integer.MIN_VALUE + 7}))
        .isEqualTo(Integer.MIN_VALUE);
  }

  @Test
  void asyncHandlerCompletesLater() throws Exception {
    RpcServer server = startServer();
    RpcClient client = client(server.port());
    assertThat(client.unaryCallAsync(TestService.ASYNC_ECHO, StringValue.of("x"), CallOptions.DEFAULT)
        .get(10, TimeUnit.SECONDS).getValue()).isEqualTo("async:x");
  }

  @Test
  void metadataReachesTheHandler() throws Exception {
    RpcServer server = startServer();
    RpcClient client = client(server.port());
    StringValue reply = client.unaryCall(TestService.META, StringValue.of(""),
        CallOptions.DEFAULT.withMetadata(Metadata.of("x-test", "v1").withBinary("bin", new byte[] {1, 2})));
    assertThat(reply.getValue()).isEqualTo("v1");
  }

  @Test
  void tenThousandConcurrentAsyncCallsAreAllAnsweredAndCorrelated() throws Exception {
    RpcServer server = startServer(b -> b.businessQueueSize(20_000).maxConcurrentCallsPerConnection(20_000));
    RpcClient client = client(server.port(), b -> b.connectionsPerEndpoint(2));
    int n = 10_000;
    List<CompletableFuture<Integer>> futures = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      futures.add(client.unaryCallAsync(TestService.ADD, new Object[] {i, 1_000_000}, CallOptions.DEFAULT));
    }
    CompletableFuture.allOf(futures.toArray(new CompletableFuture[0])).get(60, TimeUnit.SECONDS);
    for (int i = 0; i < n; i++) {
      assertThat(futures.get(i).getNow(null)).as("response of call %d", i).isEqualTo(i + 1_000_000);
    }
    assertThat(client.pendingCalls()).isZero();
  }

  @Test
  void manyCallerThreadsShareOneConnection() throws Exception {
    RpcServer server = startServer(b -> b.directExecutor());
    RpcClient client = client(server.port());
    ExecutorService callers = Executors.newFixedThreadPool(16);
    try {
      List<java.util.concurrent.Future<Integer>> results = new ArrayList<>();
      for (int t = 0; t < 16; t++) {
        int base = t * 1000;
        results.add(callers.submit(() -> {
          int ok = 0;
          for (int i = 0; i < 200; i++) {
            if (client.unaryCall(TestService.ADD, new Object[] {base, i}) == base + i) {
              ok++;
            }
          }
          return ok;
        }));
      }
      for (java.util.concurrent.Future<Integer> r : results) {
        assertThat(r.get(60, TimeUnit.SECONDS)).isEqualTo(200);
      }
    } finally {
      callers.shutdownNow();
    }
  }

  @Test
  void onewayIsDelivered() throws Exception {
    RpcServer server = startServer();
    RpcClient client = client(server.port());
    client.oneway(TestService.LOG, StringValue.of("line 1"), CallOptions.DEFAULT).get(10, TimeUnit.SECONDS);
    client.oneway(TestService.LOG, StringValue.of("line 2"), CallOptions.DEFAULT);
    // Handlers run on a pool: oneways are delivered, in no promised order.
    List<String> got = new ArrayList<>();
    got.add(service.logged.poll(10, TimeUnit.SECONDS));
    got.add(service.logged.poll(10, TimeUnit.SECONDS));
    assertThat(got).containsExactlyInAnyOrder("line 1", "line 2");
  }

  @Test
  void serverExceptionReachesCallerAsStatusWithClassAndMessageWhenAllDetailsAreSent() throws Exception {
    // FAIL does not declare its exception: its class and message travel only with exceptionDetails(ALL).
    RpcServer server = startServer(b -> b.exceptionDetails(ExceptionDetails.ALL));
    RpcClient client = client(server.port());
    assertThatThrownBy(() -> client.unaryCall(TestService.FAIL, StringValue.of("x")))
        .isInstanceOfSatisfying(StatusException.class, e -> {
          assertThat(e.code()).isEqualTo(Status.Code.UNKNOWN);
          assertThat(e.status().description()).isEqualTo("java.lang.IllegalStateException: boom: x");
        });
    // The connection is still fine afterwards.
    assertThat(client.unaryCall(TestService.ECHO, StringValue.of("ok")).getValue()).isEqualTo("ok");
  }

  @Test
  void unknownMethodGivesUnimplementedNamingIt() throws Exception {
    RpcServer server = startServer();
    RpcClient client = client(server.port());
    assertThatThrownBy(() -> client.unaryCall(TestService.MISSING, StringValue.of("x")))
        .isInstanceOfSatisfying(StatusException.class, e -> {
          assertThat(e.code()).isEqualTo(Status.Code.UNIMPLEMENTED);
          assertThat(e.status().description()).contains("test.Echo/missing").contains("127.0.0.1:" + server.port())
              .contains("test.Echo");
        });
  }

  @Test
  void nioTransportWorksToo() throws Exception {
    RpcServer server = startServer(b -> b.option(NettyOptions.IO_MODE, IoMode.NIO).option(NettyOptions.WORKER_THREADS, 1));
    RpcClient client = client(server.port(), b -> b.option(NettyOptions.IO_MODE, IoMode.NIO));
    assertThat(client.unaryCall(TestService.ECHO, StringValue.of("nio")).getValue()).isEqualTo("nio");
  }

  @Test
  void userExecutorRunsHandlersAndItsRejectionIsResourceExhausted() throws Exception {
    java.util.concurrent.atomic.AtomicBoolean accept = new java.util.concurrent.atomic.AtomicBoolean(true);
    java.util.concurrent.atomic.AtomicInteger ran = new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.Executor executor = task -> {
      if (!accept.get()) {
        throw new java.util.concurrent.RejectedExecutionException("test executor is closed");
      }
      ran.incrementAndGet();
      new Thread(task, "user-executor").start();
    };
    RpcServer server = startServer(b -> b.executor(executor));
    RpcClient client = client(server.port());
    assertThat(client.unaryCall(TestService.ECHO, StringValue.of("u")).getValue()).isEqualTo("u");
    assertThat(ran.get()).isEqualTo(1);
    accept.set(false);
    assertThatThrownBy(() -> client.unaryCall(TestService.ECHO, StringValue.of("r")))
        .isInstanceOfSatisfying(StatusException.class, e -> {
          assertThat(e.code()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
          assertThat(e.status().description()).contains("test executor is closed");
        });
  }

  @Test
  void connectErrorNamesTheAddress() throws Exception {
    int port;
    try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    RpcClient client = client(port);
    assertThatThrownBy(() -> client.unaryCall(TestService.ECHO, StringValue.of("x")))
        .isInstanceOfSatisfying(StatusException.class, e -> {
          assertThat(e.code()).isEqualTo(Status.Code.UNAVAILABLE);
          assertThat(e.status().description()).contains("cannot connect to 127.0.0.1:" + port);
        });
    assertThatThrownBy(client::start).isInstanceOf(StatusException.class).hasMessageContaining("127.0.0.1:" + port);
  }
}
