package io.petrel.rpc.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.Test;

/** Proves that the leak check can fail: a deliberately leaked buffer is reported. */
class LeakDetectionExtensionTest {
  @Test
  void aLeakedBufferIsReported() throws Exception {
    leak();
    for (int i = 0; i < 50 && LeakDetectionExtension.leaks().isEmpty(); i++) {
      System.gc();
      for (int j = 0; j < 100; j++) {
        PooledByteBufAllocator.DEFAULT.directBuffer(8).release();
      }
    }
    assertThat(LeakDetectionExtension.leaks()).isNotEmpty();
    assertThat(LeakDetectionExtension.leaks().get(0)).contains("LEAK of ByteBuf");
    LeakDetectionExtension.clearAfterSelfTest();
  }

  private static void leak() {
    ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(16);
    b.writeInt(1);
    // no release: the reference is dropped here
  }
}
