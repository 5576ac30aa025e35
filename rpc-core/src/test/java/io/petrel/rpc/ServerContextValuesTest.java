package io.petrel.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.petrel.rpc.marshal.Marshallers;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/**
 * A value a server interceptor puts in the call's context (gRPC's Context.Key) reaches the handler, on its
 * thread and on another thread the context was carried to; keys are told apart by identity, and calls do not
 * share values.
 */
class ServerContextValuesTest {
  private static final ServerContext.Key<String> TENANT = ServerContext.Key.named("tenant");
  private static final ServerContext.Key<String> OTHER = ServerContext.Key.named("tenant"); // same name, other key
  private static final MethodDescriptor<byte[], byte[]> WHO = MethodDescriptor.<byte[], byte[]>newBuilder()
      .serviceName("shop.Orders").methodName("who").requestMarshaller(Marshallers.bytes())
      .responseMarshaller(Marshallers.bytes()).build();
  private static final MethodDescriptor<byte[], byte[]> WHO_ASYNC = MethodDescriptor.<byte[], byte[]>newBuilder()
      .serviceName("shop.Orders").methodName("whoAsync").requestMarshaller(Marshallers.bytes())
      .responseMarshaller(Marshallers.bytes()).build();

  /** Puts the tenant the caller named in its metadata, as an authenticating interceptor would. */
  private static final ServerInterceptor TENANTS = new ServerInterceptor() {
    @Override
    public <Req, Resp> CompletionStage<Resp> intercept(Chain<Req, Resp> chain) throws Exception {
      String named = chain.context().metadata().get("x-tenant");
      if (named != null) {
        chain.context().put(TENANT, "tenant:" + named);
      }
      return chain.proceed();
    }
  };

  private static byte[] answer(ServerContext ctx) {
    return (ctx.get(TENANT) + " other=" + ctx.get(OTHER)).getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void anInterceptorsValueReachesTheHandler() throws Exception {
    RpcServer server = RpcServer.builder().inProcess("context-values").intercept(TENANTS)
        .addService(ServiceDefinition.builder("shop.Orders")
            .unary(WHO, b -> answer(ServerContext.current()))
            .async(WHO_ASYNC, b -> {
              ServerContext ctx = ServerContext.current();
              return CompletableFuture.supplyAsync(() -> answer(ServerContext.current()),
                  ctx.wrap(java.util.concurrent.ForkJoinPool.commonPool()));
            })
            .build())
        .build().start();
    try (RpcClient client = RpcClient.builder().inProcess("context-values").build()) {
      CallOptions acme = CallOptions.DEFAULT.withMetadata(Metadata.of("x-tenant", "acme"));
      assertThat(new String(client.unaryCall(WHO, new byte[0], acme), StandardCharsets.UTF_8))
          .isEqualTo("tenant:acme other=null");
      assertThat(new String(client.unaryCall(WHO_ASYNC, new byte[0], acme), StandardCharsets.UTF_8))
          .isEqualTo("tenant:acme other=null");
      // The next call has its own context: nothing of the last one's.
      assertThat(new String(client.unaryCall(WHO, new byte[0], CallOptions.DEFAULT), StandardCharsets.UTF_8))
          .isEqualTo("null other=null");
    } finally {
      server.shutdownNow();
    }
  }
}
