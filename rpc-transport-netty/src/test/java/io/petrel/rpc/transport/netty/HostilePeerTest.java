package io.petrel.rpc.transport.netty;

import static io.petrel.rpc.transport.netty.Protocol.*;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.google.protobuf.StringValue;
import io.netty.buffer.PooledByteBufAllocator;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.Status;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The server against peers that misbehave: they do not read, send half a frame, hold connections open doing
 * nothing, reuse request ids, or flood connections. Each test is one weakness of issue 13 (numbered as there).
 */
class HostilePeerTest extends TransportFixture {
  private static final int MIB = 1024 * 1024;

  private static long directUsed() {
    return PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory();
  }

  /** Weakness 1: peers that send requests for large responses and never read them. */
  @Test
  void peersThatDoNotReadCannotGrowServerMemoryAndOthersAreStillServed() throws Exception {
    RpcServer server = startServer(b -> b.unwritableTimeout(Duration.ofSeconds(2)));
    RpcClient good = client(server.port());
    assertThat(good.unaryCall(TestService.ECHO, StringValue.of("warm")).getValue()).isEqualTo("warm");
    long before = directUsed();
    List<RawPeer> attackers = new ArrayList<>();
    byte[] oneRequest = RawPeer.request(TestService.BIG_RESPONSE, 1, 0, new Object[] {64 * 1024});
    for (int c = 0; c < 3; c++) {
      RawPeer p = new RawPeer(server.port(), 4096);
      attackers.add(p);
      // 400 requests of 36 bytes for 64 KiB each (25 MiB of responses per connection), never read.
      byte[] all = new byte[oneRequest.length * 400];
      for (int i = 0; i < 400; i++) {
        byte[] r = RawPeer.request(TestService.BIG_RESPONSE, i + 1, 0, new Object[] {64 * 1024});
        System.arraycopy(r, 0, all, i * r.length, r.length);
      }
      p.send(all);
    }
    // While the peers sit on their responses, a well-behaved client keeps calling.
    long maxDirect = 0;
    long worstNanos = 0;
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
    int calls = 0;
    while (calls < 300 && System.nanoTime() < until) {
      long t0 = System.nanoTime();
      assertThat(good.unaryCall(TestService.ECHO, StringValue.of("during " + calls)).getValue())
          .isEqualTo("during " + calls);
      worstNanos = Math.max(worstNanos, System.nanoTime() - t0);
      maxDirect = Math.max(maxDirect, directUsed());
      calls++;
    }
    long grown = maxDirect - before;
    System.out.printf("non-reading peers: direct memory %d MiB before, up to %d MiB during (+%d MiB); second"
        + " client: %d calls, slowest %.1f ms%n", before / MIB, maxDirect / MIB, grown / MIB, calls,
        worstNanos / 1e6);
    assertThat(grown).as("direct memory grown under attack (bytes)").isLessThan(24L * MIB);
    assertThat(worstNanos).as("slowest call of the well-behaved client").isLessThan(TimeUnit.SECONDS.toNanos(1));
    // After unwritableTimeout the server lets go of the peers (which still read nothing) and all they held.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (server.inFlightCalls() > 0 && System.nanoTime() < deadline) {
      Thread.onSpinWait();
    }
    assertThat(server.inFlightCalls()).isZero();
    for (RawPeer p : attackers) {
      p.readUntilClosed(); // what the kernel still held for them, then the end
      p.close();
    }
    assertThat(good.unaryCall(TestService.ECHO, StringValue.of("after")).getValue()).isEqualTo("after");
  }

  /** Weakness 3: a connection that sends nothing, or half a header, is closed after handshakeTimeout. */
  @Test
  void silentAndHalfHeaderConnectionsAreClosedAfterTheHandshakeTimeout() throws Exception {
    RpcServer server = startServer(b -> b.handshakeTimeout(Duration.ofMillis(300)));
    long start = System.nanoTime();
    try (RawPeer silent = new RawPeer(server.port()); RawPeer half = new RawPeer(server.port())) {
      half.send(new byte[] {0, 0, 0, 28, 0x50, 0x52, 1});
      assertThat(silent.readUntilClosed()).isEmpty();
      assertThat(half.readUntilClosed()).isEmpty();
    }
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isBetween(250L, 5_000L);
  }

  /** Weakness 3: a frame that never completes (8 MiB minus one byte) is cut off after frameReceiveTimeout. */
  @Test
  void aFrameThatNeverCompletesIsCutOffAfterTheFrameReceiveTimeout() throws Exception {
    RpcServer server = startServer(b -> b.frameReceiveTimeout(Duration.ofMillis(300)));
    RpcClient good = client(server.port());
    try (RawPeer p = new RawPeer(server.port())) {
      p.send(RawPeer.control(TYPE_PING, 1)); // a first whole frame: past the handshake
      assertThat(p.read().type()).isEqualTo(TYPE_PONG);
      p.send(RawPeer.header(TYPE_REQUEST, 7, TestService.BYTES.id(), 1024 * 1024));
      p.send(new byte[1000]);
      long start = System.nanoTime();
      assertThat(p.readUntilClosed()).isEmpty();
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isBetween(200L, 5_000L);
    }
    assertThat(good.unaryCall(TestService.ECHO, StringValue.of("ok")).getValue()).isEqualTo("ok");
  }

  /** Weakness 3: partial frames cannot take more than maxBufferedBytes; the frame over it is refused. */
  @Test
  void partialFramesBeyondMaxBufferedBytesAreRefusedWithResourceExhausted() throws Exception {
    RpcServer server = startServer(b -> b.maxBufferedBytes(2 * MIB));
    BufferBudget budget = ((NettyServerTransport) ((io.petrel.rpc.internal.ServerImpl) server).transport()).budget();
    List<RawPeer> holders = new ArrayList<>();
    try {
      for (int i = 0; i < 3; i++) { // 3 x 768 KiB partly sent: the third does not fit in 2 MiB
        RawPeer p = new RawPeer(server.port());
        holders.add(p);
        p.send(RawPeer.header(TYPE_REQUEST, 10 + i, TestService.BYTES.id(), 768 * 1024));
        p.send(new byte[100]);
        if (i < 2) {
          long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
          while (budget.used() < (i + 1) * (768L * 1024 + HEADER_SIZE) && System.nanoTime() < until) {
            Thread.onSpinWait(); // until the server has seen this header and reserved the frame
          }
        }
      }
      RawPeer.RawFrame refused = holders.get(2).read();
      assertThat(refused.type()).isEqualTo(TYPE_RESPONSE);
      assertThat(refused.requestId()).isEqualTo(12);
      assertThat(refused.status()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED.value());
      // What the server holds (the two partial frames), not only its cap.
      assertThat(refused.text()).contains("the server holds " + 2 * (768L * 1024 + HEADER_SIZE) + " bytes")
          .contains("over its maxBufferedBytes of " + 2 * MIB);
      // Others are still served, on new connections too.
      RpcClient good = client(server.port());
      assertThat(good.unaryCall(TestService.ECHO, StringValue.of("ok")).getValue()).isEqualTo("ok");
    } finally {
      for (RawPeer p : holders) {
        p.close();
      }
    }
  }

  /** Weakness 3: one address cannot hold every connection; another address still gets in. */
  @Test
  void oneAddressIsLimitedToMaxConnectionsPerAddress() throws Exception {
    RpcServer server = startServer(b -> b.maxConnectionsPerAddress(3));
    List<RawPeer> held = new ArrayList<>();
    try {
      for (int i = 0; i < 3; i++) {
        RawPeer p = new RawPeer(server.port());
        held.add(p);
        p.send(RawPeer.control(TYPE_PING, i));
        assertThat(p.read().type()).isEqualTo(TYPE_PONG); // accepted and served
      }
      try (RawPeer fourth = new RawPeer(server.port())) {
        assertThat(fourth.readUntilClosed()).isEmpty();
      }
      try (RawPeer other = new RawPeer(server.port(), 0, InetAddress.getByName("127.0.0.2"))) {
        other.send(RawPeer.request(TestService.ECHO, 5, 0, StringValue.of("from 127.0.0.2")));
        RawPeer.RawFrame r = other.read();
        assertThat(r.status()).isZero();
        assertThat(r.requestId()).isEqualTo(5);
      }
    } finally {
      for (RawPeer p : held) {
        p.close();
      }
    }
  }

  /**
   * The count per address falls as connections close: 5,000 connections from one address that connect and close
   * at once (at most a few open at a time) do not use up its maxConnectionsPerAddress (1,000 by default).
   */
  @Test
  void aConnectThenCloseStormDoesNotUseUpTheAddressLimit() throws Exception {
    RpcServer server = startServer();
    NettyServerTransport transport = (NettyServerTransport) ((io.petrel.rpc.internal.ServerImpl) server).transport();
    // 5,000 connections in bursts of 250 opened at once and closed at once (every other one with a reset
    // instead of a FIN), many of them before the server has seen them open.
    for (int burst = 0; burst < 20; burst++) {
      List<java.net.Socket> open = new ArrayList<>();
      for (int i = 0; i < 250; i++) {
        java.net.Socket s = new java.net.Socket();
        open.add(s);
        s.connect(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), server.port()), 5000);
        if (i % 2 == 1) {
          s.setSoLinger(true, 0);
        }
      }
      for (java.net.Socket s : open) {
        s.close();
      }
    }
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while ((transport.openConnections() > 0 || transport.addressCount(InetAddress.getLoopbackAddress()) > 0)
        && System.nanoTime() < until) {
      Thread.onSpinWait(); // until the server has seen every close
    }
    assertThat(transport.openConnections()).as("connections the server still counts").isZero();
    assertThat(transport.addressCount(InetAddress.getLoopbackAddress())).as("count for 127.0.0.1").isZero();
    RpcClient client = client(server.port());
    assertThat(client.unaryCall(TestService.ECHO, StringValue.of("after the storm")).getValue())
        .isEqualTo("after the storm");
  }

  /** Weakness 3: an idle connection gets GOAWAY and is closed; keepalive closes a peer that stops answering. */
  @Test
  void idleConnectionsGetGoawayAndSilentPeersAreFoundByServerKeepalive() throws Exception {
    RpcServer server = startServer(b -> b.idleTimeout(Duration.ofMillis(300))
        .keepAlive(Duration.ofMillis(200), Duration.ofMillis(200)));
    try (RawPeer idle = new RawPeer(server.port())) {
      idle.send(RawPeer.request(TestService.ECHO, 1, 0, StringValue.of("one call")));
      assertThat(idle.read().requestId()).isEqualTo(1);
      // Nothing more: a PING comes (keepalive), then GOAWAY (idle) or the close; the peer answers nothing.
      List<Integer> seen = idle.readUntilClosed();
      assertThat(seen).isNotEmpty().containsAnyOf((int) TYPE_PING, (int) TYPE_GOAWAY);
    }
    RpcClient client = client(server.port());
    assertThat(client.unaryCall(TestService.ECHO, StringValue.of("a")).getValue()).isEqualTo("a");
  }

  /**
   * An idle connection is drained, not cut: a call the client sent just before it read the GOAWAY is still
   * answered, and the connection closes right after the PONG to the PING that follows the GOAWAY.
   */
  @Test
  void aCallRacingTheIdleGoawayIsAnsweredAndTheConnectionClosesAfterThePong() throws Exception {
    RpcServer server = startServer(b -> b.idleTimeout(Duration.ofMillis(200))
        .keepAlive(Duration.ZERO, Duration.ofSeconds(20)).shutdownGracePeriod(Duration.ofSeconds(5)));
    try (RawPeer p = new RawPeer(server.port())) {
      p.send(RawPeer.control(TYPE_PING, 1)); // a frame, so that the handshake timeout is satisfied
      List<Integer> seen = new ArrayList<>();
      RawPeer.RawFrame f;
      do {
        f = p.read();
        seen.add(f.type());
      } while (!(f.type() == TYPE_PING && f.requestId() == ServerConnection.DRAIN_PING_ID));
      assertThat(seen).contains((int) TYPE_GOAWAY);
      // In flight from before the GOAWAY was read: a call, then the PONG.
      p.send(RawPeer.request(TestService.ECHO, 7, 0, StringValue.of("late")));
      p.send(RawPeer.control(TYPE_PONG, f.requestId()));
      long ponged = System.nanoTime();
      RawPeer.RawFrame answer = p.read();
      assertThat(answer.type()).isEqualTo(TYPE_RESPONSE);
      assertThat(answer.requestId()).isEqualTo(7);
      assertThat(answer.status()).as("answered, not refused").isZero();
      assertThat(p.readUntilClosed()).isEmpty();
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - ponged))
          .as("closed after the PONG and the answer, well before the 5 s grace period").isLessThan(3_000L);
    }
  }

  /** Weakness 3: a connection older than maxConnectionAge is sent GOAWAY; the client moves on seamlessly. */
  @Test
  void connectionsOlderThanMaxConnectionAgeAreDrainedAndClientsMoveOn() throws Exception {
    RpcServer server = startServer(b -> b.maxConnectionAge(Duration.ofMillis(200))
        .shutdownGracePeriod(Duration.ofSeconds(2)));
    // A peer that answers the PING that follows the GOAWAY is closed as soon as its PONG is in (no call in flight).
    try (RawPeer p = new RawPeer(server.port())) {
      p.send(RawPeer.control(TYPE_PING, 1));
      long goawayAt = 0;
      List<Integer> seen = new ArrayList<>();
      long closedAfter = -1;
      try {
        for (;;) {
          RawPeer.RawFrame f = p.read();
          seen.add(f.type());
          if (f.type() == TYPE_GOAWAY) {
            goawayAt = System.nanoTime();
          } else if (f.type() == TYPE_PING && f.requestId() == ServerConnection.DRAIN_PING_ID) {
            p.send(RawPeer.control(TYPE_PONG, f.requestId()));
          }
        }
      } catch (java.io.EOFException | java.net.SocketException closed) {
        closedAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - goawayAt);
      }
      assertThat(seen).contains((int) TYPE_PONG, (int) TYPE_GOAWAY, (int) TYPE_PING);
      assertThat(closedAfter).as("closed after the PONG, well before the 2 s grace period").isBetween(0L, 1_500L);
    }
    // A peer that never answers that PING (it may still have calls on the way) is closed after the grace period.
    try (RawPeer p = new RawPeer(server.port())) {
      p.send(RawPeer.control(TYPE_PING, 1));
      long start = System.nanoTime();
      List<Integer> seen = p.readUntilClosed();
      assertThat(seen).contains((int) TYPE_GOAWAY, (int) TYPE_PING);
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).as("held for the grace period")
          .isBetween(1_900L, 8_000L);
    }
    RpcClient client = client(server.port());
    long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1200);
    int n = 0;
    while (System.nanoTime() < until && n < 100_000) { // across several connection lifetimes
      assertThat(client.unaryCall(TestService.ECHO, StringValue.of("x" + n)).getValue()).isEqualTo("x" + n);
      n++;
    }
  }

  /** Weakness 4: a request id already in flight is a protocol violation; the connection is closed. */
  @Test
  void reusedRequestIdClosesTheConnection() throws Exception {
    RpcServer server = startServer(b -> b.maxConcurrentCallsPerConnection(10));
    RpcClient good = client(server.port());
    try (RawPeer p = new RawPeer(server.port())) {
      byte[] block = RawPeer.request(TestService.BLOCK, 42, 0, StringValue.of("b"));
      p.send(block);
      assertThat(service.blockStarted.poll(10, TimeUnit.SECONDS)).isEqualTo("b");
      byte[] again = new byte[block.length * 99]; // the same id again while the first is in flight
      for (int i = 0; i < 99; i++) {
        System.arraycopy(block, 0, again, i * block.length, block.length);
      }
      try {
        p.send(again);
      } catch (java.net.SocketException closedMeanwhile) {
        // the server may close before it has read them all
      }
      assertThat(p.readUntilClosed()).isEmpty();
    }
    assertThat(service.blockStarted).isEmpty(); // only the first one ran
    assertThat(good.unaryCall(TestService.ECHO, StringValue.of("ok")).getValue()).isEqualTo("ok");
  }

  /**
   * A client that sends a frame only servers send (a RESPONSE) breaks the protocol: the server closes that
   * connection, says so in one WARN line naming the frame, runs nothing for it, and serves everyone else. GOAWAY
   * and SETTINGS from a client are reserved for later versions and ignored: the connection goes on.
   */
  @Test
  void aResponseFromAClientClosesItsConnectionAndGoawayOrSettingsAreIgnored() throws Exception {
    RpcServer server = startServer();
    RpcClient good = client(server.port());
    try (LogCapture log = new LogCapture(RpcServer.class)) {
      try (RawPeer p = new RawPeer(server.port())) {
        p.send(RawPeer.response(7, StringValue.of("answer to nobody").toByteArray()));
        assertThat(p.readUntilClosed()).isEmpty();
      }
      assertThat(log.await(ch.qos.logback.classic.Level.WARN, Duration.ofSeconds(10), "protocol violation"))
          .contains("a client sent a RESPONSE frame, which only servers send");
    }
    try (RawPeer p = new RawPeer(server.port())) {
      p.send(RawPeer.control(TYPE_GOAWAY, 0));
      p.send(RawPeer.settingsFrame(SETTING_MAX_CONCURRENT_CALLS, 1));
      p.send(RawPeer.request(TestService.ECHO, 1, 0, StringValue.of("still here")));
      RawPeer.RawFrame answer = p.read();
      assertThat(answer.type()).isEqualTo((int) TYPE_RESPONSE);
      assertThat(StringValue.parseFrom(answer.body()).getValue()).isEqualTo("still here");
    }
    assertThat(good.unaryCall(TestService.ECHO, StringValue.of("ok")).getValue()).isEqualTo("ok");
  }

  /** Weakness 7: a flood of refused connections logs a line, not a line each. */
  @Test
  void aFloodOfRefusedConnectionsLogsOneLinePerCause() throws Exception {
    Logger logger = (Logger) LoggerFactory.getLogger(RpcServer.class);
    ListAppender<ILoggingEvent> appender = new ListAppender<>();
    appender.start();
    logger.addAppender(appender);
    try {
      RpcServer server = startServer(b -> b.maxConnections(1));
      try (RawPeer first = new RawPeer(server.port())) {
        first.send(RawPeer.control(TYPE_PING, 1));
        assertThat(first.read().type()).isEqualTo(TYPE_PONG);
        for (int i = 0; i < 50; i++) {
          try (RawPeer refused = new RawPeer(server.port())) {
            assertThat(refused.readUntilClosed()).isEmpty();
          }
        }
      }
      long lines = appender.list.stream().filter(e -> e.getFormattedMessage().contains("refusing connection"))
          .count();
      assertThat(lines).isEqualTo(1);
    } finally {
      logger.detachAppender(appender);
    }
  }
  /**
   * The status byte of a client's CANCEL says why it gave up: 4 (DEADLINE_EXCEEDED) is taken as such; any other
   * value, garbage included, as CANCELLED. The call is counted so, and the connection goes on.
   */
  @Test
  void aCancelsStatusByteIsTakenAsDeadlineExceededOrElseCancelled() throws Exception {
    io.micrometer.core.instrument.simple.SimpleMeterRegistry registry =
        new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
    io.petrel.rpc.MethodDescriptor<StringValue, StringValue> late = TestService.textMethod("test.Late", "late");
    java.util.concurrent.BlockingQueue<String> running = new java.util.concurrent.LinkedBlockingQueue<>();
    // One business thread: each call is counted before the next one runs (the ECHO at the end is the barrier).
    RpcServer server = startServer(b -> b.meterRegistry(registry).businessThreads(1)
        .addService(io.petrel.rpc.ServiceDefinition.builder("test.Late").unary(late, req -> {
          java.util.concurrent.CountDownLatch gaveUp = new java.util.concurrent.CountDownLatch(1);
          io.petrel.rpc.ServerContext.current().onCancel(gaveUp::countDown);
          running.add(req.getValue());
          assertThat(gaveUp.await(10, TimeUnit.SECONDS)).isTrue();
          return req;
        }).build()));
    try (RawPeer p = new RawPeer(server.port())) {
      int id = 1;
      for (int status : new int[] {200, Status.Code.DEADLINE_EXCEEDED.value()}) {
        p.send(RawPeer.request(late, id, 60_000, StringValue.of("s" + status)));
        assertThat(running.poll(10, TimeUnit.SECONDS)).isEqualTo("s" + status);
        byte[] cancel = RawPeer.control(TYPE_CANCEL, id);
        cancel[OFF_STATUS] = (byte) status;
        p.send(cancel);
        RawPeer.RawFrame answer = p.read();
        assertThat(answer.type()).isEqualTo(TYPE_RESPONSE);
        assertThat(answer.requestId()).isEqualTo(id);
        id++;
      }
      p.send(RawPeer.request(TestService.ECHO, id, 60_000, StringValue.of("barrier")));
      assertThat(StringValue.parseFrom(p.read().body()).getValue()).isEqualTo("barrier");
    }
    for (String status : List.of("CANCELLED", "DEADLINE_EXCEEDED")) {
      io.micrometer.core.instrument.Timer t = registry.find("rpc.server.calls").tag("method", "late")
          .tag("status", status).timer();
      assertThat(t).as(status).isNotNull();
      assertThat(t.count()).as(status).isEqualTo(1);
    }
  }
}
