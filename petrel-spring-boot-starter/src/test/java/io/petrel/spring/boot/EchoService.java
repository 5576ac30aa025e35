package io.petrel.spring.boot;

import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.MethodType;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.marshal.FieldCodecs;
import io.petrel.rpc.marshal.ValueMarshaller;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A service written by hand as a {@link ServiceDefinition} bean (the other way to serve with the starter):
 * {@code test.Echo/echo} answers its request, {@code test.Echo/hold} waits until {@link #release} opens.
 */
final class EchoService {
  static final String NAME = "test.Echo";
  static final MethodDescriptor<String, String> ECHO = method("echo");
  static final MethodDescriptor<String, String> HOLD = method("hold");

  final CountDownLatch entered = new CountDownLatch(1);
  final CountDownLatch release = new CountDownLatch(1);

  private static MethodDescriptor<String, String> method(String name) {
    return MethodDescriptor.<String, String>newBuilder().serviceName(NAME).methodName(name)
        .id(MethodDescriptor.methodId(NAME, name)).type(MethodType.UNARY)
        .requestMarshaller(ValueMarshaller.of(FieldCodecs.STRING))
        .responseMarshaller(ValueMarshaller.of(FieldCodecs.STRING)).build();
  }

  ServiceDefinition definition() {
    return ServiceDefinition.builder(NAME)
        .unary(ECHO, request -> request)
        .unary(HOLD, request -> {
          entered.countDown();
          if (!release.await(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("never released");
          }
          return "released " + request;
        })
        .build();
  }
}
