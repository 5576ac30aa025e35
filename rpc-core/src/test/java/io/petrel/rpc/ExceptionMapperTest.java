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
 * What a caller gets when a handler throws: the mapper's status when it gives one, UNKNOWN otherwise, and for an
 * exception the method declares the metadata that lets a stub rethrow it; for any other exception, neither its
 * class nor its message unless the server sends all ({@link ExceptionDetails#ALL}). Real calls through the
 * in-process transport ({@code AbstractTransportTest} does the same over every transport).
 */
class ExceptionMapperTest {
  private static final AtomicInteger SERVERS = new AtomicInteger();
  /** Declares FileNotFoundException, as generated code does for {@code open(...) throws FileNotFoundException}. */
  private static final MethodDescriptor<byte[], byte[]> OPEN = MethodDescriptor.<byte[], byte[]>newBuilder()
      .serviceName("test.Files").methodName("open").type(MethodType.UNARY)
      .declaredExceptions("java.io.FileNotFoundException")
      .requestMarshaller(Marshallers.bytes()).responseMarshaller(Marshallers.bytes()).build();
  /** The same handler, for a method that declares nothing. */
  private static final MethodDescriptor<byte[], byte[]> READ = MethodDescriptor.<byte[], byte[]>newBuilder()
      .serviceName("test.Files").methodName("read").type(MethodType.UNARY)
      .requestMarshaller(Marshallers.bytes()).responseMarshaller(Marshallers.bytes()).build();
  /** Declares IOException, a superclass of what the handler throws. */
  private static final MethodDescriptor<byte[], byte[]> LIST = MethodDescriptor.<byte[], byte[]>newBuilder()
      .serviceName("test.Files").methodName("list").type(MethodType.UNARY)
      .declaredExceptions("java.lang.IllegalStateException", "java.io.IOException")
      .requestMarshaller(Marshallers.bytes()).responseMarshaller(Marshallers.bytes()).build();
  /** Its handler returns what its response marshaller cannot encode: the marshaller throws, naming internals. */
  private static final MethodDescriptor<byte[], byte[]> STAT = MethodDescriptor.<byte[], byte[]>newBuilder()
      .serviceName("test.Files").methodName("stat").type(MethodType.UNARY)
      .requestMarshaller(Marshallers.bytes()).responseMarshaller(new Marshaller<>() {
        @Override
        public int serializedSize(byte[] value) {
          return value.length;
        }

        @Override
        public void write(byte[] value, io.netty.buffer.ByteBuf out) {
          throw new IllegalStateException("no inode for /etc/shadow");
        }

        @Override
        public byte[] read(io.netty.buffer.ByteBuf in) throws Exception {
          return Marshallers.bytes().read(in);
        }
      }).build();
  private static final String READ_UNDECLARED = "test.Files/read failed on the server: its handler threw an"
      + " exception the method does not declare (the server logs it; declare it on the method, map it with"
      + " RpcServer.builder().exceptionMapper, or let the server send it with exceptionDetails(ALL))";

  private RpcServer server;
  private RpcClient client;

  private void start(ExceptionMapper mapper) throws Exception {
    start(mapper, null);
  }

  private void start(ExceptionMapper mapper, ExceptionDetails details) throws Exception {
    UnaryHandler<byte[], byte[]> handler = request -> {
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
        case "npe" -> throw new NullPointerException(
            "Cannot invoke \"String.length()\" because \"secret\" is null");
        default -> throw new FileNotFoundException(what);
      }
    };
    ServiceDefinition files = ServiceDefinition.builder("test.Files")
        .unary(OPEN, handler).unary(READ, handler).unary(LIST, handler).unary(STAT, request -> request).build();
    String name = "exception-mapper-test-" + SERVERS.incrementAndGet();
    RpcServerBuilder b = RpcServer.builder().inProcess(name).addService(files);
    if (mapper != null) {
      b.exceptionMapper(mapper);
    }
    if (details != null) {
      b.exceptionDetails(details);
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
    return call(OPEN, what, metadata);
  }

  private StatusException call(MethodDescriptor<byte[], byte[]> method, String what,
      AtomicReference<Metadata> metadata) {
    metadata.set(null);
    CallOptions options = CallOptions.DEFAULT.withResponseMetadataListener(metadata::set);
    try {
      client.unaryCall(method, what.getBytes(UTF_8), options);
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

  /**
   * By default an exception the method does not declare, checked or not, reaches the caller as UNKNOWN with a
   * description that names neither its class nor its message, and no exception metadata (the raw response
   * metadata, as a responseMetadataListener sees it).
   */
  @Test
  void anUndeclaredExceptionSendsNeitherItsClassNorItsMessageByDefault() throws Exception {
    start(null);
    AtomicReference<Metadata> md = new AtomicReference<>();
    for (String what : new String[] {"npe", "/etc/shadow", "error"}) {
      StatusException e = call(READ, what, md);
      assertThat(e.status()).as(what).isEqualTo(Status.UNKNOWN.withDescription(READ_UNDECLARED));
      assertThat(md.get()).as(what).isNotNull();
      assertThat(md.get().get(DeclaredExceptions.CLASS_KEY)).as(what).isNull();
      assertThat(md.get().get(DeclaredExceptions.MESSAGE_KEY)).as(what).isNull();
      assertThat(e.status().description()).doesNotContain("secret", "shadow", "Exception:", "Error:");
    }
    // OPEN declares FileNotFoundException, not NullPointerException.
    StatusException npe = call(OPEN, "npe", md);
    assertThat(npe.status().description()).startsWith("test.Files/open failed on the server: its handler threw an"
        + " exception the method does not declare");
    assertThat(md.get().get(DeclaredExceptions.CLASS_KEY)).isNull();
    assertThat(md.get().get(DeclaredExceptions.MESSAGE_KEY)).isNull();
  }

  /**
   * The server's log keeps what the caller does not get: an undeclared exception, checked or not, is a WARN with
   * its stack trace saying the caller got it without its class or message; a declared checked one is no WARN.
   */
  @Test
  void theServerLogsAnUndeclaredExceptionWithItsStackTrace() throws Exception {
    ch.qos.logback.classic.Logger logger =
        (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(RpcServer.class);
    ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> seen =
        new ch.qos.logback.core.read.ListAppender<>();
    seen.start();
    logger.addAppender(seen);
    try {
      start(null);
      AtomicReference<Metadata> md = new AtomicReference<>();
      call(READ, "/etc/shadow", md); // checked, undeclared
      call(OPEN, "/etc/declared", md); // checked, declared: an answer
      call(OPEN, "npe", md); // unchecked, undeclared
      assertThat(seen.list).filteredOn(e -> e.getLevel() == ch.qos.logback.classic.Level.WARN)
          .extracting(e -> e.getFormattedMessage() + " / " + e.getThrowableProxy().getClassName())
          .containsExactly(
              "test.Files/read threw; the caller gets UNKNOWN without the exception's class or message (the method"
                  + " does not declare it) (if this is an answer rather than a fault: throw a StatusException with"
                  + " the status to send, declare a checked exception in the service interface to send it as"
                  + " itself, or map it with RpcServer.builder().exceptionMapper) / java.io.FileNotFoundException",
              "test.Files/open threw; the caller gets UNKNOWN without the exception's class or message (the method"
                  + " does not declare it) (if this is an answer rather than a fault: throw a StatusException with"
                  + " the status to send, declare a checked exception in the service interface to send it as"
                  + " itself, or map it with RpcServer.builder().exceptionMapper) / java.lang.NullPointerException");
    } finally {
      logger.detachAppender(seen);
    }
  }

  /**
   * A response the server cannot encode is INTERNAL; by default the caller learns neither the marshaller's
   * exception's class nor its message (they are the server's internals), and the server logs it as a WARN with its
   * stack trace. With exceptionDetails(ALL) the description names it. No exception metadata either way.
   */
  @Test
  void aResponseTheServerCannotEncodeIsInternalAndNamesTheMarshallersExceptionOnlyWithAll() throws Exception {
    ch.qos.logback.classic.Logger logger =
        (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(RpcServer.class);
    ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> seen =
        new ch.qos.logback.core.read.ListAppender<>();
    seen.start();
    logger.addAppender(seen);
    try {
      start(null);
      AtomicReference<Metadata> md = new AtomicReference<>();
      StatusException e = call(STAT, "x", md);
      assertThat(e.status()).isEqualTo(Status.INTERNAL.withDescription("server could not encode the response of"
          + " test.Files/stat (the server's log has why)"));
      assertThat(md.get()).isNotNull();
      assertThat(md.get().get(DeclaredExceptions.CLASS_KEY)).isNull();
      assertThat(md.get().get(DeclaredExceptions.MESSAGE_KEY)).isNull();
      assertThat(seen.list).filteredOn(w -> w.getLevel() == ch.qos.logback.classic.Level.WARN)
          .extracting(w -> w.getFormattedMessage() + " / " + w.getThrowableProxy().getClassName() + ": "
              + w.getThrowableProxy().getMessage())
          .containsExactly("server could not encode the response of test.Files/stat; the caller gets INTERNAL"
              + " without the exception's class or message (make the handler return what the method's response"
              + " marshaller can encode) / java.lang.IllegalStateException: no inode for /etc/shadow");
      stop();
      start(null, ExceptionDetails.ALL);
      StatusException all = call(STAT, "x", md);
      assertThat(all.status()).isEqualTo(Status.INTERNAL.withDescription("server could not encode the response of"
          + " test.Files/stat: java.lang.IllegalStateException: no inode for /etc/shadow"));
      assertThat(md.get().get(DeclaredExceptions.CLASS_KEY)).isNull();
    } finally {
      logger.detachAppender(seen);
    }
  }

  /** An instance of a declared class travels as itself: a subclass of a declared exception does too. */
  @Test
  void aSubclassOfADeclaredExceptionTravelsAsItself() throws Exception {
    start(null);
    AtomicReference<Metadata> md = new AtomicReference<>();
    StatusException e = call(LIST, "/etc/missing", md);
    assertThat(e.status()).isEqualTo(Status.UNKNOWN.withDescription("java.io.FileNotFoundException: /etc/missing"));
    assertThat(md.get().getAll(DeclaredExceptions.CLASS_KEY))
        .containsExactly("java.io.FileNotFoundException", "java.io.IOException");
    assertThat(md.get().get(DeclaredExceptions.MESSAGE_KEY)).isEqualTo("/etc/missing");
    // LIST declares IllegalStateException: one wrapping a status is still that status, without class names.
    StatusException wrapped = call(LIST, "wrapped", md);
    assertThat(wrapped.status()).isEqualTo(Status.NOT_FOUND.withDescription("no such row"));
    assertThat(md.get().get(DeclaredExceptions.CLASS_KEY)).isNull();
  }

  /**
   * An undeclared checked exception around the next service's status (a stub rebuilt it, this method does not
   * declare it) answers with that status, and no class names: only a declared one passes as itself.
   */
  @Test
  void anUndeclaredExceptionAroundAStatusAnswersThatStatusWithoutClassNames() throws Exception {
    start(null);
    AtomicReference<Metadata> md = new AtomicReference<>();
    StatusException around = call(READ, "declared-around", md);
    assertThat(around.status()).isEqualTo(Status.DEADLINE_EXCEEDED.withDescription("the next service was too slow"));
    assertThat(md.get().get(DeclaredExceptions.CLASS_KEY)).isNull();
    assertThat(md.get().get(DeclaredExceptions.MESSAGE_KEY)).isNull();
  }

  /** The mapper's status and description for an undeclared exception go unchanged, with no exception metadata. */
  @Test
  void theMappersStatusForAnUndeclaredExceptionCarriesNoClassOrMessage() throws Exception {
    start((method, t) -> Status.FAILED_PRECONDITION.withDescription("mapped " + method.methodName()));
    AtomicReference<Metadata> md = new AtomicReference<>();
    for (String what : new String[] {"npe", "/etc/shadow"}) {
      StatusException e = call(READ, what, md);
      assertThat(e.status()).as(what).isEqualTo(Status.FAILED_PRECONDITION.withDescription("mapped read"));
      assertThat(md.get().get(DeclaredExceptions.CLASS_KEY)).as(what).isNull();
      assertThat(md.get().get(DeclaredExceptions.MESSAGE_KEY)).as(what).isNull();
    }
    // A declared one keeps its metadata under the mapper's status, so the stub still rethrows it.
    assertThat(call(OPEN, "/tmp/x", md).status()).isEqualTo(Status.FAILED_PRECONDITION.withDescription("mapped open"));
    assertThat(md.get().getAll(DeclaredExceptions.CLASS_KEY)).startsWith("java.io.FileNotFoundException");
    assertThat(md.get().get(DeclaredExceptions.MESSAGE_KEY)).isEqualTo("/tmp/x");
  }

  /** exceptionDetails(ALL): every exception's class names and message travel, as before the option. */
  @Test
  void allSendsEveryExceptionsClassAndMessage() throws Exception {
    start(null, ExceptionDetails.ALL);
    AtomicReference<Metadata> md = new AtomicReference<>();
    StatusException npe = call(READ, "npe", md);
    assertThat(npe.status()).isEqualTo(Status.UNKNOWN.withDescription("java.lang.NullPointerException: Cannot"
        + " invoke \"String.length()\" because \"secret\" is null"));
    assertThat(md.get().getAll(DeclaredExceptions.CLASS_KEY)).containsExactly("java.lang.NullPointerException");
    assertThat(md.get().get(DeclaredExceptions.MESSAGE_KEY)).contains("secret");
    StatusException checked = call(READ, "/etc/shadow", md);
    assertThat(checked.status())
        .isEqualTo(Status.UNKNOWN.withDescription("java.io.FileNotFoundException: /etc/shadow"));
    assertThat(md.get().getAll(DeclaredExceptions.CLASS_KEY))
        .containsExactly("java.io.FileNotFoundException", "java.io.IOException");
    // With a mapper: its status, and the metadata.
    stop();
    start((method, t) -> Status.FAILED_PRECONDITION.withDescription("mapped"), ExceptionDetails.ALL);
    assertThat(call(READ, "npe", md).status()).isEqualTo(Status.FAILED_PRECONDITION.withDescription("mapped"));
    assertThat(md.get().getAll(DeclaredExceptions.CLASS_KEY)).containsExactly("java.lang.NullPointerException");
  }

  @Test
  void declaredExceptionsAreImmutableAndTheDefaultIsDeclared() {
    assertThat(READ.declaredExceptions()).isEmpty();
    assertThat(LIST.declaredExceptions()).containsExactly("java.lang.IllegalStateException", "java.io.IOException");
    assertThatThrownBy(() -> LIST.declaredExceptions().add("x")).isInstanceOf(UnsupportedOperationException.class);
    String[] names = {"a.B"};
    MethodDescriptor.Builder<byte[], byte[]> b = MethodDescriptor.<byte[], byte[]>newBuilder()
        .serviceName("s").methodName("m").requestMarshaller(Marshallers.bytes())
        .responseMarshaller(Marshallers.bytes());
    MethodDescriptor<byte[], byte[]> m = b.declaredExceptions(names).build();
    names[0] = "changed";
    assertThat(m.declaredExceptions()).containsExactly("a.B");
    assertThatThrownBy(() -> b.declaredExceptions("a.B", null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> b.declaredExceptions(" ")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("blank");
    assertThat(io.petrel.rpc.spi.ServerConfig.newBuilder().build().exceptionDetails())
        .isEqualTo(ExceptionDetails.DECLARED);
    assertThatThrownBy(() -> RpcServer.builder().exceptionDetails(null))
        .isInstanceOf(NullPointerException.class).hasMessage("exceptionDetails");
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
