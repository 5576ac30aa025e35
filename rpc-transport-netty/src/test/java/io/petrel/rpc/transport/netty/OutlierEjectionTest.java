package io.petrel.rpc.transport.netty;

import static org.assertj.core.api.Assertions.assertThat;

import io.petrel.rpc.CallOptions;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.lb.OutlierEjection;
import io.petrel.rpc.marshal.Marshallers;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Outlier ejection through real servers on loopback: a server that accepts calls and never answers, or fails
 * every call, is ejected after a few failures and then gets at most a few calls of a burst of 100.
 */
class OutlierEjectionTest {
  private static final MethodDescriptor<byte[], byte[]> WHO = MethodDescriptor.<byte[], byte[]>newBuilder()
      .serviceName("test.Who").methodName("who")
      .requestMarshaller(Marshallers.bytes()).responseMarshaller(Marshallers.bytes())
      .build();

  private final List<RpcServer> servers = new ArrayList<>();
  private final List<CompletableFuture<byte[]>> neverAnswered = new ArrayList<>();

  /** A server that answers with its name. */
  private RpcServer healthy(String name) throws Exception {
    return start(ServiceDefinition.builder("test.Who").unary(WHO, req -> name.getBytes(StandardCharsets.UTF_8))
        .build());
  }

  private RpcServer start(ServiceDefinition def) throws Exception {
    RpcServer s = RpcServer.builder().bindAddress("127.0.0.1", 0).addService(def).build().start();
    servers.add(s);
    return s;
  }

  @AfterEach
  void stop() throws Exception {
    synchronized (neverAnswered) {
      neverAnswered.forEach(f -> f.complete(new byte[0]));
    }
    for (RpcServer s : servers) {
      s.shutdownNow();
      assertThat(s.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
  }

  private static String target(RpcServer... s) {
    StringBuilder sb = new StringBuilder("static://");
    for (int i = 0; i < s.length; i++) {
      sb.append(i > 0 ? "," : "").append("127.0.0.1:").append(s[i].port());
    }
    return sb.toString();
  }

  /**
   * Sequential calls until the bad server has had {@code failures} of them; then a burst of 100 calls at once.
   * Returns how many calls of the burst reached the bad server, after checking that every call of the burst
   * succeeded.
   */
  private static int burstAfterWarmUp(RpcClient client, AtomicInteger badArrivals, int failures) throws Exception {
    CallOptions shortDeadline = CallOptions.DEFAULT.withTimeout(Duration.ofMillis(300));
    for (int i = 0; i < 30 && badArrivals.get() < failures; i++) {
      try {
        client.unaryCall(WHO, new byte[0], shortDeadline);
      } catch (StatusException expected) {
        // the bad server's calls fail
      }
    }
    assertThat(badArrivals.get()).isEqualTo(failures);
    int before = badArrivals.get();
    List<CompletableFuture<byte[]>> burst = new ArrayList<>();
    CallOptions options = CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(5));
    for (int i = 0; i < 100; i++) {
      burst.add(client.unaryCallAsync(WHO, new byte[0], options));
    }
    int failed = 0;
    for (CompletableFuture<byte[]> f : burst) {
      try {
        f.get(10, TimeUnit.SECONDS);
      } catch (java.util.concurrent.ExecutionException e) {
        failed++;
      }
    }
    int toBad = badArrivals.get() - before;
    assertThat(failed).as("failed calls of the burst (%d went to the bad server)", toBad).isEqualTo(toBad);
    return toBad;
  }

  @Test
  void aServerThatAcceptsAndNeverAnswersIsEjectedAndGetsAtMostAFewCallsOfABurst() throws Exception {
    AtomicInteger arrivals = new AtomicInteger();
    RpcServer silent = start(ServiceDefinition.builder("test.Who").async(WHO, req -> {
      arrivals.incrementAndGet();
      CompletableFuture<byte[]> never = new CompletableFuture<>();
      synchronized (neverAnswered) {
        neverAnswered.add(never);
      }
      return never;
    }).build());
    String target = target(healthy("a"), healthy("b"), silent);
    try (RpcClient client = RpcClient.builder().target(target)
        .loadBalancer(OutlierEjection.around("round_robin").consecutiveFailures(3).build()).build()) {
      int toSilent = burstAfterWarmUp(client, arrivals, 3);
      assertThat(toSilent).isLessThanOrEqualTo(2);
    }
  }

  @Test
  void aServerThatFailsEveryCallIsEjectedAndGetsAtMostAFewCallsOfABurst() throws Exception {
    AtomicInteger arrivals = new AtomicInteger();
    RpcServer failing = start(ServiceDefinition.builder("test.Who").unary(WHO, req -> {
      arrivals.incrementAndGet();
      throw Status.UNAVAILABLE.withDescription("out of order").asException();
    }).build());
    String target = target(healthy("a"), healthy("b"), failing);
    try (RpcClient client = RpcClient.builder().target(target)
        .loadBalancer(OutlierEjection.around("round_robin").consecutiveFailures(3).build()).build()) {
      assertThat(burstAfterWarmUp(client, arrivals, 3)).isLessThanOrEqualTo(2);
    }
    // Without ejection, round robin gives it its third of the burst: the check above can fail.
    arrivals.set(0);
    try (RpcClient plain = RpcClient.builder().target(target).loadBalancer("round_robin").build()) {
      assertThat(burstAfterWarmUp(plain, arrivals, 3)).isGreaterThanOrEqualTo(25);
    }
  }
}
