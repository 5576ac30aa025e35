package io.petrel.rpc.benchmarks;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;
import org.jspecify.annotations.Nullable;

/**
 * "How cost grows with the work": for each thing a run varied (the payload, the callers or the window, the
 * connections, the I/O, the Java version) while everything else stayed the same, a table with one line per
 * value and one column per framework, giving the calls per second (and for the payload the payload's megabytes
 * per second). Found in the rows themselves: a run that varied nothing gives none. A cell whose calls failed
 * or were refused says how many, beside its figure.
 */
final class ScaleTables {
  private ScaleTables() {}

  /** What a scale table varies; a group is the rows that are the same in everything else. */
  enum Dimension {
    PAYLOAD("payload"),
    LOAD("callers"),
    CONNECTIONS("connections"),
    IO("I/O"),
    JAVA("Java");

    private final String title;

    Dimension(String title) {
      this.title = title;
    }

    /** The column heading of the varied value ("window" for pipelined calls). */
    String heading(ResultRow r) {
      return this == LOAD && r.async() ? "window" : title;
    }

    /** The varied value, as the table shows it. */
    String value(ResultRow r) {
      return switch (this) {
        case PAYLOAD -> r.payload().label();
        case LOAD -> Integer.toString(r.load());
        case CONNECTIONS -> Integer.toString(r.connections());
        case IO -> r.io();
        case JAVA -> r.jdk().isEmpty() ? "?" : r.jdk();
      };
    }

    /** The order of the lines: by size, count or version. */
    Comparator<ResultRow> order() {
      return switch (this) {
        case PAYLOAD -> Comparator.comparing(ResultRow::payload);
        case LOAD -> Comparator.comparingInt(ResultRow::load);
        case CONNECTIONS -> Comparator.comparingInt(ResultRow::connections);
        case IO -> Comparator.comparing(ResultRow::io);
        case JAVA -> Comparator.comparing(Report::javaOrder);
      };
    }

    /** What the rows of one table share: everything but this dimension and the framework. */
    String groupKey(ResultRow r) {
      return r.benchmark() + '|' + r.rate()
          + '|' + (this == PAYLOAD ? "" : r.payload().name())
          + '|' + (this == LOAD ? "" : Integer.toString(r.load()))
          + '|' + (this == CONNECTIONS ? "" : Integer.toString(r.connections()))
          + '|' + (this == IO ? "" : r.io())
          + '|' + (this == JAVA ? "" : r.jdk());
    }

    /** "Blocking callers, BenchmarkMessage, 16 callers, 1 connection, I/O auto, Java 17.0.15", without this one. */
    String describeGroup(ResultRow r) {
      List<String> parts = new ArrayList<>();
      parts.add(r.async() ? "pipelined async calls" : "blocking callers");
      if (this != PAYLOAD) {
        parts.add(r.payload().label());
      }
      if (this != LOAD) {
        parts.add(r.loadLabel());
      } else if (r.rate() > 0) {
        parts.add("@ " + r.rate() + "/s");
      }
      if (this != CONNECTIONS) {
        parts.add(r.connections() + (r.connections() == 1 ? " connection" : " connections"));
      }
      if (this != IO) {
        parts.add("I/O " + r.io());
      }
      if (this != JAVA && !r.jdk().isEmpty()) {
        parts.add("Java " + r.jdk());
      }
      return String.join(", ", parts);
    }
  }

  /**
   * One scale table's rows: those of a group that vary in {@code dimension}. {@code manyJdks}: the report's rows
   * come from more than one Java version (so that the version goes into the group's file names).
   */
  record Group(Dimension dimension, List<ResultRow> rows, boolean manyJdks) {
    ResultRow first() {
      return rows.get(0);
    }

    /** The values of the dimension, in order, each with the frameworks' rows. */
    Map<String, Map<Framework, ResultRow>> lines() {
      List<ResultRow> sorted = new ArrayList<>(rows);
      sorted.sort(dimension.order().thenComparing(ResultRow::framework));
      Map<String, Map<Framework, ResultRow>> lines = new LinkedHashMap<>();
      for (ResultRow r : sorted) {
        lines.computeIfAbsent(dimension.value(r), k -> new TreeMap<>()).put(r.framework(), r);
      }
      return lines;
    }

    Set<Framework> frameworks() {
      Set<Framework> s = EnumSet.noneOf(Framework.class);
      rows.forEach(r -> s.add(r.framework()));
      return s;
    }

    /** A file-name-safe name of this group: "payload-sync-16" etc. */
    String slug() {
      ResultRow r = first();
      String s = dimension.name().toLowerCase(java.util.Locale.ROOT) + '-' + (r.async() ? "async" : "sync")
          + (dimension == Dimension.PAYLOAD ? "" : '-' + r.payload().name().toLowerCase(java.util.Locale.ROOT))
          + (dimension == Dimension.LOAD ? "" : "-" + r.load())
          + (r.rate() > 0 ? "-rate" + r.rate() : "")
          + (dimension == Dimension.CONNECTIONS || r.connections() == 1 ? "" : "-c" + r.connections())
          + (dimension == Dimension.IO || r.io().equals("auto") ? "" : "-" + r.io())
          + (dimension == Dimension.JAVA || !manyJdks || r.jdk().isEmpty() ? "" : "-java" + r.jdk());
      return s.replaceAll("[^A-Za-z0-9._-]+", "_");
    }
  }

  /** Every group of {@code rows} that varies in one dimension and is the same in the others. */
  static List<Group> groups(List<ResultRow> rows) {
    List<Group> groups = new ArrayList<>();
    boolean manyJdks = rows.stream().map(ResultRow::jdk).distinct().count() > 1;
    for (Dimension d : Dimension.values()) {
      Map<String, List<ResultRow>> byKey = new LinkedHashMap<>();
      for (ResultRow r : rows) {
        byKey.computeIfAbsent(d.groupKey(r), k -> new ArrayList<>()).add(r);
      }
      for (List<ResultRow> list : byKey.values()) {
        if (list.stream().map(d::value).distinct().count() > 1) {
          groups.add(new Group(d, list, manyJdks));
        }
      }
    }
    return groups;
  }

  /** The scale tables of {@code rows}, under one heading; empty when the rows vary in nothing. */
  static String markdown(List<ResultRow> rows) {
    List<Group> groups = groups(rows);
    if (groups.isEmpty()) {
      return "";
    }
    StringBuilder sb = new StringBuilder("### How cost grows with the work\n\n");
    sb.append("Calls per second (the median over the runs) of each framework as one thing changes and the rest stays"
        + " the same. A figure followed by failed or refused calls (in brackets, summed over the runs' measured"
        + " iterations) counts them among its calls: it is not a like-for-like figure; a cell without brackets had"
        + " none. MB/s is the payload both ways (request and reply bodies, no headers) per second, in 10^6 bytes.\n\n");
    for (Group g : groups) {
      sb.append("#### By ").append(g.dimension().heading(g.first())).append(": ")
          .append(g.dimension().describeGroup(g.first())).append("\n\n");
      sb.append("Calls/s:\n\n").append(table(g, ResultRow::tps, Report::tps)).append('\n');
      if (g.dimension() == Dimension.PAYLOAD) {
        sb.append("MB/s (payload bytes both ways per second):\n\n")
            .append(table(g, ResultRow::megabytesPerSecond, Report::megabytes)).append('\n');
      }
    }
    return sb.toString();
  }

  /** One table: a line per value of the group's dimension, a column per framework. */
  static Table table(Group g, ToDoubleFunction<ResultRow> figure, Function<Double, String> format) {
    Set<Framework> frameworks = g.frameworks();
    List<String> header = new ArrayList<>();
    header.add(g.dimension().heading(g.first()));
    frameworks.forEach(f -> header.add(f.label()));
    Table t = new Table(header.toArray(new String[0]));
    g.lines().forEach((value, byFramework) -> {
      List<Object> cells = new ArrayList<>();
      cells.add(value);
      for (Framework f : frameworks) {
        cells.add(cell(byFramework.get(f), figure, format));
      }
      t.row(cells.toArray());
    });
    return t;
  }

  /** "12,345", or "12,345 (3 failed, 1,024 refused)"; "-" where the framework was not measured. */
  static String cell(@Nullable ResultRow r, ToDoubleFunction<ResultRow> figure, Function<Double, String> format) {
    if (r == null) {
      return "-";
    }
    String s = format.apply(figure.applyAsDouble(r));
    if (r.unsuccessful() > 0) {
      s += " (" + Table.count(r.failed()) + " failed, " + Table.count(r.refused()) + " refused)";
    }
    return s;
  }
}
