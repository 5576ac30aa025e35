package io.petrel.rpc.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import io.petrel.rpc.transport.netty.IoMode;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link IdleConnections} on a few hundred connections: every call answered, a table with both frameworks. */
class IdleConnectionsTest {
  @Test
  @Timeout(value = 2, unit = TimeUnit.MINUTES)
  void measuresPetrelBesideGrpcJava() throws Exception {
    List<IdleConnections.Row> rows = IdleConnections.measure(400, IoMode.AUTO,
        List.of(Framework.PETREL, Framework.GRPC));
    assertThat(rows).hasSize(4);
    for (IdleConnections.Row r : rows) {
      assertThat(r.failed()).as("failed calls of %s", r.framework()).isZero();
      assertThat(r.connections()).isEqualTo(400);
    }
    String table = IdleConnections.table(rows);
    System.out.print(table);
    assertThat(table).contains("| Petrel (business pool) | 400 | average |", "| gRPC-java (default executor) | 400 |"
        + " marginal |", "Petrel / gRPC-java, heap + direct per connection (marginal): server ");
  }
}
