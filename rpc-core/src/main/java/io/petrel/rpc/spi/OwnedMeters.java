package io.petrel.rpc.spi;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The meters one server or client bound to its own objects (gauges, function counters), removed from the registry
 * when it terminates: they read objects that are gone, and one started again under the same name in the same
 * registry binds its own (Micrometer hands back a meter already registered under the same name and tags).
 *
 * <p>Only meters this instance registered first are its own: when another live server or client of the same name
 * holds them (the defaults {@code petrel-server}, {@code petrel-client} are easy to share), they stay its, and are
 * neither taken over nor removed here. A meter is removed only if the registry still holds that very meter.
 */
public final class OwnedMeters {
  private static final Logger log = LoggerFactory.getLogger(OwnedMeters.class);

  private final MeterRegistry registry;
  private final List<Meter> owned = new CopyOnWriteArrayList<>();

  public OwnedMeters(MeterRegistry registry) {
    this.registry = registry;
  }

  /**
   * Registers a meter with {@code register} and keeps it as this instance's if none of that name and those tags
   * was registered before; returns what the registry gave.
   */
  public <M extends Meter> M add(String name, Iterable<Tag> tags, Supplier<M> register) {
    Meter before = registry.find(name).tags(tags).meter();
    M m = register.get();
    if (before == null) {
      owned.add(m);
    }
    return m;
  }

  /** Runs {@code bind} (a Micrometer binder) and keeps as this instance's the meters it added to the registry. */
  public void addBound(Runnable bind) {
    Set<Meter> before = Collections.newSetFromMap(new IdentityHashMap<>());
    before.addAll(registry.getMeters());
    bind.run();
    for (Meter m : registry.getMeters()) {
      if (!before.contains(m)) {
        owned.add(m);
      }
    }
  }

  /**
   * The server or client has terminated: removes its own meters that the registry still holds, each on its own (a
   * registry listener that throws is logged, and the rest are removed all the same).
   */
  public void close() {
    for (Meter m : owned) {
      try {
        Meter now = registry.find(m.getId().getName()).tags(m.getId().getTags()).meter();
        if (now == m) {
          registry.remove(m);
        }
      } catch (RuntimeException e) {
        log.warn("removing the meter {} failed", m.getId(), e);
      }
    }
    owned.clear();
  }
}
