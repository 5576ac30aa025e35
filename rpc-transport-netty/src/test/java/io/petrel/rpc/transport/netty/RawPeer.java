package io.petrel.rpc.transport.netty;

import static io.petrel.rpc.transport.netty.Protocol.*;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.MethodDescriptor;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;

/**
 * A hand-driven Petrel peer on a plain socket, for tests that play a client (or server) that misbehaves:
 * it writes exactly the bytes it is told to and reads frames only when asked.
 *
 * <p>As a client, {@link #read()} passes over the server's SETTINGS, its first frame, and keeps it in
 * {@link #settings()}; {@link #readRaw()} returns every frame as it comes.
 */
final class RawPeer implements AutoCloseable {
  final Socket socket;
  private final OutputStream out;
  private final DataInputStream in;
  /** No frame has been read yet. */
  private boolean first = true;
  private RawFrame settings;

  /** A frame as read off the wire. */
  record RawFrame(int type, int status, int requestId, int methodId, byte[] body, int flags) {
    String text() {
      return new String(body, StandardCharsets.UTF_8);
    }

    /** The entries of a SETTINGS body: id to value, in order. */
    java.util.Map<Integer, Long> settings() {
      java.util.Map<Integer, Long> m = new java.util.LinkedHashMap<>();
      ByteBuf b = Unpooled.wrappedBuffer(body);
      while (b.readableBytes() >= SETTINGS_ENTRY_SIZE) {
        m.put(b.readUnsignedShort(), b.readUnsignedInt());
      }
      return m;
    }
  }

  /** Wraps a socket accepted by a test playing a server. */
  RawPeer(Socket accepted) throws IOException {
    socket = accepted;
    socket.setSoTimeout(15_000);
    out = socket.getOutputStream();
    in = new DataInputStream(socket.getInputStream());
  }

  /** Connects to 127.0.0.1:{@code port}; {@code receiveBuffer} > 0 sets SO_RCVBUF before connecting. */
  RawPeer(int port, int receiveBuffer) throws IOException {
    this(port, receiveBuffer, null);
  }

  RawPeer(int port, int receiveBuffer, InetAddress from) throws IOException {
    socket = new Socket();
    if (receiveBuffer > 0) {
      socket.setReceiveBufferSize(receiveBuffer);
    }
    if (from != null) {
      socket.bind(new InetSocketAddress(from, 0));
    }
    socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 5000);
    socket.setSoTimeout(15_000);
    out = socket.getOutputStream();
    in = new DataInputStream(socket.getInputStream());
  }

  RawPeer(int port) throws IOException {
    this(port, 0);
  }

  /** The encoded request frame of {@code method} with the given id and timeout (0 = none). */
  static <T> byte[] request(MethodDescriptor<T, ?> method, int requestId, long timeoutMillis, T value) {
    try {
      ByteBuf b = FrameEncoder.encodeMessage(io.netty.buffer.UnpooledByteBufAllocator.DEFAULT, TYPE_REQUEST, 0, method.id(), 0, Metadata.EMPTY,
          method.requestMarshaller(), value, Integer.MAX_VALUE, Integer.MAX_VALUE, "test");
      try {
        FrameEncoder.patchRequest(b, requestId, timeoutMillis);
        byte[] bytes = new byte[b.readableBytes()];
        b.readBytes(bytes);
        return bytes;
      } finally {
        b.release();
      }
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  /** The 32-byte header of a frame that declares {@code bodyLength} body bytes (which are not included). */
  static byte[] header(byte type, int requestId, int methodId, int bodyLength) {
    ByteBuf b = Unpooled.buffer(HEADER_SIZE);
    b.writeInt(MIN_LENGTH + bodyLength);
    b.writeShort(MAGIC);
    b.writeByte(VERSION);
    b.writeByte(type);
    b.writeByte(0);
    b.writeByte(0);
    b.writeShort(0);
    b.writeInt(requestId);
    b.writeInt(methodId);
    b.writeInt(0);
    b.writeInt(0);
    b.writeInt(bodyLength);
    byte[] bytes = new byte[HEADER_SIZE];
    b.readBytes(bytes);
    b.release();
    return bytes;
  }

  static byte[] control(byte type, int requestId) {
    return header(type, requestId, 0, 0);
  }

  /** A whole frame: the header of {@link #header} followed by {@code body}. */
  static byte[] frame(byte type, int requestId, byte[] body) {
    byte[] f = java.util.Arrays.copyOf(header(type, requestId, 0, body.length), HEADER_SIZE + body.length);
    System.arraycopy(body, 0, f, HEADER_SIZE, body.length);
    return f;
  }

  /** An OK RESPONSE carrying {@code body}. */
  static byte[] response(int requestId, byte[] body) {
    return frame(TYPE_RESPONSE, requestId, body);
  }

  /** A SETTINGS frame of (id, value) pairs. */
  static byte[] settingsFrame(int... idValuePairs) {
    ByteBuf b = FrameEncoder.encodeSettings(io.netty.buffer.UnpooledByteBufAllocator.DEFAULT, idValuePairs);
    try {
      return io.netty.buffer.ByteBufUtil.getBytes(b);
    } finally {
      b.release();
    }
  }

  void send(byte[] bytes) throws IOException {
    out.write(bytes);
    out.flush();
  }

  /**
   * Reads the next frame, passing over the server's SETTINGS if it is the first one (see {@link #settings()});
   * throws EOFException if the peer closed the connection.
   */
  RawFrame read() throws IOException {
    if (first) {
      RawFrame f = readRaw();
      if (f.type() != TYPE_SETTINGS) {
        return f;
      }
      settings = f;
    }
    return readRaw();
  }

  /** The SETTINGS frame {@link #read()} passed over, or null. */
  RawFrame settings() {
    return settings;
  }

  /**
   * The next REQUEST the client sends, past its PINGs (each new connection sends one); throws IllegalStateException
   * on any other frame.
   */
  RawFrame nextRequest() throws IOException {
    while (true) {
      RawFrame f = readRaw();
      if (f.type() == TYPE_REQUEST) {
        return f;
      }
      if (f.type() != TYPE_PING) {
        throw new IllegalStateException("only PINGs besides requests were expected, got frame type " + f.type());
      }
    }
  }

  /** Reads the next frame, whatever it is; throws EOFException if the peer closed the connection. */
  RawFrame readRaw() throws IOException {
    first = false;
    int length = in.readInt();
    byte[] rest = new byte[length];
    in.readFully(rest);
    ByteBuf b = Unpooled.wrappedBuffer(rest);
    int type = b.getByte(OFF_TYPE - 4);
    int flags = b.getUnsignedByte(OFF_FLAGS - 4);
    int status = b.getUnsignedByte(OFF_STATUS - 4);
    int requestId = b.getInt(OFF_REQUEST_ID - 4);
    int methodId = b.getInt(OFF_METHOD_ID - 4);
    int metaLen = b.getInt(OFF_METADATA_LENGTH - 4);
    int bodyLen = b.getInt(OFF_BODY_LENGTH - 4);
    byte[] body = new byte[bodyLen];
    b.getBytes(MIN_LENGTH + metaLen, body);
    return new RawFrame(type, status, requestId, methodId, body, flags);
  }

  /**
   * Reads frames until the peer closes the connection (or resets it); returns the types seen. Fails with
   * SocketTimeoutException if it is still open after the socket's timeout.
   */
  java.util.List<Integer> readUntilClosed() throws IOException {
    java.util.List<Integer> types = new java.util.ArrayList<>();
    try {
      for (;;) {
        types.add(read().type());
      }
    } catch (EOFException | SocketException closed) {
      return types;
    }
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
