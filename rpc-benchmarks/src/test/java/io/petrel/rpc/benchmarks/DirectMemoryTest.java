package io.petrel.rpc.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * {@link ControlServer#directMemory()} (the "direct" columns of the idle-connection table) counts a pool's new
 * chunk once, for Petrel's Netty and for gRPC-java's shaded one, whichever way each allocates it.
 */
class DirectMemoryTest {
  @Test
  void aNewChunkOfPetrelsNettyIsCountedOnce() {
    io.netty.buffer.PooledByteBufAllocator alloc = new io.netty.buffer.PooledByteBufAllocator(true);
    long chunk = alloc.metric().chunkSize();
    long before = ControlServer.directMemory();
    io.netty.buffer.ByteBuf buf = alloc.directBuffer(100); // a fresh allocator: its first buffer takes a chunk
    try {
      long grown = ControlServer.directMemory() - before;
      assertThat(grown).as("growth for one chunk of %d bytes", chunk).isBetween(chunk, chunk + chunk / 4);
    } finally {
      buf.release();
    }
  }

  @Test
  void aNewChunkOfGrpcsNettyIsCountedOnce() {
    io.grpc.netty.shaded.io.netty.buffer.PooledByteBufAllocator alloc =
        new io.grpc.netty.shaded.io.netty.buffer.PooledByteBufAllocator(true);
    long chunk = alloc.metric().chunkSize();
    long before = ControlServer.directMemory();
    io.grpc.netty.shaded.io.netty.buffer.ByteBuf buf = alloc.directBuffer(100);
    try {
      long grown = ControlServer.directMemory() - before;
      assertThat(grown).as("growth for one chunk of %d bytes", chunk).isBetween(chunk, chunk + chunk / 4);
    } finally {
      buf.release();
    }
  }
}
