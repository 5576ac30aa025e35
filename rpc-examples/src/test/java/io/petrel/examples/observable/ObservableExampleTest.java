package io.petrel.examples.observable;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ObservableExampleTest {
  @Test
  void ordersFlowThroughTwoServicesAndShowUpInTheMetrics() throws Exception {
    String out = ObservableExample.run(8, 0);
    assertThat(out).contains("order-0: 1 x tea = 3.50  (x-request-id echoed: order-0)");
    assertThat(out).contains("order-3: failed NOT_FOUND: no item 'caviar' in the catalog");
    assertThat(out).contains("without a token: UNAUTHENTICATED: no 'authorization' metadata");
    // 8 orders reached the storefront (and 1 refused call); each made one catalog call.
    assertThat(out).containsPattern("rpc_server_calls_seconds_count\\{[^}]*method=\"order\"[^}]*server=\"storefront\""
        + "[^}]*status=\"OK\"[^}]*} 6");
    assertThat(out).containsPattern("rpc_server_calls_seconds_count\\{[^}]*method=\"priceOf\"[^}]*server=\"catalog\""
        + "[^}]*status=\"NOT_FOUND\"[^}]*} 2");
    assertThat(out).containsPattern("rpc_server_calls_seconds_count\\{[^}]*method=\"order\"[^}]*"
        + "status=\"UNAUTHENTICATED\"[^}]*} 1");
  }
}
