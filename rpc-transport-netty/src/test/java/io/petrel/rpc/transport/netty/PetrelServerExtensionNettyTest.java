package io.petrel.rpc.transport.netty;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.StringValue;
import io.petrel.rpc.testing.PetrelServerExtension;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The test extension asked for Netty: a real server on 127.0.0.1 and a free port, and a client over TCP. */
class PetrelServerExtensionNettyTest {
  private final TestService service = new TestService();

  @RegisterExtension
  final PetrelServerExtension petrel = PetrelServerExtension.builder()
      .addService(service.definition())
      .netty()
      .server(b -> b.option(NettyOptions.WORKER_THREADS, 1))
      .build();

  @Test
  void servesOverTcpOnLoopback() {
    assertThat(petrel.transport()).isEqualTo(PetrelServerExtension.Transport.NETTY);
    assertThat(petrel.address()).isInstanceOfSatisfying(InetSocketAddress.class, a -> {
      assertThat(a.getAddress().isLoopbackAddress()).isTrue();
      assertThat(a.getPort()).isPositive();
    });
    assertThat(petrel.client().unaryCall(TestService.ECHO, StringValue.of("over tcp")).getValue())
        .isEqualTo("over tcp");
    assertThat(petrel.client().isSecure()).isFalse();
    assertThat(petrel.newClient(b -> b.name("another")).unaryCall(TestService.ADD, new Object[] {2, 3})).isEqualTo(5);
  }
}
