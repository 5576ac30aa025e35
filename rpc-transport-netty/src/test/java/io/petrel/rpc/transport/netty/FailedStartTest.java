package io.petrel.rpc.transport.netty;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import io.petrel.rpc.RpcServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * A server whose {@code start()} failed (its port is taken) has stopped already: whatever stop comes after it
 * (shutdownNow, shutdown then shutdownNow, close twice) stops nothing again, logs no second "stopped" line, and
 * awaitTermination returns at once. So does a server that was never started.
 */
class FailedStartTest {
  private final TestService service = new TestService();

  @Test
  void shutdownNowAfterAFailedStartStopsNothingAgain() throws Exception {
    stopsOnce(RpcServer::shutdownNow);
  }

  @Test
  void shutdownThenShutdownNowAfterAFailedStartStopsNothingAgain() throws Exception {
    stopsOnce(s -> {
      s.shutdown();
      s.shutdownNow();
    });
  }

  @Test
  void closeTwiceAfterAFailedStartStopsNothingAgain() throws Exception {
    stopsOnce(s -> {
      s.close();
      s.close();
    });
  }

  @Test
  void aServerNeverStartedStopsOnceHoweverItIsStopped() throws Exception {
    RpcServer server = RpcServer.builder().name("unstarted").bindAddress("127.0.0.1", 0)
        .addService(service.definition()).build();
    try (LogCapture log = new LogCapture(RpcServer.class)) {
      server.shutdown();
      server.shutdownNow();
      server.close();
      server.shutdownNow();
      assertThat(server.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
      assertThat(server.isTerminated()).isTrue();
      assertThat(log.lines(Level.INFO, "stopped")).as("a server never started never stopped either").isEmpty();
    }
  }

  private void stopsOnce(Consumer<RpcServer> stop) throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        LogCapture log = new LogCapture(RpcServer.class)) {
      RpcServer server = RpcServer.builder().name("failed").bindAddress("127.0.0.1", taken.getLocalPort())
          .addService(service.definition()).build();
      assertThatThrownBy(server::start).isInstanceOf(IOException.class).hasMessageContaining("cannot bind");
      assertThat(server.isTerminated()).as("a failed start leaves the server terminated").isTrue();
      stop.accept(server);
      assertThat(server.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
      // a stop that ran again would log its "stopped" line from a thread of its own once the transport's
      // (second) release completed: a marker logged after that bounded wait shows whether it came
      RpcServer marker = RpcServer.builder().name("marker").bindAddress("127.0.0.1", 0).addService(service.definition())
          .build().start();
      marker.shutdownNow();
      assertThat(marker.awaitTermination(20, TimeUnit.SECONDS)).isTrue();
      log.await(Level.INFO, java.time.Duration.ofSeconds(20), "Petrel server 'marker' stopped");
      assertThat(log.lines(Level.INFO, "'failed' stopped")).as("the failed server stopped with its start: no stop"
          + " runs again on its released transport").isEmpty();
    }
  }
}
