package io.petrel.rpc.transport.netty;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.LoggerFactory;

/** Collects the log lines of one logger while open, and waits for a given line (no polling with sleeps). */
final class LogCapture extends AppenderBase<ILoggingEvent> implements AutoCloseable {
  private final Logger logger;
  private final BlockingQueue<ILoggingEvent> events = new LinkedBlockingQueue<>();
  private final List<String> seen = new ArrayList<>();

  LogCapture(Class<?> loggerOf) {
    this(loggerOf.getName());
  }

  /** The logger of that name (for a class this package cannot see). */
  LogCapture(String loggerName) {
    this.logger = (Logger) LoggerFactory.getLogger(loggerName);
    setContext(logger.getLoggerContext());
    start();
    logger.addAppender(this);
  }

  @Override
  protected void append(ILoggingEvent e) {
    events.add(e);
  }

  /** Waits up to {@code timeout} for a line at {@code level} containing every one of {@code parts}. */
  String await(Level level, Duration timeout, String... parts) throws InterruptedException {
    return awaitEvent(level, timeout, parts).getFormattedMessage();
  }

  /** As {@link #await}, returning the whole event (its MDC, its throwable). */
  ILoggingEvent awaitEvent(Level level, Duration timeout, String... parts) throws InterruptedException {
    long until = System.nanoTime() + timeout.toNanos();
    for (;;) {
      ILoggingEvent e = events.poll(Math.max(0, until - System.nanoTime()), TimeUnit.NANOSECONDS);
      if (e == null) {
        throw new AssertionError("no " + level + " line containing " + List.of(parts) + " within " + timeout
            + "; lines seen: " + seen);
      }
      String line = e.getFormattedMessage();
      seen.add(e.getLevel() + " " + line);
      if (e.getLevel() == level && containsAll(line, parts)) {
        return e;
      }
    }
  }

  /** The lines logged so far at {@code level} containing {@code part}, without waiting. */
  List<String> lines(Level level, String part) {
    List<String> out = new ArrayList<>();
    for (String s : seen) {
      if (s.startsWith(level + " ") && s.contains(part)) {
        out.add(s);
      }
    }
    for (ILoggingEvent e : events) {
      if (e.getLevel() == level && e.getFormattedMessage().contains(part)) {
        out.add(level + " " + e.getFormattedMessage());
      }
    }
    return out;
  }

  private static boolean containsAll(String line, String... parts) {
    for (String p : parts) {
      if (!line.contains(p)) {
        return false;
      }
    }
    return true;
  }

  @Override
  public void close() {
    logger.detachAppender(this);
    stop();
  }
}
