package io.petrel.rpc.transport.netty;

import static io.petrel.rpc.transport.netty.Protocol.*;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ListValue;
import com.google.protobuf.StringValue;
import com.google.protobuf.Value;
import io.petrel.rpc.BearerTokenServerInterceptor;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.MethodType;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.Status;
import io.petrel.rpc.marshal.Marshallers;
import io.petrel.rpc.marshal.ProtobufMarshaller;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A server with default options seen from an unauthenticated, hostile client (raw sockets; with a bearer-token
 * interceptor installed, it has no token): what its answers tell, and what it can make the server spend per
 * request. docs/security.md, "What a server tells an unauthenticated peer"; docs/reliability.md, rows 24-26.
 */
class UnauthenticatedPeerTest extends TransportFixture {
  private static final String SERVER_NAME = "orders-internal";

  private static MethodDescriptor<byte[], byte[]> bytesMethod(String service, String name) {
    return MethodDescriptor.<byte[], byte[]>newBuilder().serviceName(service).methodName(name)
        .type(MethodType.UNARY).requestMarshaller(Marshallers.bytes()).responseMarshaller(Marshallers.bytes())
        .build();
  }

  /** test.Echo/echo with any bytes as its body (the same method id as {@link TestService#ECHO}). */
  private static final MethodDescriptor<byte[], byte[]> RAW_ECHO = bytesMethod(TestService.NAME, "echo");
  /** test.Echo/add (ArgsMarshaller) with any bytes as its body. */
  private static final MethodDescriptor<byte[], byte[]> RAW_ADD = bytesMethod(TestService.NAME, "add");
  /** A recursive protobuf type (Value -> ListValue -> Value): nesting as deep as the peer likes. */
  private static final MethodDescriptor<Value, Value> TREE = MethodDescriptor.<Value, Value>newBuilder()
      .serviceName("test.Tree").methodName("depth").type(MethodType.UNARY)
      .requestMarshaller(ProtobufMarshaller.of(Value.getDefaultInstance()))
      .responseMarshaller(ProtobufMarshaller.of(Value.getDefaultInstance()))
      .build();
  private static final MethodDescriptor<byte[], byte[]> RAW_TREE = bytesMethod("test.Tree", "depth");

  private static int depth(Value v) {
    int d = 1;
    while (v.hasListValue() && v.getListValue().getValuesCount() > 0) {
      v = v.getListValue().getValues(0);
      d++;
    }
    return d;
  }

  /** A Value nested {@code depth} messages deep (each level a Value, its ListValue in between not counted). */
  private static Value nested(int depth) {
    Value v = Value.newBuilder().setStringValue("leaf").build();
    for (int i = 1; i < depth; i++) {
      v = Value.newBuilder().setListValue(ListValue.newBuilder().addValues(v)).build();
    }
    return v;
  }

  /**
   * The bytes of {@link #nested}({@code depth}), written by hand: protobuf-java's own serializer recurses and
   * overflows the stack long before a peer's bytes would.
   */
  private static byte[] nestedBytes(int depth) throws java.io.IOException {
    byte[] v = nested(1).toByteArray();
    for (int i = 1; i < depth; i++) {
      ByteArrayOutputStream list = new ByteArrayOutputStream();
      com.google.protobuf.CodedOutputStream lo = com.google.protobuf.CodedOutputStream.newInstance(list);
      lo.writeByteArray(1, v); // ListValue.values
      lo.flush();
      ByteArrayOutputStream value = new ByteArrayOutputStream();
      com.google.protobuf.CodedOutputStream vo = com.google.protobuf.CodedOutputStream.newInstance(value);
      vo.writeByteArray(6, list.toByteArray()); // Value.list_value
      vo.flush();
      v = value.toByteArray();
    }
    return v;
  }

  /** An unknown field 15 that opens {@code n} groups inside each other and closes them all. */
  private static byte[] nestedGroups(int n) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (int i = 0; i < n; i++) {
      out.write((15 << 3) | 3); // START_GROUP, field 15
    }
    for (int i = 0; i < n; i++) {
      out.write((15 << 3) | 4); // END_GROUP
    }
    return out.toByteArray();
  }

  private static String expectError(RawPeer p, int requestId, Status.Code code) throws Exception {
    RawPeer.RawFrame f = p.read();
    assertThat(f.type()).isEqualTo(TYPE_RESPONSE);
    assertThat(f.requestId()).isEqualTo(requestId);
    assertThat(f.status()).as(f.text()).isEqualTo(code.value());
    return f.text();
  }

  /**
   * UNIMPLEMENTED is answered before any interceptor runs, so to anyone: it names the id the peer sent and what
   * to check, not the server's name or the services it serves (which the operator finds in the server's WARN).
   * The bearer-token interceptor still refuses the peer's calls of methods that exist.
   */
  @Test
  void anUnknownMethodTellsAPeerWithoutATokenNothingOfTheServer() throws Exception {
    RpcServer server = startServer(b -> b.name(SERVER_NAME)
        .intercept(BearerTokenServerInterceptor.of(token -> token.equals("s3cret"))));
    MethodDescriptor<byte[], byte[]> probe = bytesMethod("guess.Admin", "dump");
    try (LogCapture log = new LogCapture(RpcServer.class); RawPeer p = new RawPeer(server.port())) {
      p.send(RawPeer.request(probe, 1, 0, new byte[0]));
      String text = expectError(p, 1, Status.Code.UNIMPLEMENTED);
      assertThat(text).contains("no method with id 0x" + Integer.toHexString(probe.id()))
          .contains("same version of the interface")
          .doesNotContain(SERVER_NAME).doesNotContain(TestService.NAME).doesNotContain("serves [");
      assertThat(log.await(ch.qos.logback.classic.Level.WARN, Duration.ofSeconds(10), "no method with id"))
          .contains("on server '" + SERVER_NAME + "' (it serves [" + TestService.NAME + "])")
          .contains("asked for by /127.0.0.1:" + p.socket.getLocalPort());
      p.send(RawPeer.request(TestService.ECHO, 2, 0, StringValue.of("no token")));
      assertThat(expectError(p, 2, Status.Code.UNAUTHENTICATED)).doesNotContain(SERVER_NAME);
    }
  }

  /**
   * protobuf-java's recursion limit (100 levels) holds for Petrel's marshallers: a request nested deeper, or an
   * unknown field of 100,000 nested groups, is INVALID_ARGUMENT (no StackOverflowError, no handler run), and
   * the connection goes on.
   */
  @Test
  void requestsNestedDeeperThanProtobufsRecursionLimitAreInvalidArgument() throws Exception {
    AtomicInteger ran = new AtomicInteger();
    RpcServer server = startServer(b -> b.addService(ServiceDefinition.builder("test.Tree").unary(TREE, v -> {
      ran.incrementAndGet();
      return Value.newBuilder().setNumberValue(depth(v)).build();
    }).build()));
    RpcClient client = client(server.port());
    // 51 Values hold 100 embedded messages (a ListValue between each two): the limit, allowed.
    assertThat(client.unaryCall(TREE, nested(51)).getNumberValue()).isEqualTo(51);
    try (RawPeer p = new RawPeer(server.port())) {
      p.send(RawPeer.request(RAW_TREE, 1, 0, nested(52).toByteArray())); // 102 embedded messages
      assertThat(expectError(p, 1, Status.Code.INVALID_ARGUMENT)).contains("test.Tree/depth")
          .contains("too many levels of nesting");
      p.send(RawPeer.request(RAW_TREE, 2, 0, nestedBytes(5_000)));
      assertThat(expectError(p, 2, Status.Code.INVALID_ARGUMENT)).contains("too many levels of nesting");
      byte[] groups = nestedGroups(100_000);
      int id = 3;
      for (MethodDescriptor<byte[], byte[]> m : java.util.List.of(RAW_TREE, RAW_ECHO, RAW_ADD)) {
        p.send(RawPeer.request(m, id, 0, groups));
        assertThat(expectError(p, id, Status.Code.INVALID_ARGUMENT)).contains(m.fullName());
        id++;
      }
      p.send(RawPeer.request(TestService.ECHO, id, 0, StringValue.of("still served")));
      RawPeer.RawFrame ok = p.read();
      assertThat(ok.status()).isZero();
      assertThat(StringValue.parseFrom(ok.body()).getValue()).isEqualTo("still served");
    }
    assertThat(ran.get()).isEqualTo(1);
  }

  /** A REQUEST of ECHO carrying {@code metadata}, encoded without the client's checks. */
  private static byte[] requestWithMetadata(int requestId, io.petrel.rpc.Metadata metadata) {
    io.netty.buffer.ByteBuf b;
    try {
      b = FrameEncoder.encodeMessage(io.netty.buffer.UnpooledByteBufAllocator.DEFAULT, TYPE_REQUEST, 0,
          TestService.ECHO.id(), 0, metadata, TestService.ECHO.requestMarshaller(), StringValue.of("m"),
          Integer.MAX_VALUE, Integer.MAX_VALUE, "test");
    } catch (Exception e) {
      throw new AssertionError(e);
    }
    try {
      FrameEncoder.patchRequest(b, requestId, 0);
      return io.netty.buffer.ByteBufUtil.getBytes(b);
    } finally {
      b.release();
    }
  }

  /**
   * Metadata at the default maxMetadataSize (8 KiB): a block over it, one huge value or many long keys, is refused
   * unread with RESOURCE_EXHAUSTED naming the option (WARN on the server), and the connection goes on; a block
   * just under it, as one entry or as 700, is served (what many entries hold decoded: reliability.md
   * row 19).
   */
  @Test
  void metadataOverTheDefaultLimitIsRefusedNamingItAndTheConnectionGoesOn() throws Exception {
    RpcServer server = startServer();
    try (LogCapture log = new LogCapture(RpcServer.class); RawPeer p = new RawPeer(server.port())) {
      p.send(requestWithMetadata(1, io.petrel.rpc.Metadata.of("big", "x".repeat(9000))));
      assertThat(expectError(p, 1, Status.Code.RESOURCE_EXHAUSTED)).contains("maxMetadataSize 8192")
          .contains("RpcServer.builder().maxMetadataSize");
      assertThat(log.await(ch.qos.logback.classic.Level.WARN, Duration.ofSeconds(10), "maxMetadataSize"))
          .contains("from /127.0.0.1:" + p.socket.getLocalPort());
      java.util.List<io.petrel.rpc.Metadata.Entry> wide = new java.util.ArrayList<>();
      for (int i = 0; i < 40; i++) { // 40 keys of the longest length allowed, 255: over 8 KiB together
        wide.add(new io.petrel.rpc.Metadata.Entry(String.format("%03d", i) + "k".repeat(252), "v", null));
      }
      p.send(requestWithMetadata(2, io.petrel.rpc.Metadata.fromEntries(wide)));
      assertThat(expectError(p, 2, Status.Code.RESOURCE_EXHAUSTED)).contains("maxMetadataSize 8192");
      p.send(requestWithMetadata(3, io.petrel.rpc.Metadata.of("big", "x".repeat(8000))));
      RawPeer.RawFrame one = p.read();
      assertThat(one.status()).as(one.text()).isZero();
      java.util.List<io.petrel.rpc.Metadata.Entry> many = new java.util.ArrayList<>();
      for (int i = 0; i < 700; i++) { // about 7.6 KiB
        many.add(new io.petrel.rpc.Metadata.Entry("k" + i, "", null));
      }
      p.send(requestWithMetadata(4, io.petrel.rpc.Metadata.fromEntries(many)));
      RawPeer.RawFrame thousand = p.read();
      assertThat(thousand.status()).as(thousand.text()).isZero();
    }
  }

  /**
   * What a PING costs the server against what a call costs, from a client that reads its answers: a raw peer
   * keeps {@code WINDOW} PINGs (or ECHO calls) in flight for a bounded time and counts the answers. A PING is a
   * 32-byte PONG written on the event loop, no business thread, no allocation beyond the frame; so a peer that
   * floods PINGs makes the server do less than one that floods calls, which the server already takes from any
   * peer (bounded by maxConcurrentCallsPerConnection and the business pool). Another client is served meanwhile.
   */
  @Test
  void aPingCostsTheServerLessThanACallAndAFloodOfThemLeavesOthersServed() throws Exception {
    RpcServer server = startServer();
    RpcClient other = client(server.port());
    rate(server.port(), true); // warm-up of both paths
    rate(server.port(), false);
    long cpu = serverCpuNanos();
    double[] pings = rate(server.port(), true);
    long pingCpu = serverCpuNanos() - cpu;
    cpu = serverCpuNanos();
    double[] calls = rate(server.port(), false);
    long callCpu = serverCpuNanos() - cpu;
    double nanosPerPing = pingCpu / pings[1];
    double nanosPerCall = callCpu / calls[1];
    System.out.printf("ping-flood: %.0f PONGs/s answered, server CPU %.1f us per PING; %.0f ECHO calls/s answered,"
        + " server CPU %.1f us per call (one raw connection, %d in flight, %d ms each)%n", pings[0],
        nanosPerPing / 1000, calls[0], nanosPerCall / 1000, WINDOW, MEASURE_MILLIS);
    assertThat(pings[1]).isPositive();
    assertThat(calls[1]).isPositive();
    // The claim, with room for noise on a shared machine: a PING costs the server about what a call costs (the
    // frame's read and write dominate both), not more.
    assertThat(nanosPerPing).isLessThan(2 * nanosPerCall);
    // Other clients are served while a peer floods PINGs.
    try (RawPeer flood = new RawPeer(server.port())) {
      byte[] batch = pings(WINDOW);
      flood.send(batch);
      assertThat(other.unaryCall(TestService.ECHO, StringValue.of("served")).getValue()).isEqualTo("served");
      for (int i = 0; i < WINDOW; i++) {
        assertThat(flood.read().type()).isEqualTo(TYPE_PONG);
      }
    }
  }

  /**
   * A peer that floods PINGs and reads none of the PONGs cannot make the server queue them without bound: once
   * the PONGs fill the connection's write buffer (high water mark) the server stops reading that peer, so the
   * peer's writes stop; the server's direct memory stays where it was; the peer is disconnected once it has
   * been unwritable for unwritableTimeout (1 s here, 30 s by default); another client is served meanwhile.
   */
  @Test
  void aPeerThatFloodsPingsAndReadsNothingIsNoLongerReadAndThenDisconnected() throws Exception {
    RpcServer server = startServer(b -> b.unwritableTimeout(Duration.ofSeconds(1)));
    RpcClient other = client(server.port());
    assertThat(other.unaryCall(TestService.ECHO, StringValue.of("warm")).getValue()).isEqualTo("warm");
    long directBefore = io.netty.buffer.PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory();
    long limit = 512L * 1024 * 1024; // 16 million PINGs: far more than any socket buffers hold
    long written = 0;
    try (java.nio.channels.SocketChannel ch = java.nio.channels.SocketChannel.open();
        java.nio.channels.Selector selector = java.nio.channels.Selector.open()) {
      ch.setOption(java.net.StandardSocketOptions.SO_RCVBUF, 4096);
      ch.connect(new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), server.port()));
      ch.configureBlocking(false);
      java.nio.channels.SelectionKey key = ch.register(selector, java.nio.channels.SelectionKey.OP_WRITE);
      java.nio.ByteBuffer chunk = java.nio.ByteBuffer.wrap(pings(2048)); // 64 KiB of PINGs
      boolean stalled = false;
      long stalledAt = 0;
      while (written < limit) {
        if (!chunk.hasRemaining()) {
          chunk.rewind();
        }
        int n = ch.write(chunk);
        written += n;
        if (n == 0) {
          // The kernel's buffers are full: the server has stopped reading, unless it reads again within 2 s.
          stalledAt = System.nanoTime();
          if (selector.select(2_000) == 0) {
            stalled = true;
            break;
          }
          selector.selectedKeys().clear();
        }
      }
      System.out.printf("ping-flood-unread: the server stopped reading after %d KiB of PINGs (%d PINGs)%n",
          written / 1024, written / HEADER_SIZE);
      assertThat(stalled).as("the server still read after %d bytes of PINGs", written).isTrue();
      long directDuring = io.netty.buffer.PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory();
      assertThat(directDuring - directBefore).isLessThanOrEqualTo(16L * 1024 * 1024); // at most one more chunk
      assertThat(other.unaryCall(TestService.ECHO, StringValue.of("served")).getValue()).isEqualTo("served");
      // Disconnected after unwritableTimeout, without the peer reading anything (reading would drain the PONGs
      // and let the server read again): the server closes with the PINGs unread, so the kernel resets the
      // connection, and the peer's next write fails.
      // While the kernel still takes PONGs into its growing send buffer (loopback autotuning, up to tcp_wmem's
      // maximum: kernel memory, not the JVM's), the connection turns writable now and then, the server reads some
      // more PINGs and the timeout starts again: so the close comes after seconds more than unwritableTimeout.
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(45);
      IOException closed = null;
      while (closed == null && System.nanoTime() < deadline) {
        selector.select(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
        selector.selectedKeys().clear();
        try {
          if (!chunk.hasRemaining()) {
            chunk.rewind();
          }
          written += ch.write(chunk);
        } catch (IOException e) {
          closed = e;
        }
      }
      assertThat(closed).as("the peer was still connected 45 s after it stopped being read").isNotNull();
      System.out.printf("ping-flood-unread: disconnected %d ms after the server stopped reading (%s)%n",
          TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stalledAt), closed.getMessage());
    }
    assertThat(other.unaryCall(TestService.ECHO, StringValue.of("after")).getValue()).isEqualTo("after");
  }

  /** CPU time used so far by the server's threads (event loops and business pool), all of them named so. */
  private static long serverCpuNanos() {
    java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
    long sum = 0;
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().startsWith("petrel-server")) {
        long c = mx.getThreadCpuTime(t.getId());
        sum += Math.max(0, c);
      }
    }
    return sum;
  }

  private static final int WINDOW = 256;
  private static final long MEASURE_MILLIS = 1000;

  private static byte[] pings(int n) {
    byte[] one = RawPeer.control(TYPE_PING, 7);
    byte[] all = new byte[one.length * n];
    for (int i = 0; i < n; i++) {
      System.arraycopy(one, 0, all, i * one.length, one.length);
    }
    return all;
  }

  /**
   * Answers per second, and answers, to a raw peer that keeps WINDOW PINGs (or ECHO calls) in flight for MEASURE_MILLIS: a
   * writer thread sends a frame for each place the reader frees, the reader counts answers (buffered reads).
   */
  private static double[] rate(int port, boolean ping) throws Exception {
    try (java.net.Socket s = new java.net.Socket(java.net.InetAddress.getLoopbackAddress(), port)) {
      s.setTcpNoDelay(true);
      s.setSoTimeout(15_000);
      java.util.concurrent.Semaphore places = new java.util.concurrent.Semaphore(WINDOW);
      long start = System.nanoTime();
      long until = start + TimeUnit.MILLISECONDS.toNanos(MEASURE_MILLIS);
      AtomicInteger sent = new AtomicInteger();
      Thread writer = new Thread(() -> {
        try {
          java.io.OutputStream out = s.getOutputStream();
          int id = 1;
          while (System.nanoTime() < until) {
            int n = places.drainPermits();
            if (n == 0) {
              if (places.tryAcquire(10, TimeUnit.MILLISECONDS)) {
                n = 1;
              } else {
                continue;
              }
            }
            ByteArrayOutputStream batch = new ByteArrayOutputStream();
            for (int i = 0; i < n; i++) {
              batch.write(ping ? RawPeer.control(TYPE_PING, id)
                  : RawPeer.request(TestService.ECHO, id, 0, StringValue.of("c")));
              id++;
            }
            out.write(batch.toByteArray());
            out.flush();
            sent.addAndGet(n);
          }
        } catch (Exception e) {
          throw new AssertionError(e);
        }
      }, "rate-writer");
      writer.start();
      java.io.DataInputStream in = new java.io.DataInputStream(new java.io.BufferedInputStream(s.getInputStream()));
      long answered = 0;
      while (writer.isAlive() || answered < sent.get()) {
        int length = in.readInt();
        byte[] rest = new byte[length];
        in.readFully(rest);
        int type = rest[OFF_TYPE - 4];
        if (type == TYPE_SETTINGS) {
          continue;
        }
        assertThat(type).isEqualTo(ping ? TYPE_PONG : TYPE_RESPONSE);
        answered++;
        places.release();
      }
      writer.join(5_000);
      return new double[] {answered / ((System.nanoTime() - start) / 1e9), answered};
    }
  }
}
