package io.petrel.rpc.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import io.petrel.rpc.benchmarks.proto.BenchmarkMessage;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
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
    assertThat(Payload.BYTES_64.body()).hasSize(64);
    assertThat(Payload.BYTES_1K.body()).hasSize(1024);
    assertThat(Payload.BYTES_16K.body()).hasSize(16 * 1024);
    assertThat(Payload.BYTES_64K.body()).hasSize(64 * 1024);
    assertThat(Payload.BYTES_256K.body()).hasSize(256 * 1024);
    assertThat(Payload.BYTES_1M.body()).hasSize(1024 * 1024);
    assertThat(Payload.MESSAGE.body()).hasSize(581);
    for (Payload p : Payload.values()) {
      if (p != Payload.MESSAGE) {
        assertThat(p.body()).as(p.name()).hasSize(p.size());
      }
    }
  }

  @Test
  void theOpaqueSizesGrowFrom4BytesTo1MiBInTheOrderTheReportListsThem() {
    List<Integer> sizes = Arrays.stream(Payload.values()).filter(p -> p.size() > 0).map(Payload::size).toList();
    assertThat(sizes).containsExactly(4, 64, 1024, 16 * 1024, 64 * 1024, 256 * 1024, 1024 * 1024).isSorted();
    assertThat(Payload.BYTES_1M.label()).isEqualTo("1 MiB opaque");
    assertThat(Payload.BYTES_64.label()).isEqualTo("64 B opaque");
  }

  @Test
  void aCallMovesItsBodyBothWays() {
    assertThat(Payload.EMPTY.bytesPerCall()).isZero();
    assertThat(Payload.BYTES_4.bytesPerCall()).isEqualTo(8);
    assertThat(Payload.BYTES_1M.bytesPerCall()).isEqualTo(2L * 1024 * 1024);
    assertThat(Payload.MESSAGE.bytesPerCall()).isEqualTo(581 + 527);
  }

  @Test
  void anOpaqueBodyIsNotAllOneByte() {
    byte[] b = Payload.BYTES_1M.body();
    assertThat(b[0]).isNotEqualTo(b[1]);
    assertThat(b[b.length - 1]).isEqualTo((byte) ('a' + (b.length - 1) % 26));
  }
}
