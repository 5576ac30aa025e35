package io.petrel.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.util.concurrent.FastThreadLocalThread;
import io.petrel.rpc.marshal.Marshallers;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class DeadlineTest {
  @Test
  void deadlineFromAClockReadingCountsFromThatReading() {
    long now = System.nanoTime();
    Deadline past = Deadline.afterNanos(1_000_000, now - TimeUnit.SECONDS.toNanos(1));
    assertThat(past.isExpired()).isTrue();
    assertThat(past.remaining(TimeUnit.MILLISECONDS)).isLessThanOrEqualTo(-999);
    Deadline later = Deadline.afterNanos(TimeUnit.SECONDS.toNanos(10), now);
    assertThat(later.remaining(TimeUnit.SECONDS)).isBetween(8L, 10L);
    assertThat(Deadline.afterNanos(5, now)).isEqualTo(Deadline.afterNanos(5, now));
    assertThat(past.minimum(later)).isSameAs(past);
    assertThat(later.minimum(null)).isSameAs(later);
  }

  @Test
  void aHugeTimeoutSaturatesInsteadOfWrappingIntoThePast() {
    Deadline d = Deadline.afterNanos(Long.MAX_VALUE, System.nanoTime());
    assertThat(d.isExpired()).isFalse();
    assertThat(d.remaining(TimeUnit.DAYS)).isGreaterThan(365);
  }

  @Test
  void serverContextIsRestoredOnPlainAndNettyThreads() throws Exception {
    Runnable check = () -> {
      ServerContext outer = context();
      ServerContext inner = context();
      assertThat(ServerContext.current()).isNull();
      ServerContext none = outer.attach();
      ServerContext prev = inner.attach();
      assertThat(prev).isSameAs(outer);
      assertThat(ServerContext.current()).isSameAs(inner);
      ServerContext.restore(prev);
      assertThat(ServerContext.current()).isSameAs(outer);
      ServerContext.restore(none);
      assertThat(ServerContext.current()).isNull();
    };
    check.run();
    CompletableFuture<Throwable> onNetty = new CompletableFuture<>();
    Thread t = new FastThreadLocalThread(() -> {
      try {
        check.run();
        onNetty.complete(null);
      } catch (Throwable e) {
        onNetty.complete(e);
      }
    });
    t.start();
    assertThat(onNetty.get(10, TimeUnit.SECONDS)).isNull();
  }

  private static ServerContext context() {
    MethodDescriptor<byte[], byte[]> m = MethodDescriptor.<byte[], byte[]>newBuilder()
        .serviceName("test.Svc").methodName("m").requestMarshaller(Marshallers.bytes())
        .responseMarshaller(Marshallers.bytes()).build();
    return new ServerContext(m, Metadata.EMPTY, null, new InetSocketAddress("127.0.0.1", 1), 0, System.nanoTime());
  }
}
