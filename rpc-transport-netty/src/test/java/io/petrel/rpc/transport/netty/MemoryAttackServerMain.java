package io.petrel.rpc.transport.netty;

import io.petrel.rpc.RpcServer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.management.NotificationEmitter;
import javax.management.openmbean.CompositeData;

/**
 * The child process of {@link MemoryAttackTest}: a Petrel server with default options on 127.0.0.1 (free port),
 * started with a small heap. It prints {@value #READY} with its port, its buffer limits and its memory at rest;
 * a line {@code CONN open=N} each time its number of open connections changes; and on {@code MEM} from standard
 * input the peaks of its live heap (after a full collection, every 500 ms), of its direct memory, and of its heap
 * after each collection (young collections included, so old garbage counts there). It shuts down when standard input
 * closes and exits 0 if it terminated; if the server stops by itself (after a fatal error) it exits 3.
 */
public final class MemoryAttackServerMain {
  static final String READY = "memory-attack-server ready";
  private static final AtomicLong peakHeapAfterGc = new AtomicLong();
  private static final AtomicLong peakDirect = new AtomicLong();
  /** Standard input closed: the stop that follows is the one asked for, not the server's own. */
  private static volatile boolean stopAsked;
  /** Heap in use right after a full collection, sampled every 500 ms: what the server really holds. */
  private static final AtomicLong peakLiveHeap = new AtomicLong();

  private MemoryAttackServerMain() {}

  public static void main(String[] args) throws Exception {
    Thread.setDefaultUncaughtExceptionHandler((t, e) -> System.out.println("UNCAUGHT in " + t.getName() + ": " + e));
    RpcServer server = RpcServer.builder()
        .bindAddress("127.0.0.1", 0)
        .addService(new TestService().definition())
        .name("attacked")
        .build()
        .start();
    NettyServerTransport transport = (NettyServerTransport) ((io.petrel.rpc.internal.ServerImpl) server).transport();
    watchCollections();
    System.gc();
    long heapAtRest = heapUsed();
    long directAtRest = direct();
    peakHeapAfterGc.set(0);
    Thread sampler = new Thread(() -> {
      int last = -1;
      while (true) {
        peakDirect.accumulateAndGet(direct(), Math::max);
        int open = transport.openConnections();
        if (open != last) {
          last = open;
          System.out.println("CONN open=" + open);
        }
        try {
          TimeUnit.MILLISECONDS.sleep(5);
        } catch (InterruptedException e) {
          return;
        }
      }
    }, "memory-sampler");
    sampler.setDaemon(true);
    sampler.start();
    Thread live = new Thread(() -> {
      while (true) {
        System.gc();
        peakLiveHeap.accumulateAndGet(heapUsed(), Math::max);
        try {
          TimeUnit.MILLISECONDS.sleep(500);
        } catch (InterruptedException e) {
          return;
        }
      }
    }, "live-heap-sampler");
    live.setDaemon(true);
    live.start();
    System.out.println(READY + " port=" + server.port() + " maxBufferedBytes="
        + transport.config().limits().maxBufferedBytes() + " perConnection="
        + transport.config().limits().maxBufferedBytesPerConnection() + " heapAtRest=" + heapAtRest
        + " directAtRest=" + directAtRest + " maxHeap=" + Runtime.getRuntime().maxMemory());
    System.out.flush();
    Thread stopWatch = new Thread(() -> {
      try {
        server.awaitTermination(365, TimeUnit.DAYS);
        if (stopAsked) {
          return;
        }
        System.out.println("memory-attack-server terminated by itself");
        System.out.flush();
        System.exit(3);
      } catch (InterruptedException e) {
        // the JVM is ending
      }
    }, "stop-watch");
    stopWatch.setDaemon(true);
    stopWatch.start();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
    String line;
    while ((line = in.readLine()) != null) {
      if (line.trim().equals("MEM")) {
        System.out.println("MEM peakLiveHeap=" + peakLiveHeap.get() + " peakDirect=" + peakDirect.get()
            + " peakHeapAfterGc=" + peakHeapAfterGc.get());
        System.out.flush();
      }
    }
    stopAsked = true;
    server.shutdownNow();
    boolean done = server.awaitTermination(20, TimeUnit.SECONDS);
    System.out.println("memory-attack-server stopped, terminated=" + done);
    System.out.flush();
    System.exit(done ? 0 : 1);
  }

  /** Heap in use after each collection (what survived it), summed over the heap's pools: its peak. */
  private static void watchCollections() {
    Set<String> heapPools = new HashSet<>();
    for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
      if (p.getType() == MemoryType.HEAP) {
        heapPools.add(p.getName());
      }
    }
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      ((NotificationEmitter) gc).addNotificationListener((n, handback) -> {
        if (!"com.sun.management.gc.notification".equals(n.getType())) {
          return;
        }
        CompositeData info = (CompositeData) ((CompositeData) n.getUserData()).get("gcInfo");
        long after = 0;
        for (Object row : ((javax.management.openmbean.TabularData) info.get("memoryUsageAfterGc")).values()) {
          CompositeData entry = (CompositeData) row;
          if (heapPools.contains((String) entry.get("key"))) {
            after += MemoryUsage.from((CompositeData) entry.get("value")).getUsed();
          }
        }
        peakHeapAfterGc.accumulateAndGet(after, Math::max);
      }, null, null);
    }
  }

  private static long heapUsed() {
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  /** Direct memory in use, each byte counted once ({@link DirectMemory}). */
  private static long direct() {
    return DirectMemory.used();
  }
}
