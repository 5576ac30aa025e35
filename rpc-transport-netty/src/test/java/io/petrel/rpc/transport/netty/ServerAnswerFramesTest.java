package io.petrel.rpc.transport.netty;

import static io.petrel.rpc.transport.netty.Protocol.*;
import static java.nio.charset.StandardCharsets.US_ASCII;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.StringValue;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.petrel.rpc.ExceptionDetails;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServerInterceptor;
import java.io.DataInputStream;
import java.io.IOException;
import java.util.Arrays;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * How the core's server call contract (docs/protocol.md, "Flags and streams") reaches the wire: a REQUEST is
 * one message and the end of the client's stream, whatever its reserved flags; a unary answer, one message with
 * the end marker, is one RESPONSE with status 0 and flags 0, its headers in the metadata section; an error is
 * the status alone, in one RESPONSE; a oneway gets nothing. Checked against bytes written from the
 * specification, on both server paths: handlers on the event loop (the read batch) and on the business pool.
 */
class ServerAnswerFramesTest extends TransportFixture {
  /** Adds response metadata to every call, so that the answer's headers are not empty. */
  private static final ServerInterceptor SERVED = new ServerInterceptor() {
    @Override
    public <Req, Resp> CompletionStage<Resp> intercept(Chain<Req, Resp> chain) throws Exception {
      chain.context().addResponseMetadata("x-served", "yes");
      return chain.proceed();
    }
  };

  /** The metadata section of {@code x-served: yes}, as the specification lays it out. */
  private static final byte[] SERVED_METADATA = concat(new byte[] {0, 8}, "x-served".getBytes(US_ASCII),
      new byte[] {0, 0, 0, 0, 3}, "yes".getBytes(US_ASCII));

  @ParameterizedTest(name = "direct = {0}")
  @ValueSource(booleans = {true, false})
  void aUnaryAnswerIsOneResponseFrameWithFlagsZeroAndTheHeadersAsMetadata(boolean direct) throws Exception {
    RpcServer server = startServer(b -> (direct ? b.directExecutor() : b).intercept(SERVED));
    try (RawPeer peer = new RawPeer(server.port())) {
      DataInputStream in = new DataInputStream(peer.socket.getInputStream());
      byte[] body = {1, 2, 3};
      peer.send(RawPeer.request(TestService.BYTES, 7, 0, body));

      assertThat(nextFrame(in)).isEqualTo(frame(TYPE_RESPONSE, 0, 7, SERVED_METADATA, body));
    }
  }

  @ParameterizedTest(name = "flags = {0}")
  @ValueSource(ints = {0x01, 0x02, 0x80})
  void aRequestIsOneMessageAndTheEndWhateverItsReservedFlags(int flags) throws Exception {
    RpcServer server = startServer(b -> b.intercept(SERVED));
    try (RawPeer peer = new RawPeer(server.port())) {
      DataInputStream in = new DataInputStream(peer.socket.getInputStream());
      byte[] request = RawPeer.request(TestService.BYTES, 9, 0, new byte[] {4, 5});
      request[OFF_FLAGS] = (byte) flags; // this server announces no STREAMS: a v1 receiver ignores the bits
      peer.send(request);

      assertThat(nextFrame(in)).isEqualTo(frame(TYPE_RESPONSE, 0, 9, SERVED_METADATA, new byte[] {4, 5}));
    }
  }

  @ParameterizedTest(name = "direct = {0}")
  @ValueSource(booleans = {true, false})
  void anErrorIsTheStatusAloneInOneResponseFrame(boolean direct) throws Exception {
    // exceptionDetails(ALL): FAIL does not declare its exception, whose class and message are sent only with ALL.
    RpcServer server = startServer(b -> (direct ? b.directExecutor() : b).intercept(SERVED)
        .exceptionDetails(ExceptionDetails.ALL));
    try (RawPeer peer = new RawPeer(server.port())) {
      DataInputStream in = new DataInputStream(peer.socket.getInputStream());
      peer.send(RawPeer.request(TestService.FAIL, 11, 0, StringValue.of("x")));

      byte[] description = "java.lang.IllegalStateException: boom: x".getBytes(UTF_8);
      // status 2 is UNKNOWN: the handler threw an exception that is not a StatusException; after the handler's
      // response metadata come the exception's class names and message (docs/protocol.md, "Error metadata")
      byte[] metadata = concat(SERVED_METADATA, concat(
          stringEntry("petrel-exception-class", "java.lang.IllegalStateException"),
          stringEntry("petrel-exception-message", "boom: x")));
      assertThat(nextFrame(in)).isEqualTo(frame(TYPE_RESPONSE, 2, 11, metadata, description));
    }
  }

  /**
   * By default (exceptionDetails DECLARED) an exception the method does not declare sends, on the wire, the
   * handler's response metadata alone and a description that names neither its class nor its message.
   */
  @ParameterizedTest(name = "direct = {0}")
  @ValueSource(booleans = {true, false})
  void anUndeclaredExceptionsClassAndMessageAreNotOnTheWire(boolean direct) throws Exception {
    RpcServer server = startServer(b -> (direct ? b.directExecutor() : b).intercept(SERVED));
    try (RawPeer peer = new RawPeer(server.port())) {
      DataInputStream in = new DataInputStream(peer.socket.getInputStream());
      peer.send(RawPeer.request(TestService.FAIL, 11, 0, StringValue.of("x")));

      byte[] description = (TestService.FAIL.fullName() + " failed on the server: its handler threw an exception"
          + " the method does not declare (the server logs it; declare it on the method, map it with"
          + " RpcServer.builder().exceptionMapper, or let the server send it with exceptionDetails(ALL))")
          .getBytes(UTF_8);
      assertThat(nextFrame(in)).isEqualTo(frame(TYPE_RESPONSE, 2, 11, SERVED_METADATA, description));
    }
  }

  @ParameterizedTest(name = "direct = {0}")
  @ValueSource(booleans = {true, false})
  void aOnewayCallIsAnsweredWithNothing(boolean direct) throws Exception {
    RpcServer server = startServer(b -> direct ? b.directExecutor() : b);
    try (RawPeer peer = new RawPeer(server.port())) {
      DataInputStream in = new DataInputStream(peer.socket.getInputStream());
      byte[] oneway = RawPeer.request(TestService.LOG, 0, 0, StringValue.of("fire"));
      oneway[OFF_TYPE] = TYPE_ONEWAY;
      peer.send(oneway);
      assertThat(service.logged.poll(10, TimeUnit.SECONDS)).isEqualTo("fire");
      peer.send(RawPeer.control(TYPE_PING, 3)); // the handler has ended: anything it sent is before the PONG

      assertThat(nextFrame(in)).isEqualTo(frame(TYPE_PONG, 0, 3, new byte[0], new byte[0]));
    }
  }

  /** The next frame's bytes, past the server's SETTINGS. */
  private static byte[] nextFrame(DataInputStream in) throws IOException {
    for (;;) {
      int length = in.readInt();
      byte[] f = new byte[LENGTH_FIELD_SIZE + length];
      Unpooled.wrappedBuffer(f).setInt(0, length);
      in.readFully(f, LENGTH_FIELD_SIZE, length);
      if (f[OFF_TYPE] != TYPE_SETTINGS) {
        return f;
      }
    }
  }

  /** A server frame written field by field from docs/protocol.md: flags, methodId and timeout 0. */
  /** One metadata entry with a string value: key length (2), key, kind 0, value length (4), value. */
  private static byte[] stringEntry(String key, String value) {
    byte[] k = key.getBytes(US_ASCII);
    byte[] v = value.getBytes(UTF_8);
    ByteBuf b = Unpooled.buffer();
    try {
      b.writeShort(k.length).writeBytes(k).writeByte(0).writeInt(v.length).writeBytes(v);
      byte[] out = new byte[b.readableBytes()];
      b.readBytes(out);
      return out;
    } finally {
      b.release();
    }
  }

  private static byte[] frame(byte type, int status, int requestId, byte[] metadata, byte[] body) {
    ByteBuf b = Unpooled.buffer();
    try {
      b.writeInt(28 + metadata.length + body.length);
      b.writeByte('P').writeByte('R');
      b.writeByte(1); // version
      b.writeByte(type);
      b.writeByte(0); // flags: a unary side is one frame with MORE clear; no END_WITH_STATUS outside streams
      b.writeByte(status);
      b.writeShort(0); // reserved
      b.writeInt(requestId);
      b.writeInt(0); // methodId
      b.writeInt(0); // timeout
      b.writeInt(metadata.length);
      b.writeInt(body.length);
      b.writeBytes(metadata).writeBytes(body);
      return ByteBufUtil.getBytes(b);
    } finally {
      b.release();
    }
  }

  private static byte[] concat(byte[]... parts) {
    byte[] all = new byte[0];
    for (byte[] p : parts) {
      int at = all.length;
      all = Arrays.copyOf(all, at + p.length);
      System.arraycopy(p, 0, all, at, p.length);
    }
    return all;
  }
}
