package io.petrel.rpc.internal.inprocess;

import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/** The in-process servers of this JVM by name: a name is taken from a server's start to its release. */
final class InProcessRegistry {
  private static final ConcurrentHashMap<String, InProcessServerTransport> SERVERS = new ConcurrentHashMap<>();

  private InProcessRegistry() {}

  /** Takes the name; false if a live server has it. */
  static boolean register(String name, InProcessServerTransport server) {
    return SERVERS.putIfAbsent(name, server) == null;
  }

  /** Frees the name, if {@code server} holds it. */
  static void unregister(String name, InProcessServerTransport server) {
    SERVERS.remove(name, server);
  }

  static @Nullable InProcessServerTransport lookup(String name) {
    return SERVERS.get(name);
  }
}
