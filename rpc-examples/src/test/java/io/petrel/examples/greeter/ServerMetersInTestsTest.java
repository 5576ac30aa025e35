package io.petrel.examples.greeter;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.petrel.rpc.testing.PetrelServerExtension;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * docs/testing.md, "Meters in a test": the client's meters are there once a call returns; the server's, which it
 * records once the answer is handed over (possibly after the caller has it), once the server has terminated.
 */
class ServerMetersInTestsTest {
  final MeterRegistry meters = new SimpleMeterRegistry();

  @RegisterExtension
  final PetrelServerExtension petrel = PetrelServerExtension.builder()
      .addService(GreeterRpc.bind(new GreeterService(Runnable::run)))
      .server(b -> b.meterRegistry(meters))
      .client(b -> b.meterRegistry(meters))
      .build();

  @RepeatedTest(50)
  void theServersMetersAreThereOnceItHasTerminated() throws Exception {
    petrel.stub(GreeterRpc::stub).sayHello(HelloRequest.newBuilder().setName("Ada").build());
    assertThat(meters.get("rpc.client.calls").tag("method", "sayHello").tag("status", "OK").timer().count())
        .isEqualTo(1);
    petrel.server().shutdown();
    assertThat(petrel.server().awaitTermination(5, TimeUnit.SECONDS)).isTrue();
    assertThat(meters.get("rpc.server.calls").tag("method", "sayHello").tag("status", "OK").timer().count())
        .isEqualTo(1);
  }
}
