package io.petrel.rpc.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.petrel.rpc.transport.netty.IoMode;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The raw Netty echo answers every frame with the same bytes, both the frames it slices (up to 64 KiB) and the
 * larger ones it copies out, in order, also when many large frames arrive before any reply is read.
 */
@Timeout(60)
class RawNettyServerTest {
  private EventLoopGroup boss;
  private EventLoopGroup workers;
  private RawNettyServer server;
  private final LongAdder calls = new LongAdder();

  @BeforeEach
  void start() throws Exception {
    boss = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("echo-test-boss", true),
        NettyIo.handlerFactory(IoMode.AUTO));
    workers = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("echo-test-worker", true),
        NettyIo.handlerFactory(IoMode.AUTO));
    server = RawNettyServer.start(new InetSocketAddress("127.0.0.1", 0), boss, workers, IoMode.AUTO, calls);
  }

  @AfterEach
  void stop() {
    server.close();
    workers.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    boss.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }

  @Test
  void everyFrameComesBackByteForByteInOrderSlicedOrCopied() throws Exception {
    int[] sizes = {0, 4, 1024, 64 * 1024, 64 * 1024 + 1, 256 * 1024, 1024 * 1024, 3, 1024 * 1024 + 7};
    Random random = new Random(42);
    byte[][] bodies = new byte[sizes.length][];
    for (int i = 0; i < sizes.length; i++) {
      bodies[i] = new byte[sizes[i]];
      random.nextBytes(bodies[i]);
    }
    try (Socket socket = new Socket("127.0.0.1", server.port())) {
      socket.setSoTimeout(30_000);
      DataOutputStream out = new DataOutputStream(socket.getOutputStream());
      DataInputStream in = new DataInputStream(socket.getInputStream());
      // Written by another thread, all at once, so that large frames queue up unread on the server's side
      // while earlier replies wait in its socket (the case that made the echo copy its whole buffer per read).
      Thread writer = new Thread(() -> {
        try {
          for (byte[] body : bodies) {
            out.writeInt(body.length);
            out.write(body);
          }
          out.flush();
        } catch (IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      }, "echo-test-writer");
      writer.start();
      for (byte[] body : bodies) {
        int length = in.readInt();
        assertThat(length).as("length of the reply to a %d-byte body", body.length).isEqualTo(body.length);
        byte[] reply = new byte[length];
        in.readFully(reply);
        assertThat(reply).as("reply to a %d-byte body", body.length).isEqualTo(body);
      }
      writer.join(10_000);
      assertThat(calls.sum()).isEqualTo(bodies.length);
    }
  }
}
