package io.petrel.rpc.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import io.petrel.rpc.benchmarks.proto.BenchmarkMessage;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class MessagesTest {

  @Test
  void requestIsFilledAsTheRpcxBenchmarkFillsItAndEncodesTo581Bytes() {
    BenchmarkMessage m = Messages.request();
    assertThat(Messages.SENTENCE.getBytes(StandardCharsets.UTF_8)).hasSize(54);
    assertThat(m.getField1()).isEqualTo(Messages.SENTENCE);
    assertThat(m.getField129()).isEqualTo(Messages.SENTENCE);
    assertThat(m.getField22()).isEqualTo(100000L);
    assertThat(m.getField272()).isEqualTo(100000);
    assertThat(m.getField78()).isTrue();
    assertThat(m.getField5Count()).isZero();
    assertThat(m.getSerializedSize()).isEqualTo(581);
  }

  @Test
  void replySetsFieldsOneAndTwoAndEncodesTo527Bytes() {
    BenchmarkMessage reply = Messages.reply(Messages.request());
    assertThat(Messages.isOk(reply)).isTrue();
    assertThat(reply.getField2()).isEqualTo(100);
    assertThat(reply.getSerializedSize()).isEqualTo(527);
    assertThat(Messages.isOk(Messages.request())).isFalse();
  }

  @Test
  void opaquePayloadsHaveTheirNominalSizes() {
    assertThat(Payload.EMPTY.body()).isEmpty();
    assertThat(Payload.BYTES_4.body()).hasSize(4);
    assertThat(Payload.BYTES_1K.body()).hasSize(1024);
    assertThat(Payload.MESSAGE.body()).hasSize(581);
  }
}
