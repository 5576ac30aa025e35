package io.petrel.sample.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.petrel.rpc.RpcClient;
import io.petrel.spring.boot.PetrelServerLifecycle;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The sample with Boot's own tracing (Micrometer Tracing over OpenTelemetry, W3C propagation, every call sampled)
 * and an in-memory span exporter per application: a call to app's Greeter, whose handler calls front's Frontdesk,
 * leaves one trace across the two applications, and no observation is timed as a second meter.
 */
class SampleTracingTest {
  @Configuration(proxyBeanMethods = false)
  static class Exporter {
    @Bean
    InMemorySpanExporter spanExporter() {
      return InMemorySpanExporter.create();
    }
  }

  private static ConfigurableApplicationContext boot(String frontdeskTarget) {
    return new SpringApplicationBuilder(SampleApplication.class, Exporter.class).run("--petrel.server.port=0",
        "--spring.main.banner-mode=off", "--petrel.clients.frontdesk.target=" + frontdeskTarget,
        "--management.tracing.sampling.probability=1.0",
        "--management.opentelemetry.tracing.export.schedule-delay=10ms");
  }

  private static SpanData awaitSpan(ConfigurableApplicationContext app, String name, SpanKind kind) {
    InMemorySpanExporter exporter = app.getBean(InMemorySpanExporter.class);
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    while (System.nanoTime() < until) {
      List<SpanData> found = exporter.getFinishedSpanItems().stream()
          .filter(s -> s.getName().equals(name) && s.getKind() == kind).toList();
      if (!found.isEmpty()) {
        assertThat(found).hasSize(1);
        return found.get(0);
      }
      Thread.onSpinWait();
    }
    throw new AssertionError("no " + kind + " span " + name + " among " + exporter.getFinishedSpanItems());
  }

  @Test
  void aCallAndTheCallItsHandlerMakesFormOneTraceAcrossTwoApplications() {
    try (ConfigurableApplicationContext front = boot("127.0.0.1:1");
        ConfigurableApplicationContext app = boot("127.0.0.1:" + front.getBean(PetrelServerLifecycle.class).port())) {
      int port = app.getBean(PetrelServerLifecycle.class).port();
      try (RpcClient client = RpcClient.builder().address("127.0.0.1", port).build()) {
        assertThat(GreeterRpc.stub(client).greetViaFrontdesk("Ada")).isEqualTo("Welcome, Ada");
      }
      SpanData greet = awaitSpan(app, "sample.Greeter/greetViaFrontdesk", SpanKind.SERVER);
      SpanData welcomeOut = awaitSpan(app, "sample.Frontdesk/welcome", SpanKind.CLIENT);
      SpanData welcomeIn = awaitSpan(front, "sample.Frontdesk/welcome", SpanKind.SERVER);

      assertThat(welcomeOut.getTraceId()).isEqualTo(greet.getTraceId());
      assertThat(welcomeIn.getTraceId()).isEqualTo(greet.getTraceId());
      assertThat(welcomeOut.getParentSpanId()).as("the handler's call is a child of its server span")
          .isEqualTo(greet.getSpanId());
      assertThat(welcomeIn.getParentSpanId()).as("front's span continues app's client span (traceparent)")
          .isEqualTo(welcomeOut.getSpanId());
      assertThat(welcomeOut.getAttributes().asMap().values()).contains((long) front.getBean(
          PetrelServerLifecycle.class).port());

      // Boot applied the starter's MeterFilter: the observations add no timer; Petrel's own meters count.
      MeterRegistry meters = app.getBean(MeterRegistry.class);
      assertThat(meters.find("petrel.rpc.server").meters()).isEmpty();
      assertThat(meters.find("petrel.rpc.client").meters()).isEmpty();
      assertThat(meters.find("rpc.server.calls").tag("method", "greetViaFrontdesk").timer()).isNotNull();
    }
  }
}
