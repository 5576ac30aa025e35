package io.petrel.rpc.spi;

import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;
import org.jspecify.annotations.Nullable;

/** Finds {@link TransportProvider}s; looked up once per builder, never per call. */
public final class Transports {
  private Transports() {}

  /**
   * The named provider, or the highest-priority one when {@code name} is null. A provider with a negative
   * priority (a test double) is used only when named.
   */
  public static TransportProvider find(@Nullable String name) {
    List<TransportProvider> all = new ArrayList<>();
    for (TransportProvider p : ServiceLoader.load(TransportProvider.class, Transports.class.getClassLoader())) {
      all.add(p);
    }
    TransportProvider best = null;
    for (TransportProvider p : all) {
      if (name != null) {
        if (p.name().equals(name)) {
          return p;
        }
      } else if (p.priority() >= 0 && (best == null || p.priority() > best.priority())) {
        best = p;
      }
    }
    if (name == null && best == null) {
      throw new IllegalStateException(
          "no Petrel transport on the class path; add the dependency io.petrel:rpc-transport-netty");
    }
    if (best == null) {
      List<String> names = new ArrayList<>();
      all.forEach(p -> names.add(p.name()));
      throw new IllegalStateException("no Petrel transport named '" + name + "'; available: " + names);
    }
    return best;
  }
}
