package io.petrel.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class StatusTest {
  @Test
  void codesKeepTheirWireValues() {
    assertThat(Status.Code.OK.value()).isZero();
    assertThat(Status.Code.DEADLINE_EXCEEDED.value()).isEqualTo(4);
    assertThat(Status.Code.RESOURCE_EXHAUSTED.value()).isEqualTo(8);
    assertThat(Status.Code.UNIMPLEMENTED.value()).isEqualTo(12);
    assertThat(Status.Code.UNAVAILABLE.value()).isEqualTo(14);
    assertThat(Status.Code.fromValue(200)).isEqualTo(Status.Code.UNKNOWN);
    for (Status.Code c : Status.Code.values()) {
      assertThat(Status.Code.fromValue(c.value())).isEqualTo(c);
    }
  }

  /** gRPC's seventeen codes, each under its name and number: a service ported from gRPC keeps its statuses. */
  @Test
  void everyGrpcCodeIsThereWithItsNameAndNumber() {
    String[] grpc = {"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
        "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
        "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"};
    for (int value = 0; value < grpc.length; value++) {
      assertThat(Status.Code.fromValue(value).name()).as("code %d", value).isEqualTo(grpc[value]);
    }
    assertThat(Status.Code.values()).hasSize(grpc.length);
    assertThat(Status.PERMISSION_DENIED.withDescription("tenant acme may not reserve").asException())
        .hasMessage("PERMISSION_DENIED: tenant acme may not reserve");
  }

  @Test
  void throwableBecomesUnknownWithClassAndMessage() {
    Status s = Status.fromThrowable(new IllegalArgumentException("bad id"));
    assertThat(s.code()).isEqualTo(Status.Code.UNKNOWN);
    assertThat(s.description()).isEqualTo("java.lang.IllegalArgumentException: bad id");
    StatusException se = Status.NOT_FOUND.withDescription("x").asException();
    assertThat(Status.fromThrowable(new RuntimeException(se))).isEqualTo(se.status());
    assertThat(se).hasMessage("NOT_FOUND: x");
  }

  @Test
  void methodIdsAreStableFnv1a() {
    // FNV-1a 32 of "a/b": a fixed value, so that generated code and servers agree across releases.
    assertThat(MethodDescriptor.methodId("a", "b")).isEqualTo(0x3a8e75c1);
    assertThat(MethodDescriptor.methodId("demo.Greeter", "sayHello"))
        .isNotEqualTo(MethodDescriptor.methodId("demo.Greeter", "sayBye"));
  }

  @Test
  void buildersNameTheBadOption() {
    assertThatThrownBy(() -> RpcServer.builder().maxFrameSize(-1)).hasMessage("maxFrameSize must be >= 64: -1");
    assertThatThrownBy(() -> RpcServer.builder().businessThreads(0)).hasMessage("businessThreads must be > 0: 0");
    assertThatThrownBy(() -> RpcClient.builder().defaultDeadline(Duration.ZERO))
        .hasMessageContaining("defaultDeadline must be > 0");
    assertThatThrownBy(() -> RpcClient.builder().build()).hasMessageContaining("address(host, port)");
    assertThatThrownBy(() -> Metadata.of("Bad Key", "v")).hasMessageContaining("lower-case");
  }

  @Test
  void callOptionsTakeTheEarliestDeadline() {
    CallOptions o = CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(1))
        .withDeadline(Deadline.after(Duration.ofSeconds(100)));
    assertThat(o.effectiveDeadline(0).remaining(java.util.concurrent.TimeUnit.MILLISECONDS)).isBetween(1L, 1000L);
    assertThat(CallOptions.DEFAULT.effectiveDeadline(0)).isNull();
    assertThat(CallOptions.DEFAULT.effectiveDeadline(5_000_000_000L).remainingNanos()).isPositive();
  }
}
