package io.petrel.spring.boot.hello;

import io.petrel.rpc.CallOptions;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.MethodType;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.marshal.FieldCodecs;
import io.petrel.rpc.marshal.ValueMarshaller;
import io.petrel.rpc.stub.AbstractStub;
import java.util.Objects;

/**
 * Written by hand as rpc-codegen-maven-plugin would generate it for {@link Hello} (the starter's tests do not run
 * the plugin): what the starter looks up, {@code bind(Hello)} and {@code stub(RpcClient)}.
 */
public final class HelloRpc {
  public static final String SERVICE_NAME = "test.Hello";

  public static final MethodDescriptor<String, String> METHOD_HELLO = MethodDescriptor.<String, String>newBuilder()
      .serviceName(SERVICE_NAME).methodName("hello").id(MethodDescriptor.methodId(SERVICE_NAME, "hello"))
      .type(MethodType.UNARY).requestMarshaller(ValueMarshaller.of(FieldCodecs.STRING))
      .responseMarshaller(ValueMarshaller.of(FieldCodecs.STRING)).build();

  private HelloRpc() {
  }

  public static HelloStub stub(RpcClient client) {
    return new HelloStub(client, CallOptions.DEFAULT);
  }

  public static ServiceDefinition bind(Hello impl) {
    Objects.requireNonNull(impl, "impl");
    return ServiceDefinition.builder(SERVICE_NAME).unary(METHOD_HELLO, impl::hello).build();
  }

  public static final class HelloStub extends AbstractStub<HelloStub> implements Hello {
    private HelloStub(RpcClient client, CallOptions options) {
      super(client, options);
    }

    @Override
    protected HelloStub build(RpcClient client, CallOptions options) {
      return new HelloStub(client, options);
    }

    @Override
    public String hello(String name) {
      return this.client.unaryCall(METHOD_HELLO, name, this.options);
    }
  }
}
