package io.petrel.examples.greeter;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class GreeterExampleTest {
  @Test
  void theExampleCallsEveryMethodThroughTheGeneratedStubs() throws Exception {
    List<String> lines = new ArrayList<>();
    GreeterExample.run(lines::add);

    assertThat(lines.get(0)).matches("server listening on 127\\.0\\.0\\.1:\\d+");
    assertThat(lines.subList(1, lines.size())).containsExactly(
        "sayHello: Hello, Petrel!",
        "add(2, 40): 42",
        "countWords: {to=2, be=2, or=1, not=1}",
        "log (oneway) delivered: a oneway line",
        "greetVip(Petrel) threw NotOnTheListException: Petrel is not on the list (status UNKNOWN)",
        "greetVip(Ada): Welcome back, Ada.",
        "sayHelloLater (async): Hello later, async!",
        "add(20, 22) (async): 42");
  }
}
