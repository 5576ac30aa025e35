package it.pb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.google.protobuf.Int64Value;
import com.google.protobuf.StringValue;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.ClientInterceptor;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServerContext;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class EchoServiceTest {
  private final CountDownLatch release = new CountDownLatch(1);
  private RpcServer server;
  private RpcClient client;
  private EchoRpc.EchoStub echo;

  private final class EchoImpl implements Echo {
    @Override
    public StringValue echo(StringValue request) {
      return request.getValue().equals("null please") ? null : request;
    }

    @Override
    public Int64Value length(StringValue text) {
      if (text.getValue().equals("crash")) {
        throw new IllegalStateException("cannot reach jdbc:postgresql://db.internal/secrets");
      }
      return Int64Value.of(text.getValue().length());
    }

    @Override
    public StringValue fail(StringValue reason) throws EchoException {
      throw new EchoException(reason.getValue());
    }

    @Override
    public StringValue whoAmI(StringValue ignored) {
      return StringValue.of(ServerContext.current().metadata().get("caller"));
    }

    @Override
    public StringValue slow(StringValue request) {
      try {
        release.await(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return request;
    }
  }

  @BeforeEach
  void start() throws Exception {
    server = RpcServer.builder().bindAddress("127.0.0.1", 0).addService(EchoRpc.bind(new EchoImpl())).build().start();
    client = RpcClient.builder().address("127.0.0.1", server.port()).build();
    echo = EchoRpc.stub(client);
  }

  @AfterEach
  void stop() {
    release.countDown();
    client.close();
    server.close();
  }

  @Test
  void protobufMessagesMakeTheRoundTrip() {
    assertThat(echo.echo(StringValue.of("hello")).getValue()).isEqualTo("hello");
    assertThat(echo.echo(StringValue.getDefaultInstance())).isEqualTo(StringValue.getDefaultInstance());
    assertThat(echo.length(StringValue.of("four")).getValue()).isEqualTo(4L);
  }

  @Test
  void theAsyncStubReturnsFuturesOfTheSameCalls() throws Exception {
    assertThat(EchoRpc.asyncStub(client).echo(StringValue.of("later")).get(10, TimeUnit.SECONDS).getValue())
        .isEqualTo("later");
  }

  @Test
  void aDeclaredExceptionReachesTheCallerAsItsOwnTypeWithItsMessage() {
    EchoException e = catchThrowableOfType(EchoException.class, () -> echo.fail(StringValue.of("no luck")));
    assertThat(e).hasMessage("no luck");
    assertThat(e.getCause()).isInstanceOfSatisfying(StatusException.class, cause -> {
      assertThat(cause.code()).isEqualTo(Status.Code.UNKNOWN);
      assertThat(cause.status().description()).isEqualTo("it.pb.EchoException: no luck");
    });
  }

  @Test
  void theAsyncStubCompletesWithTheDeclaredException() {
    assertThatThrownBy(() -> EchoRpc.asyncStub(client).fail(StringValue.of("later")).get(10, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .cause().isInstanceOf(EchoException.class).hasMessage("later");
  }

  @Test
  void theServersExceptionMapperChoosesTheStatusAndTheTypeStillArrives() throws Exception {
    try (RpcServer mapped = RpcServer.builder().bindAddress("127.0.0.1", 0).addService(EchoRpc.bind(new EchoImpl()))
            .exceptionMapper((method, t) -> t instanceof EchoException
                ? Status.FAILED_PRECONDITION.withDescription("mapped: " + t.getMessage()) : null)
            .start();
        RpcClient c = RpcClient.builder().address("127.0.0.1", mapped.port()).build()) {
      EchoRpc.EchoStub stub = EchoRpc.stub(c);
      EchoException e = catchThrowableOfType(EchoException.class, () -> stub.fail(StringValue.of("nope")));
      assertThat(e).hasMessage("nope");
      assertThat(((StatusException) e.getCause()).status())
          .isEqualTo(Status.FAILED_PRECONDITION.withDescription("mapped: nope"));
      // A caller without the generated stub sees the mapped status and the metadata that names the exception.
      AtomicReference<Metadata> seen = new AtomicReference<>();
      assertThatThrownBy(() -> c.unaryCall(EchoRpc.METHOD_FAIL, StringValue.of("raw"),
              CallOptions.DEFAULT.withResponseMetadataListener(seen::set)))
          .isInstanceOfSatisfying(StatusException.class,
              s -> assertThat(s.code()).isEqualTo(Status.Code.FAILED_PRECONDITION));
      assertThat(seen.get().getAll("petrel-exception-class")).containsExactly("it.pb.EchoException");
      assertThat(seen.get().get("petrel-exception-message")).isEqualTo("raw");
    }
  }

  /**
   * The generated descriptors list what the stubs rethrow. Over Netty and in-process, the declared exception arrives
   * as itself from the blocking and the async stub, and an exception length does not declare reaches the caller as
   * UNKNOWN naming neither its class nor its message, in the description or the response metadata.
   */
  @Test
  void declaredExceptionsArriveAsThemselvesOverEachTransportAndUndeclaredOnesNameNothing() throws Exception {
    assertThat(EchoRpc.METHOD_FAIL.declaredExceptions()).containsExactly("it.pb.EchoException");
    assertThat(EchoRpc.METHOD_LENGTH.declaredExceptions()).isEmpty();
    try (RpcServer local = RpcServer.builder().inProcess("it-echo").addService(EchoRpc.bind(new EchoImpl())).start();
        RpcClient inProcess = RpcClient.builder().inProcess("it-echo").build()) {
      for (RpcClient c : new RpcClient[] {client, inProcess}) {
        EchoException e = catchThrowableOfType(EchoException.class, () -> EchoRpc.stub(c).fail(StringValue.of("a")));
        assertThat(e).hasMessage("a");
        assertThatThrownBy(() -> EchoRpc.asyncStub(c).fail(StringValue.of("b")).get(10, TimeUnit.SECONDS))
            .isInstanceOf(ExecutionException.class)
            .cause().isInstanceOf(EchoException.class).hasMessage("b");
        AtomicReference<Metadata> seen = new AtomicReference<>();
        EchoRpc.EchoStub listening = EchoRpc.stub(c)
            .withOptions(CallOptions.DEFAULT.withResponseMetadataListener(seen::set));
        StatusException undeclared = catchThrowableOfType(StatusException.class,
            () -> listening.length(StringValue.of("crash")));
        assertThat(undeclared.status()).isEqualTo(Status.UNKNOWN.withDescription("it.Echo/length failed on the"
            + " server: its handler threw an exception the method does not declare (the server logs it; declare it"
            + " on the method, map it with RpcServer.builder().exceptionMapper, or let the server send it with"
            + " exceptionDetails(ALL))"));
        assertThat(seen.get().get("petrel-exception-class")).isNull();
        assertThat(seen.get().get("petrel-exception-message")).isNull();
      }
    }
  }

  @Test
  void metadataOfTheStubReachesTheServer() {
    assertThat(echo.withMetadata(Metadata.of("caller", "it-test")).whoAmI(StringValue.getDefaultInstance())
        .getValue()).isEqualTo("it-test");
  }

  @Test
  void interceptorsOfTheStubSeeAndChangeItsCalls() {
    ClientInterceptor tagCaller = new ClientInterceptor() {
      @Override
      public <Req, Resp> CompletableFuture<Resp> intercept(Chain<Req, Resp> chain) {
        assertThat(chain.method()).isSameAs(EchoRpc.METHOD_WHO_AM_I);
        return chain.proceed(chain.request(), chain.options().withMetadata(Metadata.of("caller", "interceptor")));
      }
    };
    assertThat(echo.withInterceptors(tagCaller).whoAmI(StringValue.getDefaultInstance()).getValue())
        .isEqualTo("interceptor");
  }

  @Test
  void theStubsDeadlineEndsACallThatTakesTooLong() {
    assertThatThrownBy(() -> echo.withDeadline(Duration.ofMillis(200)).slow(StringValue.of("x")))
        .isInstanceOfSatisfying(StatusException.class,
            e -> assertThat(e.code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));
  }

  @Test
  void nullMessagesAreRejectedWithAMessageThatSaysWhatToDo() {
    assertThatThrownBy(() -> echo.echo(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("it.Echo/echo: argument 'request' is null");
    assertThatThrownBy(() -> echo.echo(StringValue.of("null please")))
        .isInstanceOfSatisfying(StatusException.class, e -> {
          assertThat(e.code()).isEqualTo(Status.Code.INTERNAL);
          assertThat(e.status().description()).contains("it.Echo/echo returned null");
        });
  }
}
