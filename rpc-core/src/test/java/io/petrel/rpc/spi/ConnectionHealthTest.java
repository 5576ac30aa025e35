package io.petrel.rpc.spi;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcClientBuilder;
import io.petrel.rpc.marshal.Marshallers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Keepalive and the liveness check are the core's, for any transport that gives a connection an executor, PINGs
 * and a dead close (here the core's recording transport, whose connection "reads" when the test says): the core
 * decides when to PING and when the connection is dead; the transport only carries it out.
 */
class ConnectionHealthTest {
  private static final MethodDescriptor<byte[], byte[]> ECHO = MethodDescriptor.<byte[], byte[]>newBuilder()
      .serviceName("test.Svc").methodName("echo").requestMarshaller(Marshallers.bytes())
      .responseMarshaller(Marshallers.bytes()).build();

  private final List<RpcClient> clients = new ArrayList<>();
  private final ScheduledExecutorService loop = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "recording-connection");
    t.setDaemon(true);
    return t;
  });

  @AfterEach
  void close() {
    clients.forEach(RpcClient::shutdownNow);
    loop.shutdownNow();
  }

  /** A client of one endpoint whose connection has {@link #loop} for executor, connected by a first call. */
  private RecordingTransport.Conn connected(Duration keepAlive) throws Exception {
    return connected(keepAlive, RpcClient.builder()); // livenessTimeout: the default, 2 s
  }

  private RecordingTransport.Conn connected(Duration keepAlive, RpcClientBuilder builder)
      throws Exception {
    RpcClient rpc = builder.target("static://a:1").transport("recording").keepAliveTime(keepAlive).build();
    clients.add(rpc);
    RecordingTransport.Client c = RecordingTransport.of(rpc);
    c.connectionExecutor = loop;
    answerOneCall(c);
    return c.connects.get(0);
  }

  /** Waits until the tasks the core scheduled on the connection's executor up to {@code ms} from now have run. */
  private void past(long ms) throws Exception {
    CountDownLatch done = new CountDownLatch(1);
    loop.schedule(done::countDown, ms, TimeUnit.MILLISECONDS);
    assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void keepaliveSendsAPingAfterSilenceAndClosesTheConnectionDeadWhenTheSilenceLastsAsLongAgain() throws Exception {
    RecordingTransport.Conn conn = connected(Duration.ofMillis(100));
    assertThat(conn.health.poll(10, TimeUnit.SECONDS)).isEqualTo("ping");
    conn.read(); // the answer (any bytes): the next silence gets a PING of its own, not a close
    assertThat(conn.health.poll(10, TimeUnit.SECONDS)).isEqualTo("ping");
    long pinged = System.nanoTime();
    assertThat(conn.health.poll(10, TimeUnit.SECONDS)).isEqualTo("dead: no answer to keepalive PING | silent for two"
        + " keepalive periods, a PING went unanswered | reconnecting");
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - pinged)).as("ms from the PING to the close")
        .isGreaterThanOrEqualTo(90);
    assertThat(conn.closed.get(10, TimeUnit.SECONDS)).isNull();
    past(300);
    assertThat(conn.health).as("nothing after the close").isEmpty();
  }

  @Test
  void aDeadlinePassedSendsAPingAndTheConnectionIsDeadIfNothingIsReadWithinTwoSeconds() throws Exception {
    RecordingTransport.Conn conn = connected(Duration.ZERO); // keepalive off: the liveness check still applies
    loop.execute(conn.listener::deadlinePassed);
    assertThat(conn.health.poll(10, TimeUnit.SECONDS)).isEqualTo("ping");
    loop.execute(conn.listener::deadlinePassed); // a check under way: no second PING
    conn.read();
    past(2_100);
    assertThat(conn.health).as("something was read: the connection stays").isEmpty();
    assertThat(conn.usable).isTrue();

    loop.execute(conn.listener::deadlinePassed);
    assertThat(conn.health.poll(10, TimeUnit.SECONDS)).isEqualTo("ping");
    long pinged = System.nanoTime();
    String dead = conn.health.poll(10, TimeUnit.SECONDS);
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - pinged)).as("ms from the PING to the close")
        .isGreaterThanOrEqualTo(1_900);
    assertThat(dead).startsWith("dead: nothing received for 2000 ms after a call's deadline passed and a PING was"
        + " sent").endsWith(" | reconnecting");
    assertThat(conn.closed.get(10, TimeUnit.SECONDS)).isNull();
  }

  @Test
  void theLivenessTimeoutIsTheClientsOption() throws Exception {
    RecordingTransport.Conn conn = connected(Duration.ZERO,
        RpcClient.builder().livenessTimeout(Duration.ofMillis(300)));
    loop.execute(conn.listener::deadlinePassed);
    assertThat(conn.health.poll(10, TimeUnit.SECONDS)).isEqualTo("ping");
    long pinged = System.nanoTime();
    String dead = conn.health.poll(10, TimeUnit.SECONDS);
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - pinged)).as("ms from the PING to the close")
        .isBetween(250L, 1_900L);
    assertThat(dead).startsWith("dead: nothing received for 300 ms after a call's deadline passed and a PING was"
        + " sent").contains("RpcClientBuilder.livenessTimeout sets how long").endsWith(" | reconnecting");
  }

  @Test
  void aLivenessTimeoutShorterThanARoundTripOrBeyond24DaysIsRefused() {
    for (Duration d : new Duration[] {Duration.ofMillis(99), Duration.ofNanos(1), Duration.ofMillis(-1),
        Duration.ofDays(25), Duration.ofSeconds(Long.MAX_VALUE)}) {
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> RpcClient.builder().livenessTimeout(d))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("livenessTimeout must be ZERO (off) or 100 ms to 24 days: " + d);
    }
    RpcClient.builder().livenessTimeout(Duration.ofMillis(100)).livenessTimeout(Duration.ofDays(24));
  }

  @Test
  void aLivenessTimeoutOfZeroTurnsTheCheckOff() throws Exception {
    RecordingTransport.Conn conn = connected(Duration.ZERO, RpcClient.builder().livenessTimeout(Duration.ZERO));
    loop.execute(conn.listener::deadlinePassed);
    past(2_100);
    assertThat(conn.health).as("no PING, no close").isEmpty();
    assertThat(conn.usable).isTrue();
  }

  @Test
  void aConnectionWithoutAnExecutorGetsNeitherCheck() throws Exception {
    RpcClient rpc = RpcClient.builder().target("static://a:1").transport("recording")
        .keepAliveTime(Duration.ofMillis(50)).build();
    clients.add(rpc);
    RecordingTransport.Client c = RecordingTransport.of(rpc);
    answerOneCall(c);
    RecordingTransport.Conn conn = c.connects.get(0);
    conn.listener.deadlinePassed();
    CountDownLatch later = new CountDownLatch(1);
    c.scheduler().schedule(later::countDown, 300, TimeUnit.MILLISECONDS);
    assertThat(later.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(conn.health).isEmpty();
    assertThat(conn.usable).isTrue();
  }

  /**
   * A transport may report a close on a thread of its own, not the connection's executor: a close that comes while
   * the checks begin there leaves no keepalive timer behind (holding the connection for a keepalive period). Here
   * the executor's scheduling of the first keepalive timer is held until the connection has closed. Before, the
   * close cancelled the timer it saw (none yet), and the one set a moment later stayed scheduled.
   */
  @Test
  void aConnectionClosedAsTheChecksBeginLeavesNoTimerScheduled() throws Exception {
    CountDownLatch scheduling = new CountDownLatch(1);
    CountDownLatch go = new CountDownLatch(1);
    List<ScheduledFuture<?>> timers = new java.util.concurrent.CopyOnWriteArrayList<>();
    ScheduledThreadPoolExecutor held = new ScheduledThreadPoolExecutor(1) {
      @Override
      public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
        if (delay == 0) {
          return super.schedule(command, delay, unit); // execute: the checks beginning
        }
        if (scheduling.getCount() > 0) {
          scheduling.countDown();
          try {
            go.await(10, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
        ScheduledFuture<?> f = super.schedule(command, delay, unit);
        timers.add(f);
        return f;
      }
    };
    try {
      RpcClient rpc = RpcClient.builder().target("static://a:1").transport("recording")
          .keepAliveTime(Duration.ofHours(1)).build();
      clients.add(rpc);
      RecordingTransport.Client c = RecordingTransport.of(rpc);
      c.connectionExecutor = held;
      c.unaryCallAsync(ECHO, new byte[] {1}, CallOptions.DEFAULT);
      try {
        assertThat(scheduling.await(10, TimeUnit.SECONDS)).as("keepalive's first timer being set").isTrue();
        c.connects.get(0).lose(true); // reported on this thread, not the connection's executor
      } finally {
        go.countDown();
      }
      CountDownLatch begun = new CountDownLatch(1);
      held.execute(begun::countDown);
      assertThat(begun.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(timers).isNotEmpty();
      assertThat(timers.get(0).isCancelled()).as("the keepalive timer set as the connection closed").isTrue();
    } finally {
      held.shutdownNow();
    }
  }

  /** Makes one call on {@code c} and answers it, so that its connection is usable and answered. */
  private static void answerOneCall(RecordingTransport.Client c) throws Exception {
    var f = c.unaryCallAsync(ECHO, new byte[] {1}, CallOptions.DEFAULT);
    RecordingTransport.Call attempt = c.started.poll(10, TimeUnit.SECONDS);
    assertThat(attempt).isNotNull();
    var body = Unpooled.copiedBuffer("ok", UTF_8);
    try {
      attempt.onMessage(body, true);
    } finally {
      body.release();
    }
    f.get(10, TimeUnit.SECONDS);
  }
}
