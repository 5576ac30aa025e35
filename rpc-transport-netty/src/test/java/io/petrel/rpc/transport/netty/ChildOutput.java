package io.petrel.rpc.transport.netty;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/** The output of a child JVM started by a test, line by line, read on a daemon thread; tests wait on its lines. */
final class ChildOutput {
  private final List<String> lines = new ArrayList<>();
  private boolean ended;

  ChildOutput(InputStream stream) {
    Thread t = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
        String line;
        while ((line = r.readLine()) != null) {
          add(line);
        }
      } catch (IOException e) {
        add("(reading the child's output failed: " + e + ")");
      } finally {
        end();
      }
    }, "child-output");
    t.setDaemon(true);
    t.start();
  }

  private synchronized void add(String line) {
    lines.add(line);
    notifyAll();
  }

  private synchronized void end() {
    ended = true;
    notifyAll();
  }

  /** Every line so far. */
  synchronized List<String> lines() {
    return List.copyOf(lines);
  }

  synchronized String text() {
    return String.join("\n", lines);
  }

  /** The first line matching {@code p}, waiting up to {@code seconds} for it; fails with the output if none. */
  synchronized String await(Predicate<String> p, long seconds, String what) throws InterruptedException {
    return awaitAfter(0, p, seconds, what);
  }

  /** The first line after the first {@code skip} lines matching {@code p}, waiting up to {@code seconds}. */
  synchronized String awaitAfter(int skip, Predicate<String> p, long seconds, String what)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    int seen = skip;
    for (;;) {
      for (; seen < lines.size(); seen++) {
        if (p.test(lines.get(seen))) {
          return lines.get(seen);
        }
      }
      long left = deadline - System.nanoTime();
      if (ended || left <= 0) {
        throw new AssertionError("no " + what + " in the child's output" + (ended ? " (it ended)" : " within "
            + seconds + " s") + ":\n" + text());
      }
      TimeUnit.NANOSECONDS.timedWait(this, left);
    }
  }

  /** Waits up to {@code seconds} for the child's output to end. */
  synchronized void awaitEnd(long seconds) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (!ended && deadline - System.nanoTime() > 0) {
      TimeUnit.NANOSECONDS.timedWait(this, deadline - System.nanoTime());
    }
  }
}
