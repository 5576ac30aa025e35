package io.petrel.rpc.spi;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.petrel.rpc.InProcessAddress;
import io.petrel.rpc.Marshaller;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.MethodType;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.Status;
import io.petrel.rpc.internal.inprocess.InProcessServers;
import io.petrel.rpc.marshal.Marshallers;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The contract between the core's {@link ServerCall} and a transport's {@link ServerStream}, driven by a tiny
 * transport of the test's own: what it delivers (messages, the end of the client's stream) and what the core answers through it. The
 * server runs handlers directly, so every call has ended when {@link ServerDispatcher#execute} returns.
 */
class ServerCallTest {
  private static final AtomicInteger SERVERS = new AtomicInteger();

  private static final MethodDescriptor<byte[], byte[]> REVERSE = MethodDescriptor.<byte[], byte[]>newBuilder()
      .serviceName("test.Calls").methodName("Reverse").type(MethodType.UNARY)
      .requestMarshaller(Marshallers.bytes()).responseMarshaller(Marshallers.bytes()).build();
  private static final MethodDescriptor<byte[], Void> FIRE = MethodDescriptor.<byte[], Void>newBuilder()
      .serviceName("test.Calls").methodName("Fire").type(MethodType.ONEWAY)
      .requestMarshaller(Marshallers.bytes()).responseMarshaller(Marshallers.empty()).build();
  private static final MethodDescriptor<byte[], byte[]> REFUSE = MethodDescriptor.<byte[], byte[]>newBuilder()
      .serviceName("test.Calls").methodName("Refuse").type(MethodType.UNARY)
      .requestMarshaller(Marshallers.bytes()).responseMarshaller(Marshallers.bytes()).build();
  private static final MethodDescriptor<byte[], byte[]> STOPPED = MethodDescriptor.<byte[], byte[]>newBuilder()
      .serviceName("test.Calls").methodName("Stopped").type(MethodType.UNARY)
      .requestMarshaller(Marshallers.bytes()).responseMarshaller(Marshallers.bytes()).build();

  private final List<String> handled = new ArrayList<>();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private RpcServer server;
  private ServerDispatcher dispatcher;

  @BeforeEach
  void startServer() throws Exception {
    ServiceDefinition service = ServiceDefinition.builder("test.Calls")
        .unary(REVERSE, request -> {
          String s = new String(request, UTF_8);
          handled.add("Reverse " + s);
          ServerContext.current().addResponseMetadata("x-handled", "yes");
          return new StringBuilder(s).reverse().toString().getBytes(UTF_8);
        })
        .unary(FIRE, request -> {
          handled.add("Fire " + new String(request, UTF_8));
          return null;
        })
        .unary(REFUSE, request -> {
          handled.add("Refuse " + new String(request, UTF_8));
          ServerContext.current().addResponseMetadata("x-why", "test");
          throw Status.NOT_FOUND.withDescription("no such thing").asException();
        })
        .unary(STOPPED, request -> {
          handled.add("Stopped " + new String(request, UTF_8));
          // As if shutdownNow came while the handler ran, and interrupted it.
          InProcessServers.dispatcher(server).shutdownNow();
          throw new IllegalStateException("interrupted while reading /etc/shadow");
        })
        .build();
    server = RpcServer.builder().inProcess("server-call-test-" + SERVERS.incrementAndGet()).addService(service)
        .directExecutor().meterRegistry(registry).build().start();
    dispatcher = InProcessServers.dispatcher(server);
  }

  @AfterEach
  void stopServer() throws Exception {
    server.shutdownNow();
    assertThat(server.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void aUnaryCallAnswersWithOneMessageWithTheEndMarkerThenNothingElse() {
    ByteBuf request = message("abc");
    TestCall call = call(REVERSE);
    call.receive(request, true);

    assertThat(dispatcher.execute(call.call)).isNull();

    assertThat(handled).containsExactly("Reverse abc");
    // The headers travel with the one message: the transport takes them from the context.
    assertThat(call.events).containsExactly("message cba, end, headers [x-handled=yes]", "ended");
    assertThat(request.refCnt()).isZero();
    assertThat(callsRecorded("OK")).isEqualTo(1);
  }

  @Test
  void aUnaryCallThatFailsAnswersWithTheStatusAloneCarryingTheResponseMetadata() {
    TestCall call = call(REFUSE);
    call.receive(message("x"), true);

    dispatcher.execute(call.call);

    assertThat(handled).containsExactly("Refuse x");
    assertThat(call.events).containsExactly("status NOT_FOUND: no such thing, metadata [x-why=test]", "ended");
    assertThat(callsRecorded("NOT_FOUND")).isEqualTo(1);
  }

  /**
   * A handler that shutdownNow interrupted: UNAVAILABLE, to retry elsewhere, naming neither the server (the caller
   * may be any peer) nor what the handler threw.
   */
  @Test
  void aHandlerInterruptedByShutdownNowIsAnsweredUnavailableWithoutTheServersName() {
    TestCall call = call(STOPPED);
    call.receive(message("x"), true);

    dispatcher.execute(call.call);

    assertThat(handled).containsExactly("Stopped x");
    assertThat(call.events).containsExactly("status UNAVAILABLE: the server was stopped (shutdownNow) while"
        + " test.Calls/Stopped ran; retry on another server, metadata []", "ended");
  }

  @Test
  void twoMessagesForAUnaryMethodAreRefusedWithInvalidArgumentAndBothAreReleased() {
    ByteBuf first = message("one");
    ByteBuf second = message("two");
    TestCall call = call(REVERSE);
    call.receive(first, false);
    call.receive(second, true);
    assertThat(second.refCnt()).as("a second message is released as it arrives").isZero();

    dispatcher.execute(call.call);

    assertThat(handled).isEmpty();
    assertThat(call.events).containsExactly("status INVALID_ARGUMENT: the client sent 2 request messages to"
        + " test.Calls/Reverse, a UNARY method, which takes exactly one; the handler was not run (send one request"
        + " per call), metadata []", "ended");
    assertThat(first.refCnt()).isZero();
    assertThat(callsRecorded("INVALID_ARGUMENT")).isEqualTo(1);
  }

  @Test
  void anEndWithoutAMessageIsRefusedWithInvalidArgument() {
    TestCall call = call(REVERSE);
    call.receiveEnd();

    dispatcher.execute(call.call);

    assertThat(handled).isEmpty();
    assertThat(call.events).containsExactly("status INVALID_ARGUMENT: the client ended its stream to"
        + " test.Calls/Reverse, a UNARY method, without a request message; it takes exactly one; the handler was not"
        + " run (send one request per call), metadata []", "ended");
  }

  @Test
  void aMessageWithoutTheEndIsATransportBugAnsweredWithInternal() {
    ByteBuf request = message("abc");
    TestCall call = call(REVERSE);
    call.receive(request, false);

    dispatcher.execute(call.call);

    assertThat(handled).isEmpty();
    assertThat(call.events).containsExactly("status INTERNAL: the server ran test.Calls/Reverse, a UNARY method,"
        + " before the end of the client's stream (1 message so far): a bug in the server's transport, which must"
        + " deliver a call's message and its end before it hands the call over; the handler was not run,"
        + " metadata []", "ended");
    assertThat(request.refCnt()).isZero();
    assertThat(callsRecorded("INTERNAL")).isEqualTo(1);
  }

  @Test
  void aMessageAndTheEndDeliveredApartMakeAUnaryRequest() {
    TestCall call = call(REVERSE);
    call.receive(message("ab"), false);
    call.receiveEnd();

    dispatcher.execute(call.call);

    assertThat(handled).containsExactly("Reverse ab");
    assertThat(call.events).containsExactly("message ba, end, headers [x-handled=yes]", "ended");
  }

  @Test
  void aOnewayCallSendsNothingBackEvenWhenItsStreamIsWrong() {
    TestCall good = call(FIRE);
    good.receive(message("ok"), true);
    ByteBuf first = message("one");
    ByteBuf second = message("two");
    TestCall twice = call(FIRE);
    twice.receive(first, false);
    twice.receive(second, true);

    dispatcher.execute(good.call);
    dispatcher.execute(twice.call);

    assertThat(handled).containsExactly("Fire ok");
    assertThat(good.events).containsExactly("ended");
    assertThat(twice.events).containsExactly("ended");
    assertThat(first.refCnt()).isZero();
    assertThat(second.refCnt()).isZero();
    assertThat(callsRecorded("OK")).isEqualTo(1);
    assertThat(callsRecorded("INVALID_ARGUMENT")).isEqualTo(1);
  }

  @Test
  void aMessageAfterTheEndIsRefusedAndReleased() {
    TestCall call = call(REVERSE);
    call.receive(message("abc"), true);
    ByteBuf late = message("late");

    assertThatThrownBy(() -> call.receive(late, false)).isInstanceOf(IllegalStateException.class)
        .hasMessage("a message of test.Calls/Reverse was delivered after the end of the client's stream; a"
            + " transport delivers nothing after the end");
    assertThatThrownBy(call::receiveEnd).isInstanceOf(IllegalStateException.class)
        .hasMessage("the end of the client's stream of test.Calls/Reverse was delivered twice");
    assertThat(late.refCnt()).isZero();

    dispatcher.execute(call.call); // the call itself is still whole
    assertThat(call.events).containsExactly("message cba, end, headers [x-handled=yes]", "ended");
  }

  @Test
  void aCallThatNeverRunsReleasesItsMessageOnDiscardOrAbandon() {
    ByteBuf refused = message("refused");
    TestCall discarded = call(REVERSE);
    discarded.receive(refused, true);
    ByteBuf queued = message("queued");
    TestCall abandoned = call(REVERSE);
    abandoned.receive(queued, true);

    discarded.discard();
    abandoned.abandon();

    assertThat(refused.refCnt()).isZero();
    assertThat(queued.refCnt()).isZero();
    assertThat(discarded.events).as("a discarded call never started: the transport undoes its own bookkeeping")
        .isEmpty();
    assertThat(abandoned.events).containsExactly("ended");
    assertThat(callsRecorded("CANCELLED")).isEqualTo(1);
    assertThat(handled).isEmpty();
  }

  @Test
  void aMessageThatWaitsForThePeerEndsTheCallOnlyWhenTheTransportSaysSo() {
    TestCall call = call(REVERSE);
    call.deferMessages = true;
    call.receive(message("abc"), true);

    dispatcher.execute(call.call);

    assertThat(call.events).containsExactly("message cba, end, headers [x-handled=yes]");
    assertThat(callsRecorded("OK")).isZero();
    call.deferredDone(Status.Code.OK, 3);
    assertThat(call.events).containsExactly("message cba, end, headers [x-handled=yes]", "ended");
    assertThat(callsRecorded("OK")).isEqualTo(1);
  }

  private long callsRecorded(String status) {
    Timer t = registry.find("rpc.server.calls").tag("status", status).timer();
    return t == null ? 0 : t.count();
  }

  private static ByteBuf message(String s) {
    ByteBuf b = PooledByteBufAllocator.DEFAULT.buffer();
    b.writeCharSequence(s, UTF_8);
    return b;
  }

  private TestCall call(MethodDescriptor<?, ?> method) {
    ServerDispatcher.Method entry = dispatcher.lookup(method.id());
    assertThat(entry).as("method %s is served", method.fullName()).isNotNull();
    return new TestCall(dispatcher, entry);
  }

  /** The test's transport: delivers what a test says, and writes down what the core sends back. */
  private static final class TestCall implements ServerStream {
    final List<String> events = new ArrayList<>();
    final ServerCall call;
    boolean deferMessages;
    private @Nullable Metadata headers;
    private int messagesSent;

    TestCall(ServerDispatcher dispatcher, ServerDispatcher.Method entry) {
      call = dispatcher.newCall(entry, new ServerContext(entry.method(), Metadata.EMPTY, null,
          new InProcessAddress("server-call-test"), 0, System.nanoTime()), this);
    }

    void receive(ByteBuf message, boolean endOfStream) {
      call.messageReceived(message, endOfStream);
    }

    void receiveEnd() {
      call.endOfStreamReceived();
    }

    void discard() {
      call.discard();
    }

    void abandon() {
      call.abandon();
    }

    void deferredDone(Status.Code code, int responseBytes) {
      call.deferredDone(code, responseBytes);
    }

    @Override
    public void sendHeaders(Metadata headers) {
      events.add("headers " + entries(headers));
      this.headers = headers;
    }

    @Override
    public int sendMessage(Marshaller<Object> marshaller, Object message, boolean endOfStream) {
      // The first message carries the headers, unless they went ahead of it (sendHeaders).
      String folded = messagesSent++ > 0 || headers != null ? ""
          : ", headers " + entries(call.context().responseMetadata());
      events.add("message " + new String((byte[]) message, UTF_8) + (endOfStream ? ", end" : "") + folded);
      return deferMessages ? ServerCall.DEFERRED : marshaller.serializedSize(message);
    }

    @Override
    public void sendStatus(Status status, Metadata metadata) {
      events.add("status " + status.code() + ": " + status.description() + ", metadata " + entries(metadata));
    }

    @Override
    public void onEnded() {
      events.add("ended");
    }

    private static String entries(Metadata md) {
      List<String> out = new ArrayList<>();
      for (Metadata.Entry e : md.entries()) {
        out.add(e.key() + "=" + e.stringValue());
      }
      return out.toString();
    }
  }
}
