package io.petrel.rpc.transport.netty;

import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The event loops every client of this JVM shares by default (one group per I/O flavour, one thread per
 * processor): a service that calls fifty others runs two threads per core for all of them, not fifty groups.
 * Counted: the group starts with its first client and stops when its last client has terminated.
 */
final class SharedEventLoops {
  private static final Map<String, SharedEventLoops> GROUPS = new HashMap<>();

  private final String key;
  private final EventLoopGroup group;
  private int users;

  private SharedEventLoops(String key, EventLoopGroup group) {
    this.key = key;
    this.group = group;
  }

  /** The shared group for {@code io}, counting one more user. */
  static synchronized SharedEventLoops acquire(IoSupport io) {
    SharedEventLoops s = GROUPS.get(io.name);
    if (s == null) {
      s = new SharedEventLoops(io.name, io.newGroup(Runtime.getRuntime().availableProcessors(),
          "petrel-client-" + io.name));
      GROUPS.put(io.name, s);
    }
    s.users++;
    return s;
  }

  EventLoopGroup group() {
    return group;
  }

  /** One user fewer; the last one stops the group. Completes when the group has stopped, or at once. */
  Future<?> release() {
    synchronized (SharedEventLoops.class) {
      if (--users > 0) {
        return GlobalEventExecutor.INSTANCE.newSucceededFuture(null);
      }
      GROUPS.remove(key, this);
    }
    return group.shutdownGracefully(0, 2, TimeUnit.SECONDS);
  }

  /** Users of the group of this I/O flavour now (for tests). */
  static synchronized int users(String ioName) {
    SharedEventLoops s = GROUPS.get(ioName);
    return s == null ? 0 : s.users;
  }
}
