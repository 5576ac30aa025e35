package io.petrel.rpc.transport.netty;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.netty4.NettyAllocatorMetrics;
import io.micrometer.core.instrument.binder.netty4.NettyEventExecutorMetrics;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufAllocatorMetricProvider;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.petrel.rpc.spi.OwnedMeters;
import java.util.Collections;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.function.ToDoubleFunction;

/**
 * The Netty transport's Micrometer meters of one server or client: bytes, connections, event loops, pooled
 * memory (names in docs/observability.md; the call meters are the core's). Created only when the user
 * gave a registry; otherwise the transport holds {@code null} and skips every metrics call.
 */
final class TransportMetrics {
  final MeterRegistry registry;
  final String side;
  final Tags tags;
  final Counter bytesReceived;
  final Counter bytesSent;
  final Counter connectionsOpened;
  final Counter connectionsClosed;
  /** The gauges bound to this side's objects, removed by {@link #close}. */
  private final OwnedMeters owned;

  TransportMetrics(MeterRegistry registry, String side, Tags tags) {
    this.registry = registry;
    this.side = side;
    this.tags = tags;
    this.owned = new OwnedMeters(registry);
    String p = "rpc." + side;
    bytesReceived = Counter.builder(p + ".bytes.received").baseUnit("bytes").description("TCP payload bytes read")
        .tags(tags).register(registry);
    bytesSent = Counter.builder(p + ".bytes.sent").baseUnit("bytes").description("TCP payload bytes written")
        .tags(tags).register(registry);
    connectionsOpened = Counter.builder(p + ".connections.opened").description("Connections opened")
        .tags(tags).register(registry);
    connectionsClosed = Counter.builder(p + ".connections.closed").description("Connections closed")
        .tags(tags).register(registry);
    ByteBufAllocator alloc = IoSupport.ALLOCATOR; // the allocator of Petrel's channels and frames
    if (alloc instanceof ByteBufAllocatorMetricProvider provider && firstInRegistry(registry)) {
      // Micrometer's binder: netty.allocator.* (JVM-wide, so no server or client tag), bound once per registry:
      // binding it again for another server or client of the same registry would find its gauges there, and
      // Micrometer warns of a gauge registered twice.
      new NettyAllocatorMetrics(provider).bindTo(registry);
    }
  }

  /** Registries the allocator's meters are bound to (weakly held: a registry thrown away is not kept). */
  private static final Set<MeterRegistry> ALLOCATOR_BOUND = Collections.newSetFromMap(new WeakHashMap<>());

  /** True the first time for {@code registry}: the caller binds the allocator's meters to it. */
  private static boolean firstInRegistry(MeterRegistry registry) {
    synchronized (ALLOCATOR_BOUND) {
      return ALLOCATOR_BOUND.add(registry);
    }
  }

  <T> void gauge(String name, String description, T obj, ToDoubleFunction<T> f) {
    owned.add(name, tags, () -> Gauge.builder(name, obj, f).description(description).tags(tags).register(registry));
  }

  /** Micrometer's binder: {@code netty.eventexecutor.tasks.pending} per event loop (tag {@code name}, the thread). */
  void eventLoops(EventLoopGroup group) {
    owned.addBound(() -> new NettyEventExecutorMetrics(group, tags).bindTo(registry));
  }

  /**
   * The server or client has stopped: removes its gauges (connections, event loops), which read objects that are
   * gone, so that one started again under the same name in the same registry binds its own (Micrometer would
   * otherwise hand back the old ones). Counters stay: they go on counting.
   */
  void close() {
    owned.close();
  }

  /** Counts received bytes; first in the pipeline, forwards everything. */
  ChannelHandler bytesIn() {
    return new BytesIn(bytesReceived);
  }

  @ChannelHandler.Sharable
  private static final class BytesIn extends ChannelInboundHandlerAdapter {
    private final Counter counter;

    BytesIn(Counter counter) {
      this.counter = counter;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (msg instanceof ByteBuf b) {
        counter.increment(b.readableBytes());
      }
      ctx.fireChannelRead(msg);
    }
  }
}
