package io.petrel.rpc.transport.netty;

import com.google.protobuf.StringValue;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.Status;
import io.petrel.rpc.marshal.ProtobufMarshaller;
import java.net.SocketAddress;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An asynchronous handler that holds every call (no thread per call) until the test releases them, and checks
 * on entry that no connection has more calls running than the server's limit: a call over it is recorded and
 * failed with INTERNAL.
 */
final class HoldingService {
  static final MethodDescriptor<StringValue, StringValue> HOLD = MethodDescriptor.<StringValue, StringValue>newBuilder()
      .serviceName("test.Hold").methodName("hold")
      .requestMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
      .responseMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
      .build();

  private final int limit;
  /** Calls running per connection (handler entered, future not completed). */
  private final Map<SocketAddress, AtomicInteger> running = new ConcurrentHashMap<>();
  private final AtomicInteger maxRunning = new AtomicInteger();
  /** Descriptions of the calls that found their connection over the limit. */
  final List<String> overLimit = new CopyOnWriteArrayList<>();
  /** Request values in the order the handler saw them. */
  final Queue<String> seen = new ConcurrentLinkedQueue<>();
  /** One permit per call that entered the handler. */
  final Semaphore started = new Semaphore(0);
  private final Queue<CompletableFuture<StringValue>> held = new ConcurrentLinkedQueue<>();
  private volatile boolean released;

  HoldingService(int limit) {
    this.limit = limit;
  }

  ServiceDefinition definition() {
    return ServiceDefinition.builder("test.Hold").async(HOLD, req -> {
      SocketAddress peer = ServerContext.current().peer();
      AtomicInteger n = running.computeIfAbsent(peer, k -> new AtomicInteger());
      int now = n.incrementAndGet();
      maxRunning.accumulateAndGet(now, Math::max);
      seen.add(req.getValue());
      started.release();
      if (now > limit) {
        overLimit.add(req.getValue() + " found " + now + " calls running on " + peer);
        n.decrementAndGet();
        return CompletableFuture.failedFuture(Status.INTERNAL.withDescription("over the limit").asException());
      }
      CompletableFuture<StringValue> f = new CompletableFuture<>();
      CompletableFuture<StringValue> answer = f.whenComplete((r, t) -> n.decrementAndGet());
      held.add(f);
      if (released) {
        releaseHeld();
      }
      return answer.thenApply(r -> StringValue.of("held:" + req.getValue()));
    }).build();
  }

  /** From now on calls are answered at once; those held so far are answered now. */
  void releaseAll() {
    released = true;
    releaseHeld();
  }

  private void releaseHeld() {
    CompletableFuture<StringValue> f;
    while ((f = held.poll()) != null) {
      f.complete(StringValue.getDefaultInstance());
    }
  }

  /** The most calls that ran at once on one connection. */
  int maxRunning() {
    return maxRunning.get();
  }
}
