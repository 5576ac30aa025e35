package io.petrel.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.petrel.rpc.CallOptions;
import io.petrel.rpc.ExceptionMapper;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.MethodType;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.rpc.marshal.FieldCodecs;
import io.petrel.rpc.marshal.ValueMarshaller;
import io.petrel.rpc.stub.DeclaredExceptions;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;

/** {@link ExceptionMapper} beans choose the status of what handlers throw: one as it is, several in @Order. */
class PetrelExceptionMapperTest {
  private static final String NAME = "test.Failing";
  static final MethodDescriptor<String, String> FAIL = MethodDescriptor.<String, String>newBuilder()
      .serviceName(NAME).methodName("fail").id(MethodDescriptor.methodId(NAME, "fail")).type(MethodType.UNARY)
      .requestMarshaller(ValueMarshaller.of(FieldCodecs.STRING))
      .responseMarshaller(ValueMarshaller.of(FieldCodecs.STRING)).build();

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(PetrelAutoConfiguration.class))
      .withPropertyValues("petrel.server.port=0", "petrel.server.address=127.0.0.1")
      .withUserConfiguration(Failing.class);

  @Configuration(proxyBeanMethods = false)
  static class Failing {
    @Bean
    ServiceDefinition failing() {
      return ServiceDefinition.builder(NAME).unary(FAIL, request -> {
        switch (request) {
          case "arg" -> throw new IllegalArgumentException("bad argument");
          case "state" -> throw new IllegalStateException("bad state");
          case "status" -> throw new StatusException(Status.ABORTED.withDescription("chosen by the handler"));
          default -> throw new UnsupportedOperationException("not this one");
        }
      }).build();
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class OneMapper {
    @Bean
    ExceptionMapper notFound() {
      return (method, e) -> e instanceof IllegalArgumentException ? Status.NOT_FOUND.withDescription(e.getMessage())
          : null;
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class TwoMappers {
    @Bean
    @Order(2)
    ExceptionMapper everythingElse() {
      return (method, e) -> e instanceof RuntimeException ? Status.INTERNAL.withDescription("second: "
          + e.getMessage()) : null;
    }

    @Bean
    @Order(1)
    ExceptionMapper argumentsFirst() {
      return (method, e) -> e instanceof IllegalArgumentException
          ? Status.INVALID_ARGUMENT.withDescription("first: " + e.getMessage()) : null;
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class CustomizerMapper {
    @Bean
    PetrelServerCustomizer mapsItself() {
      return b -> b.exceptionMapper((method, e) -> Status.PERMISSION_DENIED.withDescription("customizer"));
    }
  }

  private static StatusException call(AssertableApplicationContext context, String request) {
    return call(context, request, new AtomicReference<>());
  }

  private static StatusException call(AssertableApplicationContext context, String request,
      AtomicReference<Metadata> metadata) {
    assertThat(context).hasNotFailed();
    int port = context.getBean(PetrelServerLifecycle.class).port();
    try (RpcClient client = RpcClient.builder().address("127.0.0.1", port).build()) {
      return catchThrowableOfType(StatusException.class, () -> client.unaryCall(FAIL, request,
          CallOptions.DEFAULT.withResponseMetadataListener(metadata::set)));
    }
  }

  /**
   * petrel.server.exception-details unset (declared): FAIL declares nothing, so the caller learns neither the
   * exception's class nor its message, in the description or the response metadata.
   */
  @Test
  void withoutAMapperAHandlersExceptionIsUnknownWithoutItsClassOrMessage() {
    runner.run(context -> {
      AtomicReference<Metadata> metadata = new AtomicReference<>();
      StatusException e = call(context, "arg", metadata);
      assertThat(e.status()).isEqualTo(Status.UNKNOWN.withDescription("test.Failing/fail failed on the server: its"
          + " handler threw an exception the method does not declare (the server logs it; declare it on the"
          + " method, map it with RpcServer.builder().exceptionMapper, or let the server send it with"
          + " exceptionDetails(ALL))"));
      assertThat(metadata.get()).isNotNull();
      assertThat(metadata.get().get(DeclaredExceptions.CLASS_KEY)).isNull();
      assertThat(metadata.get().get(DeclaredExceptions.MESSAGE_KEY)).isNull();
    });
    runner.withPropertyValues("petrel.server.exception-details=declared").run(context ->
        assertThat(call(context, "arg").status().description()).doesNotContain("bad argument"));
  }

  /** petrel.server.exception-details=all (in any case) sends every exception's class and message. */
  @Test
  void exceptionDetailsAllSendsTheClassAndMessage() {
    for (String value : new String[] {"all", "ALL"}) {
      runner.withPropertyValues("petrel.server.exception-details=" + value).run(context -> {
        AtomicReference<Metadata> metadata = new AtomicReference<>();
        StatusException e = call(context, "arg", metadata);
        assertThat(e.status()).as(value)
            .isEqualTo(Status.UNKNOWN.withDescription("java.lang.IllegalArgumentException: bad argument"));
        assertThat(metadata.get().getAll(DeclaredExceptions.CLASS_KEY))
            .containsExactly("java.lang.IllegalArgumentException");
        assertThat(metadata.get().get(DeclaredExceptions.MESSAGE_KEY)).isEqualTo("bad argument");
      });
    }
  }

  @Test
  void anUnknownExceptionDetailsValueFailsTheStart() {
    runner.withPropertyValues("petrel.server.exception-details=some").run(context -> {
      assertThat(context).hasFailed();
      assertThat(context.getStartupFailure()).hasStackTraceContaining("petrel.server.exception-details")
          .rootCause().hasMessageContaining("No enum constant io.petrel.rpc.ExceptionDetails.some");
    });
  }

  @Test
  void anExceptionMapperBeanChoosesTheStatus() {
    runner.withUserConfiguration(OneMapper.class).run(context -> {
      AtomicReference<Metadata> metadata = new AtomicReference<>();
      StatusException mapped = call(context, "arg", metadata);
      assertThat(mapped.code()).isEqualTo(Status.Code.NOT_FOUND);
      assertThat(mapped.status().description()).isEqualTo("bad argument");
      // The mapper's status and description go as they are; the undeclared exception's class and message do not.
      assertThat(metadata.get().get(DeclaredExceptions.CLASS_KEY)).isNull();
      assertThat(metadata.get().get(DeclaredExceptions.MESSAGE_KEY)).isNull();
      assertThat(call(context, "state").code()).as("the mapper returned null").isEqualTo(Status.Code.UNKNOWN);
      assertThat(call(context, "status").code()).as("a StatusException keeps its own")
          .isEqualTo(Status.Code.ABORTED);
    });
  }

  @Test
  void severalExceptionMapperBeansAreAskedInTheirOrderAndTheFirstStatusWins() {
    runner.withUserConfiguration(TwoMappers.class).run(context -> {
      StatusException first = call(context, "arg");
      assertThat(first.code()).isEqualTo(Status.Code.INVALID_ARGUMENT);
      assertThat(first.status().description()).isEqualTo("first: bad argument");
      StatusException second = call(context, "state");
      assertThat(second.code()).isEqualTo(Status.Code.INTERNAL);
      assertThat(second.status().description()).isEqualTo("second: bad state");
    });
  }

  @Test
  void aCustomizersExceptionMapperReplacesTheBeans() {
    runner.withUserConfiguration(OneMapper.class, CustomizerMapper.class)
        .run(context -> assertThat(call(context, "arg").code()).isEqualTo(Status.Code.PERMISSION_DENIED));
  }
}
