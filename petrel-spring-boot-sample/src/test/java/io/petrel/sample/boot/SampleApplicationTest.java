package io.petrel.sample.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import io.petrel.spring.boot.PetrelClients;
import io.petrel.spring.boot.PetrelHealthIndicator;
import io.petrel.spring.boot.PetrelServerLifecycle;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.contributor.Health;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Lazy;

/**
 * Boots the sample twice on port 0, as two services: "front" serves Frontdesk, "app" serves Greeter and calls the
 * front's Frontdesk from inside a handler. The test calls them over 127.0.0.1 with a plain client and stubs.
 */
class SampleApplicationTest {

  private static ConfigurableApplicationContext boot(String... properties) {
    // As command-line arguments, so that they win over application.properties (port 7000).
    String[] args = new String[properties.length + 2];
    args[0] = "--petrel.server.port=0";
    args[1] = "--spring.main.banner-mode=off";
    for (int i = 0; i < properties.length; i++) {
      args[i + 2] = "--" + properties[i];
    }
    return new SpringApplicationBuilder(SampleApplication.class).run(args);
  }

  @Test
  void servesBeansOfItsServicesOnAFreePortAndTheirHandlersCallOtherServicesThroughInjectedStubs() {
    // The front never calls its own frontdesk client; it only needs a valid target.
    try (ConfigurableApplicationContext front = boot("petrel.clients.frontdesk.target=127.0.0.1:1");
        ConfigurableApplicationContext app = boot("petrel.clients.frontdesk.target=127.0.0.1:"
            + front.getBean(PetrelServerLifecycle.class).port(), "sample.salutation=Hi")) {
      int port = app.getBean(PetrelServerLifecycle.class).port();
      assertThat(port).isPositive();
      try (RpcClient client = RpcClient.builder().address("127.0.0.1", port).build()) {
        Greeter greeter = GreeterRpc.stub(client);
        assertThat(greeter.greet("Ada")).isEqualTo("Hi Ada");
        assertThat(GreeterRpc.asyncStub(client).length("four").join()).isEqualTo(4);
        // app's handler calls front's Frontdesk (served from a FrontdeskAsync bean) over a second socket.
        assertThat(greeter.greetViaFrontdesk("Grace")).isEqualTo("Welcome, Grace");
      }

      // Petrel's meters went to each application's own MeterRegistry.
      MeterRegistry appMeters = app.getBean(MeterRegistry.class);
      assertThat(timerCount(appMeters, "rpc.server.calls", "service", "sample.Greeter", "method", "greet",
          "status", "OK")).isEqualTo(1);
      assertThat(timerCount(appMeters, "rpc.client.calls", "service", "sample.Frontdesk", "method", "welcome",
          "status", "OK")).isEqualTo(1);
      assertThat(timerCount(front.getBean(MeterRegistry.class), "rpc.server.calls", "service", "sample.Frontdesk",
          "method", "welcome", "status", "OK")).isEqualTo(1);

      Health health = app.getBean(PetrelHealthIndicator.class).health();
      assertThat(health.getStatus().getCode()).isEqualTo("UP");
      assertThat(health.getDetails()).containsEntry("server", "serving").containsEntry("port", port);
      PetrelClients clients = app.getBean(PetrelClients.class);
      assertThat(clients.names()).containsExactly("frontdesk");
      // Stubs of every generated kind over the shared client, for @Bean methods and constructor injection.
      assertThat(clients.stub("frontdesk", FrontdeskAsync.class).welcome("Ada").join()).isEqualTo("Welcome, Ada");
      FrontdeskRpc.FrontdeskStub stub = clients.stub("frontdesk", FrontdeskRpc.FrontdeskStub.class);
      assertThat(stub.welcome("Alan")).isEqualTo("Welcome, Alan");
      assertThat(stub.client()).isSameAs(clients.client("frontdesk"));
      assertThatThrownBy(() -> clients.stub("frontdesk", String.class))
          .hasMessageContaining("java.lang.String is not a Petrel stub type");
    }
  }

  /**
   * The count of a timer once it has one: a server records a call just after it queued the response, so the
   * caller may see the answer first.
   */
  private static long timerCount(MeterRegistry registry, String name, String... tags) {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < until) {
      Timer timer = registry.find(name).tags(tags).timer();
      if (timer != null && timer.count() > 0) {
        return timer.count();
      }
      Thread.onSpinWait();
    }
    return 0;
  }

  /** A stub declared as a lazy bean: its declared type is the service interface until it is made. */
  @Configuration(proxyBeanMethods = false)
  static class LazyStub {
    @Bean
    @Lazy
    Frontdesk frontdeskStub(PetrelClients clients) {
      return clients.stub("frontdesk", Frontdesk.class);
    }
  }

  /**
   * The sample run as its own JVM, as {@code java -cp ... SampleApplication}: its main returns once the context
   * has started, and the application goes on serving (the server's event loops are daemon threads; the starter
   * keeps the JVM up while the server serves) until it is told to stop (SIGTERM: a graceful drain, then exit).
   */
  @Test
  void runAsItsOwnProcessTheApplicationKeepsServingAfterItsMainReturnsUntilTold() throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
        SampleApplication.class.getName(), "--petrel.server.port=0", "--petrel.server.address=127.0.0.1",
        "--spring.main.banner-mode=off", "--petrel.clients.frontdesk.target=127.0.0.1:1")
        .redirectErrorStream(true).start();
    BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    Thread reader = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(),
          StandardCharsets.UTF_8))) {
        for (String l; (l = r.readLine()) != null; ) {
          lines.add(l);
        }
      } catch (IOException e) {
        // the process ended
      }
    }, "sample-output");
    reader.setDaemon(true);
    reader.start();
    try {
      int port = -1;
      boolean started = false;
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      List<String> seen = new ArrayList<>();
      while (!started) {
        String l = lines.poll(Math.max(1, until - System.nanoTime()), TimeUnit.NANOSECONDS);
        assertThat(l).as("the sample's output so far: %s", seen).isNotNull();
        seen.add(l);
        Matcher m = LISTENING.matcher(l);
        if (m.find()) {
          port = Integer.parseInt(m.group(1));
        }
        started = l.contains("Started SampleApplication"); // logged as run() returns to main
      }
      assertThat(port).as("the 'listening on' line in %s", seen).isPositive();
      // Before the starter kept the JVM up, the process exited about 10 ms after that line.
      assertThat(p.waitFor(3, TimeUnit.SECONDS)).as("the sample exited after its main returned: %s", seen)
          .isFalse();
      try (RpcClient client = RpcClient.builder().address("127.0.0.1", port).build()) {
        assertThat(GreeterRpc.stub(client).greet("Ada")).isEqualTo("Hello Ada");
      }
      p.destroy(); // SIGTERM: Boot closes the context, Petrel drains and stops, the JVM exits
      assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("the sample stops when told to").isTrue();
    } finally {
      p.destroyForcibly();
    }
  }

  private static final Pattern LISTENING = Pattern.compile("listening on /127\\.0\\.0\\.1:(\\d+)");

  @Test
  void aStubBeanIsNeverServedEvenWhenItsDeclaredTypeIsTheServiceInterface() {
    // If the lazy stub were taken for an implementation, the start would fail: FrontdeskService serves it already.
    try (ConfigurableApplicationContext app = new SpringApplicationBuilder(SampleApplication.class, LazyStub.class)
        .run("--petrel.server.port=0", "--spring.main.banner-mode=off",
            "--petrel.clients.frontdesk.target=127.0.0.1:1")) {
      assertThat(app.getBean(PetrelServerLifecycle.class).port()).isPositive();
      assertThat(app.getBean("frontdeskStub")).isInstanceOf(FrontdeskRpc.FrontdeskStub.class);
    }
  }

  /**
   * A bean in front of a remote service (a cache, a fallback) implements the service's interface and calls it
   * through a {@code @PetrelClient} field: it is the caller's side, and is not served.
   */
  static class CachingFrontdesk implements Frontdesk {
    @io.petrel.spring.boot.PetrelClient("frontdesk")
    Frontdesk remote;

    @Override
    public String welcome(String guest) {
      return remote.welcome(guest);
    }
  }

  @Test
  void aBeanThatCallsTheServiceItImplementsThroughAnInjectedStubIsNotServed() {
    // If the decorator were taken for an implementation, the start would fail: FrontdeskService serves it already.
    try (ConfigurableApplicationContext app = new SpringApplicationBuilder(SampleApplication.class)
        .sources(CachingFrontdesk.class)
        .run("--petrel.server.port=0", "--spring.main.banner-mode=off",
            "--petrel.clients.frontdesk.target=127.0.0.1:1")) {
      assertThat(app.getBean(PetrelServerLifecycle.class).port()).isPositive();
      assertThat(app.getBean(CachingFrontdesk.class).remote).isInstanceOf(FrontdeskRpc.FrontdeskStub.class);
    }
  }

  @Test
  void aCallAfterTheApplicationClosedIsRefusedWithUnavailable() {
    ConfigurableApplicationContext app = boot("petrel.clients.frontdesk.target=127.0.0.1:1");
    int port = app.getBean(PetrelServerLifecycle.class).port();
    try (RpcClient client = RpcClient.builder().address("127.0.0.1", port).build()) {
      Greeter greeter = GreeterRpc.stub(client);
      assertThat(greeter.greet("Ada")).isEqualTo("Hello Ada");
      app.close();
      assertThatThrownBy(() -> greeter.greet("Ada")).isInstanceOfSatisfying(StatusException.class,
          e -> assertThat(e.code()).isEqualTo(Status.Code.UNAVAILABLE));
    }
  }
}
