package io.petrel.examples.greeter;

import static org.assertj.core.api.Assertions.assertThat;

import io.petrel.rpc.testing.PetrelServerExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class GreeterServiceTest {
  @RegisterExtension
  final PetrelServerExtension petrel = PetrelServerExtension.of(GreeterRpc.bind(new GreeterService(Runnable::run)));

  @Test
  void greets() {
    Greeter greeter = petrel.stub(GreeterRpc::stub);
    assertThat(greeter.sayHello(HelloRequest.newBuilder().setName("Ada").build()).getMessage())
        .isEqualTo("Hello, Ada!");
  }
}
