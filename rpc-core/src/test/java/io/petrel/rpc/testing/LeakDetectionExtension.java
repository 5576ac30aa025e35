package io.petrel.rpc.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test class when Netty reports a leaked buffer while it ran. Registered for every test class by
 * JUnit's extension auto-detection (META-INF/services plus {@code junit-platform.properties}); tests run with
 * {@code -Dio.netty.leakDetection.level=paranoid}, so every buffer is tracked.
 *
 * <p>Netty reports a leak only when a later allocation polls its reference queue after the leaked buffer was
 * collected, so after each class this forces garbage collection and allocates, a few times over.
 */
public final class LeakDetectionExtension implements BeforeAllCallback, AfterAllCallback {
  private static final List<String> LEAKS = new CopyOnWriteArrayList<>();
  private static volatile boolean byteBufDetectorInstalled;

  static {
    ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new RecordingFactory());
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    // Touch ByteBuf so that its detector is created through our factory, then make sure it was.
    UnpooledByteBufAllocator.DEFAULT.buffer(1).release();
    if (!byteBufDetectorInstalled) {
      throw new IllegalStateException("the leak-recording detector was not installed before ByteBuf was loaded;"
          + " the leak check cannot work in this JVM");
    }
    if (ResourceLeakDetector.getLevel() != ResourceLeakDetector.Level.PARANOID) {
      throw new IllegalStateException("tests must run with -Dio.netty.leakDetection.level=paranoid, level is "
          + ResourceLeakDetector.getLevel());
    }
    LEAKS.clear();
  }

  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    for (int i = 0; i < 5; i++) {
      System.gc();
      System.runFinalization();
      // Allocations poll the detector's reference queue and report what was collected unreleased.
      for (int j = 0; j < 16; j++) {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(8);
        b.release();
        b = UnpooledByteBufAllocator.DEFAULT.heapBuffer(8);
        b.release();
      }
    }
    if (!LEAKS.isEmpty()) {
      List<String> copy = new ArrayList<>(LEAKS);
      LEAKS.clear();
      throw new AssertionError(copy.size() + " Netty leak report(s) in " + context.getDisplayName() + ":\n"
          + String.join("\n----\n", copy));
    }
  }

  /** Forgets the reports that the extension's own self-test provoked on purpose. */
  static void clearAfterSelfTest() {
    LEAKS.clear();
  }

  /** Leak reports recorded since the current class started (for tests of the extension itself). */
  public static List<String> leaks() {
    return List.copyOf(LEAKS);
  }

  private static final class RecordingFactory extends ResourceLeakDetectorFactory {
    @Override
    @SuppressWarnings("deprecation")
    public <T> ResourceLeakDetector<T> newResourceLeakDetector(
        Class<T> resource, int samplingInterval, long maxActive) {
      if (ByteBuf.class.isAssignableFrom(resource)) {
        byteBufDetectorInstalled = true;
      }
      return new RecordingDetector<>(resource, samplingInterval);
    }
  }

  private static final class RecordingDetector<T> extends ResourceLeakDetector<T> {
    RecordingDetector(Class<T> resource, int samplingInterval) {
      super(resource, samplingInterval);
    }

    @Override
    protected void reportTracedLeak(String resourceType, String records) {
      LEAKS.add("LEAK of " + resourceType + ":" + records);
      super.reportTracedLeak(resourceType, records);
    }

    @Override
    protected void reportUntracedLeak(String resourceType) {
      LEAKS.add("LEAK of " + resourceType + " (untraced)");
      super.reportUntracedLeak(resourceType);
    }
  }
}
