package io.petrel.rpc;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.petrel.rpc.internal.ErrorAnswers;
import io.petrel.rpc.marshal.Marshallers;
import io.petrel.rpc.stub.DeclaredExceptions;
import java.io.FileNotFoundException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What a caller gets when a handler throws: the mapper's status when it gives one, UNKNOWN otherwise, and in every
 * case the metadata that lets a stub rethrow a declared exception. Real calls through the in-process transport.
 */
class ExceptionMapperTest {
  private static final AtomicInteger SERVERS = new AtomicInteger();
  private static final MethodDescriptor<byte[], byte[]> OPEN = MethodDescriptor.<byte[], byte[]>newBuilder()
      .serviceName("test.Files").methodName("open").type(MethodType.UNARY)
      .requestMarshaller(Marshallers.bytes()).responseMarshaller(Marshallers.bytes()).build();

  private RpcServer server;
  private RpcClient client;

  private void start(ExceptionMapper mapper) throws Exception {
    ServiceDefinition files = ServiceDefinition.builder("test.Files")
        .unary(OPEN, request -> {
          String what = new String(request, UTF_8);
          switch (what) {
            case "status" -> throw Status.FAILED_PRECONDITION.withDescription("not now").asException();
            // A declared exception a stub rebuilt from another service's answer (the StatusException its cause),
            // thrown on by this handler.
            case "rethrown" -> throw DeclaredExceptions.withCause(new FileNotFoundException("rethrown"),
                Status.UNKNOWN.withDescription("java.io.FileNotFoundException: rethrown").asException());
            // The same around another status (a declared exception made from a downstream's deadline, say).
            case "declared-around" -> throw DeclaredExceptions.withCause(new FileNotFoundException("around"),
                Status.DEADLINE_EXCEEDED.withDescription("the next service was too slow").asException());
            // A status wrapped on its way (an unchecked wrapper, or future.get()'s ExecutionException): its own.
            case "wrapped" -> throw new IllegalStateException("wrapped",
                Status.NOT_FOUND.withDescription("no such row").asException());
            case "got" -> throw new java.util.concurrent.ExecutionException(
                Status.NOT_FOUND.withDescription("no such row").asException());
            case "error" -> throw new AssertionError("an Error, not an exception");
            default -> throw new FileNotFoundException(what);
          }
        })
        .build();
    String name = "exception-mapper-test-" + SERVERS.incrementAndGet();
    RpcServerBuilder b = RpcServer.builder().inProcess(name).addService(files);
    if (mapper != null) {
      b.exceptionMapper(mapper);
    }
    server = b.build().start();
    client = RpcClient.builder().inProcess(name).build();
  }

  @AfterEach
  void stop() {
    if (client != null) {
      client.close();
    }
    if (server != null) {
      server.close();
    }
  }

  private StatusException call(String what, AtomicReference<Metadata> metadata) {
    CallOptions options = CallOptions.DEFAULT.withResponseMetadataListener(metadata::set);
    try {
      client.unaryCall(OPEN, what.getBytes(UTF_8), options);
    } catch (StatusException e) {
      return e;
    }
    throw new AssertionError("the call did not fail");
  }

  @Test
  void withoutAMapperAnExceptionIsUnknownAndItsClassesAndMessageTravelInMetadata() throws Exception {
    start(null);
    AtomicReference<Metadata> md = new AtomicReference<>();
    StatusException e = call("/etc/missing", md);
    assertThat(e.status()).isEqualTo(Status.UNKNOWN.withDescription("java.io.FileNotFoundException: /etc/missing"));
    assertThat(md.get().getAll(DeclaredExceptions.CLASS_KEY))
        .containsExactly("java.io.FileNotFoundException", "java.io.IOException");
    assertThat(md.get().get(DeclaredExceptions.MESSAGE_KEY)).isEqualTo("/etc/missing");
  }

  /**
   * A declared (checked) exception whose cause is a StatusException, as when a middle tier throws on the exception
   * a stub rebuilt from the next service's answer: the status is that StatusException's, and the exception's class
   * names travel too, so that the caller's stub rethrows it as itself. A StatusException inside unchecked wrappers
   * or an ExecutionException decides the status, and no class names travel.
   */
  @Test
  void aCheckedExceptionIsAnsweredAsItselfWhateverItsCauseAndAWrappedStatusAsThatStatus() throws Exception {
    start(null);
    AtomicReference<Metadata> md = new AtomicReference<>();
    StatusException rethrown = call("rethrown", md);
    assertThat(rethrown.status().description()).isEqualTo("java.io.FileNotFoundException: rethrown");
    assertThat(md.get().getAll(DeclaredExceptions.CLASS_KEY))
        .containsExactly("java.io.FileNotFoundException", "java.io.IOException");
    StatusException around = call("declared-around", md);
    assertThat(around.status()).isEqualTo(Status.DEADLINE_EXCEEDED.withDescription("the next service was too slow"));
    assertThat(md.get().getAll(DeclaredExceptions.CLASS_KEY)).startsWith("java.io.FileNotFoundException");
    assertThat(md.get().get(DeclaredExceptions.MESSAGE_KEY)).isEqualTo("around");
    for (String wrapped : new String[] {"wrapped", "got"}) {
      StatusException e = call(wrapped, md);
      assertThat(e.status()).as(wrapped).isEqualTo(Status.NOT_FOUND.withDescription("no such row"));
      assertThat(md.get().get(DeclaredExceptions.CLASS_KEY)).as(wrapped).isNull();
    }
  }

  @Test
  void theMappersStatusIsWhatTheCallerGets() throws Exception {
    start((method, t) -> t instanceof FileNotFoundException
        ? Status.NOT_FOUND.withDescription(method.methodName() + ": no file " + t.getMessage()) : null);
    AtomicReference<Metadata> md = new AtomicReference<>();
    assertThat(call("/tmp/x", md).status()).isEqualTo(Status.NOT_FOUND.withDescription("open: no file /tmp/x"));
    assertThat(md.get().getAll(DeclaredExceptions.CLASS_KEY)).startsWith("java.io.FileNotFoundException");
  }

  @Test
  void aStatusExceptionAndAnErrorNeverReachTheMapperOrCarryExceptionMetadata() throws Exception {
    AtomicInteger asked = new AtomicInteger();
    start((method, t) -> {
      asked.incrementAndGet();
      return Status.INTERNAL.withDescription("mapped");
    });
    AtomicReference<Metadata> md = new AtomicReference<>();
    assertThat(call("status", md).code()).isEqualTo(Status.Code.FAILED_PRECONDITION);
    assertThat(md.get().get(DeclaredExceptions.CLASS_KEY)).isNull();
    assertThat(asked).hasValue(0);
    StatusException error = call("error", md);
    assertThat(error.code()).isEqualTo(Status.Code.INTERNAL); // an Error is mapped, but names no class
    assertThat(md.get().get(DeclaredExceptions.CLASS_KEY)).isNull();
  }

  @Test
  void aMapperThatThrowsOrAnswersOkLeavesTheDefaultStatus() throws Exception {
    start((method, t) -> {
      if (t.getMessage().equals("boom")) {
        throw new IllegalStateException("mapper bug");
      }
      return Status.OK;
    });
    AtomicReference<Metadata> md = new AtomicReference<>();
    assertThat(call("boom", md).status()).isEqualTo(Status.UNKNOWN.withDescription("java.io.FileNotFoundException: boom"));
    assertThat(call("ok", md).status()).isEqualTo(Status.UNKNOWN.withDescription("java.io.FileNotFoundException: ok"));
  }

  @Test
  void theBuilderRefusesANullMapper() {
    assertThatThrownBy(() -> RpcServer.builder().exceptionMapper(null))
        .isInstanceOf(NullPointerException.class).hasMessage("exceptionMapper");
  }

  @Test
  void cuttingKeepsWholeCharactersAndSaysHowManyBytesWereLeftOut() {
    assertThat(ErrorAnswers.cut("short", 100)).isEqualTo("short");
    String euros = "€".repeat(50); // 3 bytes each: 150 bytes
    String cut = ErrorAnswers.cut(euros, 64);
    assertThat(cut.getBytes(UTF_8).length).isLessThanOrEqualTo(64);
    String kept = cut.substring(0, cut.indexOf("..."));
    assertThat(kept).matches("€+");
    assertThat(cut).endsWith("... [truncated " + (150 - kept.getBytes(UTF_8).length) + " bytes]");
    Status big = Status.UNKNOWN.withDescription("y".repeat(200_000));
    assertThat(ErrorAnswers.capped(big).description().getBytes(UTF_8).length)
        .isLessThanOrEqualTo(ErrorAnswers.MAX_DESCRIPTION_BYTES);
    assertThat(ErrorAnswers.capped(Status.UNKNOWN.withDescription("fine"))).isEqualTo(Status.UNKNOWN.withDescription("fine"));
  }
}
