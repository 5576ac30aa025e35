package io.petrel.rpc.stub;

import static org.assertj.core.api.Assertions.assertThat;

import io.petrel.rpc.CallOptions;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.RpcClient;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** What a generated stub's with... methods add to its calls' options, and what they keep. */
class AbstractStubTest {
  private static final class Stub extends AbstractStub<Stub> {
    Stub(RpcClient client, CallOptions options) {
      super(client, options);
    }

    @Override
    protected Stub build(RpcClient client, CallOptions options) {
      return new Stub(client, options);
    }
  }

  @Test
  void withHashKeyAddsTheKeyAndKeepsTheOtherOptions() {
    RpcClient client = RpcClient.builder().inProcess("abstract-stub-test").build();
    try {
      Stub stub = new Stub(client, CallOptions.DEFAULT).withDeadline(Duration.ofSeconds(3))
          .withMetadata(Metadata.of("tenant", "acme"));
      Stub keyed = stub.withHashKey("user-7");
      assertThat(keyed.callOptions().hashKey()).isEqualTo("user-7");
      assertThat(keyed.callOptions().metadata().get("tenant")).isEqualTo("acme");
      assertThat(keyed.callOptions().timeoutNanos()).isEqualTo(Duration.ofSeconds(3).toNanos());
      assertThat(stub.callOptions().hashKey()).as("the original stub is unchanged").isNull();
      assertThat(keyed.client()).isSameAs(client);
    } finally {
      client.shutdownNow();
    }
  }
}
