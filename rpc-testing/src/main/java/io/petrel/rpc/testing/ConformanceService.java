package io.petrel.rpc.testing;

import com.google.protobuf.StringValue;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.MethodType;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.marshal.ArgsMarshaller;
import io.petrel.rpc.marshal.FieldCodecs;
import io.petrel.rpc.marshal.Marshallers;
import io.petrel.rpc.marshal.ProtobufMarshaller;
import io.petrel.rpc.marshal.ValueMarshaller;
import java.util.Map;
import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * The service {@link AbstractTransportTest} calls: descriptors as generated code declares them, and handlers
 * that report what they saw (requests, metadata, cancellation) through queues the tests wait on.
 */
final class ConformanceService {
  static final String NAME = "conformance.Echo";

  private static MethodDescriptor.Builder<StringValue, StringValue> text(String method) {
    return MethodDescriptor.<StringValue, StringValue>newBuilder().serviceName(NAME).methodName(method)
        .requestMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
        .responseMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()));
  }

  static final MethodDescriptor<StringValue, StringValue> ECHO = text("echo").build();

  static final MethodDescriptor<Object[], Integer> ADD = MethodDescriptor.<Object[], Integer>newBuilder()
      .serviceName(NAME).methodName("add")
      .requestMarshaller(ArgsMarshaller.of(FieldCodecs.INT32, FieldCodecs.INT32))
      .responseMarshaller(ValueMarshaller.of(FieldCodecs.INT32))
      .build();

  /** Reverses the bytes it receives in place and returns that same array. */
  static final MethodDescriptor<byte[], byte[]> REVERSE = MethodDescriptor.<byte[], byte[]>newBuilder()
      .serviceName(NAME).methodName("reverse")
      .requestMarshaller(Marshallers.bytes()).responseMarshaller(Marshallers.bytes())
      .build();

  /** Returns a body of the requested size. */
  static final MethodDescriptor<Object[], byte[]> BIG_RESPONSE = MethodDescriptor.<Object[], byte[]>newBuilder()
      .serviceName(NAME).methodName("bigResponse")
      .requestMarshaller(ArgsMarshaller.of(FieldCodecs.INT32)).responseMarshaller(Marshallers.bytes())
      .build();

  /** Fails with NOT_FOUND naming the request; adds response metadata "x-failed" first. */
  static final MethodDescriptor<StringValue, StringValue> NOT_FOUND = text("notFound").build();

  /**
   * Throws an IllegalStateException naming the request (an unexpected exception the method does not declare:
   * UNKNOWN, its class and message sent only with {@code exceptionDetails(ALL)}).
   */
  static final MethodDescriptor<StringValue, StringValue> CRASH = text("crash").build();
  /**
   * Declares FileNotFoundException (as generated code does for {@code throws FileNotFoundException}) and throws
   * one, "no file " + the request; a request "crash" throws an IllegalStateException it does not declare.
   */
  static final MethodDescriptor<StringValue, StringValue> OPEN =
      text("open").declaredExceptions("java.io.FileNotFoundException").build();
  /** As OPEN, from an asynchronous handler: its future fails with the exception. */
  static final MethodDescriptor<StringValue, StringValue> OPEN_ASYNC =
      text("openAsync").declaredExceptions("java.io.FileNotFoundException").build();

  static final MethodDescriptor<StringValue, StringValue> ASYNC_ECHO = text("asyncEcho").build();

  /**
   * Answers with the request's "x-test" metadata and the principal interceptors set, and sends response
   * metadata "x-served" = the request.
   */
  static final MethodDescriptor<StringValue, StringValue> META = text("meta").build();

  /** Holds the call (no thread) until the test releases it, or the call is cancelled. */
  static final MethodDescriptor<StringValue, StringValue> HOLD = text("hold").build();

  static final MethodDescriptor<StringValue, Void> LOG = MethodDescriptor.<StringValue, Void>newBuilder()
      .serviceName(NAME).methodName("log").type(MethodType.ONEWAY)
      .requestMarshaller(ProtobufMarshaller.of(StringValue.getDefaultInstance()))
      .build();

  /** Served nowhere: the server answers UNIMPLEMENTED. */
  static final MethodDescriptor<StringValue, StringValue> MISSING = text("missing").build();
  /**
   * Request "key:n": the first n executions of that key fail with UNAVAILABLE, later ones echo the key; every
   * execution is counted in {@link #executions}. {@code FLAKY_IDEMPOTENT} is declared idempotent, {@code FLAKY}
   * is not.
   */
  static final MethodDescriptor<StringValue, StringValue> FLAKY = text("flaky").build();
  static final MethodDescriptor<StringValue, StringValue> FLAKY_IDEMPOTENT =
      text("flakyIdempotent").idempotent(true).build();

  /**
   * A middle tier: calls HOLD with its request on {@link #downstream} from the handler's thread (a blocking call),
   * and records how that call ended in {@link #relayed} ("OK" or the status code and description). A request
   * starting with "wait:" first waits until its own caller gives up.
   */
  static final MethodDescriptor<StringValue, StringValue> RELAY = text("relay").build();
  /**
   * As RELAY, from an asynchronous handler whose stage calls HOLD on another thread, with the served call's context
   * carried there ({@code ServerContext.wrap(Executor)}).
   */
  static final MethodDescriptor<StringValue, StringValue> RELAY_ASYNC = text("relayAsync").build();
  /**
   * Waits (on the handler's thread, up to 30 s) until its caller gives up, then answers OK anyway; the request is
   * added to {@link #lateRunning} when the handler starts and to {@link #lateAnswered} just before it returns.
   */
  static final MethodDescriptor<StringValue, StringValue> LATE = text("late").build();

  /** Where RELAY calls HOLD; set by the test. */
  volatile @Nullable RpcClient downstream;
  /** How each RELAY's call to HOLD ended: "OK", or "CODE: description". */
  final BlockingQueue<String> relayed = new LinkedBlockingQueue<>();
  /** Requests of RELAY calls ("wait:...") whose handler waits for its caller to give up. */
  final BlockingQueue<String> relayWaiting = new LinkedBlockingQueue<>();
  /** Requests of LATE calls whose handler runs. */
  final BlockingQueue<String> lateRunning = new LinkedBlockingQueue<>();
  /** LATE calls as their server learnt that the caller gave up: "request cancellationCode(): why". */
  final BlockingQueue<String> lateCancelCodes = new LinkedBlockingQueue<>();
  /** Requests of LATE calls whose handler is about to answer after its caller gave up. */
  final BlockingQueue<String> lateAnswered = new LinkedBlockingQueue<>();

  /** How many times a FLAKY or FLAKY_IDEMPOTENT handler ran, by key: a ledger of executions. */
  final Map<String, AtomicInteger> executions = new ConcurrentHashMap<>();

  /** Oneway requests, in arrival order. */
  final BlockingQueue<String> logged = new LinkedBlockingQueue<>();
  /** Requests of HOLD calls that reached the handler. */
  final BlockingQueue<String> holding = new LinkedBlockingQueue<>();
  /** Requests of HOLD calls whose server context was cancelled (caller gone: deadline, cancel, closed). */
  final BlockingQueue<String> cancelled = new LinkedBlockingQueue<>();
  /** The request objects the handlers of ECHO and REVERSE saw (a transport must not hand over the caller's). */
  final Queue<Object> requestsSeen = new ConcurrentLinkedQueue<>();
  private final Queue<CompletableFuture<StringValue>> held = new ConcurrentLinkedQueue<>();
  private volatile boolean released;

  ServiceDefinition definition() {
    return ServiceDefinition.builder(NAME)
        .unary(ECHO, req -> {
          requestsSeen.add(req);
          return req;
        })
        .unary(ADD, args -> (Integer) args[0] + (Integer) args[1])
        .unary(REVERSE, bytes -> {
          requestsSeen.add(bytes);
          for (int i = 0, j = bytes.length - 1; i < j; i++, j--) {
            byte t = bytes[i];
            bytes[i] = bytes[j];
            bytes[j] = t;
          }
          return bytes;
        })
        .unary(BIG_RESPONSE, args -> new byte[(Integer) args[0]])
        .unary(NOT_FOUND, req -> {
          context().addResponseMetadata("x-failed", req.getValue());
          throw Status.NOT_FOUND.withDescription("no such thing: " + req.getValue()).asException();
        })
        .unary(CRASH, req -> {
          throw new IllegalStateException("crashed on " + req.getValue());
        })
        .unary(OPEN, req -> {
          throw openFailure(req);
        })
        .async(OPEN_ASYNC, req -> CompletableFuture.supplyAsync(() -> {
          throw new java.util.concurrent.CompletionException(openFailure(req));
        }))
        .async(ASYNC_ECHO, req -> CompletableFuture.supplyAsync(() -> StringValue.of("async:" + req.getValue())))
        .unary(META, req -> {
          ServerContext ctx = context();
          ctx.addResponseMetadata("x-served", req.getValue());
          return StringValue.of(ctx.metadata().get("x-test") + "|" + ctx.metadata().get("x-intercepted")
              + "|" + (ctx.principal() == null ? "-" : ctx.principal().getName()));
        })
        .async(HOLD, req -> {
          ServerContext ctx = context();
          CompletableFuture<StringValue> f = new CompletableFuture<>();
          ctx.onCancel(() -> {
            cancelled.add(req.getValue());
            f.completeExceptionally(Status.CANCELLED.withDescription("cancelled").asException());
          });
          held.add(f);
          holding.add(req.getValue());
          if (released) {
            releaseHeld();
          }
          return f.thenApply(r -> StringValue.of("held:" + req.getValue()));
        })
        .unary(RELAY, req -> {
          if (req.getValue().startsWith("wait:")) {
            relayWaiting.add(req.getValue());
            awaitCallerGivingUp(); // then calls on behalf of a call nobody waits for
          }
          return relayToHold(req);
        })
        .async(RELAY_ASYNC, req -> CompletableFuture.supplyAsync(() -> {
          try {
            return relayToHold(req);
          } catch (StatusException e) {
            throw new java.util.concurrent.CompletionException(e);
          }
        }, context().wrap(java.util.concurrent.ForkJoinPool.commonPool())))
        .unary(LATE, req -> {
          lateRunning.add(req.getValue());
          ServerContext ctx = context();
          ctx.onCancel(() -> lateCancelCodes.add(req.getValue() + " " + ctx.cancellationCode() + ": "
              + java.util.Objects.requireNonNull(ctx.cancellationStatus()).description()));
          awaitCallerGivingUp();
          lateAnswered.add(req.getValue());
          return StringValue.of("late:" + req.getValue());
        })
        .unary(FLAKY, this::flaky)
        .unary(FLAKY_IDEMPOTENT, this::flaky)
        .unary(LOG, req -> {
          logged.add(req.getValue());
          return null;
        })
        .build();
  }

  /** RELAY's call: HOLD on {@link #downstream}, on this thread, its end recorded in {@link #relayed}. */
  private static Exception openFailure(StringValue req) {
    return req.getValue().equals("crash") ? new IllegalStateException("crashed opening /etc/secret")
        : new java.io.FileNotFoundException("no file " + req.getValue());
  }

  private StringValue relayToHold(StringValue req) throws StatusException {
    RpcClient to = Objects.requireNonNull(downstream, "the test sets downstream");
    try {
      StringValue r = to.unaryCall(HOLD, req);
      relayed.add("OK");
      return r;
    } catch (StatusException e) {
      relayed.add(e.code() + ": " + e.status().description());
      throw e;
    }
  }

  /** Waits on the handler's thread, up to 30 s, until the caller of the call being served gives up. */
  private static void awaitCallerGivingUp() throws InterruptedException, StatusException {
    CountDownLatch gaveUp = new CountDownLatch(1);
    context().onCancel(gaveUp::countDown);
    if (!gaveUp.await(30, TimeUnit.SECONDS)) {
      throw Status.INTERNAL.withDescription("the caller did not give up within 30 s").asException();
    }
  }

  private StringValue flaky(StringValue req) throws io.petrel.rpc.StatusException {
    String[] keyAndFailures = req.getValue().split(":");
    String key = keyAndFailures[0];
    int n = executions.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
    if (n <= Integer.parseInt(keyAndFailures[1])) {
      throw Status.UNAVAILABLE.withDescription("flaky " + key + " failed execution " + n).asException();
    }
    return StringValue.of(key);
  }

  /** Executions of {@code key} so far. */
  int executionsOf(String key) {
    AtomicInteger n = executions.get(key);
    return n == null ? 0 : n.get();
  }

  /** Answers every HOLD call held so far, and from now on answers them at once. */
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

  /** The context of the call a handler serves (never null there). */
  private static ServerContext context() {
    return Objects.requireNonNull(ServerContext.current(), "inside a handler");
  }
}
