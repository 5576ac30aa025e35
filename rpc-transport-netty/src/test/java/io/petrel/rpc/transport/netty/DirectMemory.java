package io.petrel.rpc.transport.netty;

import io.netty.util.internal.PlatformDependent;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;

/**
 * Direct memory in use by this JVM, each byte counted once: the JDK's direct buffers, plus Netty's own count
 * only when Netty allocates without cleaners. On Java 17 without {@code --add-opens} Netty 4.2 allocates its
 * pools' chunks through {@code ByteBuffer.allocateDirect}, which the JDK counts, and counts them again itself:
 * adding both reads a 4 MiB chunk as 8 MiB.
 */
final class DirectMemory {
  private DirectMemory() {}

  static long used() {
    long jdk = 0;
    for (BufferPoolMXBean b : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
      if (b.getName().equals("direct")) {
        jdk = b.getMemoryUsed();
      }
    }
    return jdk + (PlatformDependent.useDirectBufferNoCleaner() ? Math.max(0, PlatformDependent.usedDirectMemory()) : 0);
  }
}
