package io.petrel.rpc.benchmarks;

import java.awt.Color;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.ToDoubleFunction;
import org.jspecify.annotations.Nullable;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.internal.chartpart.Chart;
import org.knowm.xchart.style.AxesChartStyler;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * PNG charts of report rows, drawn with XChart: throughput against the number of callers (a line per
 * framework), and latency percentiles (log scale). Headless: no display is needed.
 */
final class Charts {
  private static final int W = 960;
  private static final int H = 540;
  private static final Map<Framework, Color> COLORS = new EnumMap<>(Map.of(
      Framework.PETREL, new Color(0x1f77b4),
      Framework.PETREL_DIRECT, new Color(0x17becf),
      Framework.GRPC, new Color(0xd62728),
      Framework.GRPC_DIRECT, new Color(0xff9896),
      Framework.NETTY, new Color(0x555555),
      Framework.PETREL_TLS, new Color(0x2ca02c),
      Framework.GRPC_TLS, new Color(0x9467bd)));

  private Charts() {}

  /**
   * Writes the charts of {@code rows} into {@code dir}; returns their paths. Rows that differ in connections, I/O
   * or Java version get charts of their own (the file name says which, e.g. {@code tps-message-c8-nio.png}), and
   * the scale tables' payload, connection and window sweeps a line chart each ({@link #scale}).
   */
  static List<Path> write(List<ResultRow> rows, Path dir) throws IOException {
    System.setProperty("java.awt.headless", "true");
    List<Path> written = new ArrayList<>();
    boolean manyJdks = rows.stream().map(ResultRow::jdk).distinct().count() > 1;
    Map<String, List<ResultRow>> sync = new LinkedHashMap<>();
    Map<String, List<ResultRow>> async = new LinkedHashMap<>();
    for (ResultRow r : rows) {
      String variant = variantSlug(r, manyJdks);
      if (r.async()) {
        async.computeIfAbsent(r.payload().name() + "|" + r.load() + "|" + r.rate() + "|" + variant,
            k -> new ArrayList<>()).add(r);
      } else if (r.rate() == 0) {
        sync.computeIfAbsent(r.payload().name() + "|" + variant, k -> new ArrayList<>()).add(r);
      }
    }
    for (List<ResultRow> list : sync.values()) {
      ResultRow first = list.get(0);
      String variant = variantSlug(first, manyJdks);
      String slug = first.payload().name().toLowerCase(Locale.ROOT) + variant;
      String what = first.payload().label() + variantTitle(first, manyJdks);
      TreeSet<Integer> loads = new TreeSet<>();
      list.forEach(r -> loads.add(r.load()));
      if (loads.size() > 1) {
        written.add(save(throughput(what, list, loads), dir.resolve("tps-" + slug + ".png")));
      }
      int top = loads.last();
      List<ResultRow> atTop = list.stream().filter(r -> r.load() == top).toList();
      written.add(save(latency(what + ", " + top + " blocking callers", atTop),
          dir.resolve("latency-" + first.payload().name().toLowerCase(Locale.ROOT) + "-" + top + variant + ".png")));
    }
    for (List<ResultRow> list : async.values()) {
      ResultRow first = list.get(0);
      String slug = first.payload().name().toLowerCase(Locale.ROOT) + "-window" + first.load()
          + (first.rate() > 0 ? "-rate" + first.rate() : "") + variantSlug(first, manyJdks);
      written.add(save(latency(first.payload().label() + ", pipelined, " + first.loadLabel()
              + variantTitle(first, manyJdks), list), dir.resolve("latency-async-" + slug + ".png")));
    }
    for (ScaleTables.Group g : ScaleTables.groups(rows)) {
      Path chart = scale(g, dir);
      if (chart != null) {
        written.add(chart);
      }
    }
    return written;
  }

  /** "-c8-nio-java25.0.1": what sets a row's charts apart from the default run's (1 connection, auto I/O). */
  static String variantSlug(ResultRow r, boolean withJdk) {
    String s = (r.connections() == 1 ? "" : "-c" + r.connections())
        + (r.io().equals("auto") ? "" : "-" + r.io())
        + (withJdk && !r.jdk().isEmpty() ? "-java" + r.jdk() : "");
    return s.replaceAll("[^A-Za-z0-9._-]+", "_");
  }

  private static String variantTitle(ResultRow r, boolean withJdk) {
    return (r.connections() == 1 ? "" : ", " + r.connections() + " connections")
        + (r.io().equals("auto") ? "" : ", I/O " + r.io())
        + (withJdk && !r.jdk().isEmpty() ? ", Java " + r.jdk() : "");
  }

  /**
   * The line chart of a scale table, or null where a table says it all (I/O, Java) or another chart draws it
   * (blocking callers: {@code tps-<payload>.png}): MB/s against the opaque body's size (both axes log scale),
   * calls/s against the connections or the window.
   */
  static @Nullable Path scale(ScaleTables.Group g, Path dir) throws IOException {
    ResultRow first = g.first();
    String what = g.dimension().describeGroup(first);
    XYChart c;
    ToDoubleFunction<ResultRow> x;
    ToDoubleFunction<ResultRow> y;
    switch (g.dimension()) {
      case PAYLOAD -> {
        c = new XYChartBuilder().width(W).height(H).title("Payload throughput by body size, " + what)
            .xAxisTitle("opaque body, bytes (log scale)").yAxisTitle("MB/s both ways (log scale)").build();
        c.getStyler().setXAxisLogarithmic(true);
        c.getStyler().setYAxisLogarithmic(true);
        x = r -> r.payload().size();
        y = ResultRow::megabytesPerSecond;
      }
      case CONNECTIONS -> {
        c = new XYChartBuilder().width(W).height(H).title("Throughput by connections, " + what)
            .xAxisTitle("connections (log scale)").yAxisTitle("calls/s").build();
        c.getStyler().setXAxisLogarithmic(true);
        c.getStyler().setYAxisMin(0.0);
        x = ResultRow::connections;
        y = ResultRow::tps;
      }
      case LOAD -> {
        if (!first.async()) {
          return null;
        }
        c = new XYChartBuilder().width(W).height(H).title("Throughput by calls in flight, " + what)
            .xAxisTitle("window, calls in flight (log scale)").yAxisTitle("calls/s").build();
        c.getStyler().setXAxisLogarithmic(true);
        c.getStyler().setYAxisMin(0.0);
        x = ResultRow::load;
        y = ResultRow::tps;
      }
      default -> {
        return null;
      }
    }
    style(c.getStyler());
    c.getStyler().setYAxisDecimalPattern("#,###.#");
    Map<Framework, List<double[]>> points = new EnumMap<>(Framework.class);
    List<ResultRow> sorted = new ArrayList<>(g.rows());
    sorted.sort(g.dimension().order());
    for (ResultRow r : sorted) {
      double xv = x.applyAsDouble(r);
      double yv = y.applyAsDouble(r);
      if (xv > 0 && yv > 0 && !Double.isNaN(yv)) { // log axes: no 0 (empty body), no BenchmarkMessage (size -1)
        points.computeIfAbsent(r.framework(), k -> new ArrayList<>()).add(new double[] {xv, yv});
      }
    }
    points.values().removeIf(list -> list.size() < 2);
    if (points.isEmpty()) {
      return null;
    }
    points.forEach((f, list) -> {
      XYSeries s = c.addSeries(f.label(), list.stream().mapToDouble(p -> p[0]).toArray(),
          list.stream().mapToDouble(p -> p[1]).toArray());
      s.setMarker(SeriesMarkers.CIRCLE);
      s.setLineColor(COLORS.get(f));
      s.setMarkerColor(COLORS.get(f));
    });
    return save(c, dir.resolve((g.dimension() == ScaleTables.Dimension.PAYLOAD ? "mbps-" : "tps-") + g.slug() + ".png"));
  }

  private static XYChart throughput(String what, List<ResultRow> rows, TreeSet<Integer> loads) {
    XYChart c = new XYChartBuilder().width(W).height(H)
        .title("Throughput, " + what + " (blocking callers)")
        .xAxisTitle("concurrent callers").yAxisTitle("calls/s").build();
    style(c.getStyler());
    c.getStyler().setXAxisLogarithmic(loads.first() > 0 && loads.last() / loads.first() >= 16);
    c.getStyler().setYAxisMin(0.0);
    c.getStyler().setYAxisDecimalPattern("#,###");
    Map<Framework, List<ResultRow>> byFramework = new EnumMap<>(Framework.class);
    for (ResultRow r : rows) {
      if (!Double.isNaN(r.tps())) {
        byFramework.computeIfAbsent(r.framework(), k -> new ArrayList<>()).add(r);
      }
    }
    byFramework.forEach((f, list) -> {
      list.sort((a, b) -> Integer.compare(a.load(), b.load()));
      double[] x = list.stream().mapToDouble(ResultRow::load).toArray();
      double[] y = list.stream().mapToDouble(ResultRow::tps).toArray();
      XYSeries s = c.addSeries(f.label(), x, y);
      s.setMarker(SeriesMarkers.CIRCLE);
      s.setLineColor(COLORS.get(f));
      s.setMarkerColor(COLORS.get(f));
    });
    return c;
  }

  /** The percentiles against log-scaled milliseconds, a line per framework (XChart's bars cannot go on a log axis). */
  private static XYChart latency(String what, List<ResultRow> rows) {
    XYChart c = new XYChartBuilder().width(W).height(H)
        .title("Round-trip latency, " + what).xAxisTitle("percentile").yAxisTitle("ms (log scale)").build();
    style(c.getStyler());
    c.getStyler().setYAxisLogarithmic(true);
    String[] names = {"p50", "p90", "p99", "p99.9"};
    c.getStyler().setxAxisTickLabelsFormattingFunction(v -> {
      long i = Math.round(v);
      return Math.abs(v - i) < 1e-6 && i >= 1 && i <= names.length ? names[(int) i - 1] : "";
    });
    for (ResultRow r : rows) {
      List<Double> x = new ArrayList<>();
      List<Double> ms = new ArrayList<>();
      double[] micros = {r.p50(), r.p90(), r.p99(), r.p999()};
      for (int i = 0; i < micros.length; i++) {
        if (!Double.isNaN(micros[i]) && micros[i] > 0) { // a log axis cannot show 0 or a missing value
          x.add(i + 1.0);
          ms.add(micros[i] / 1000.0);
        }
      }
      if (x.isEmpty()) {
        continue;
      }
      XYSeries s = c.addSeries(r.framework().label(), x, ms);
      s.setMarker(SeriesMarkers.CIRCLE);
      s.setLineColor(COLORS.get(r.framework()));
      s.setMarkerColor(COLORS.get(r.framework()));
    }
    return c;
  }

  private static void style(AxesChartStyler s) {
    s.setLegendPosition(Styler.LegendPosition.OutsideE);
    s.setChartBackgroundColor(Color.WHITE);
    s.setPlotBackgroundColor(Color.WHITE);
    s.setPlotGridLinesColor(new Color(0xe0e0e0));
  }

  private static Path save(Chart<?, ?> chart, Path file) throws IOException {
    try (OutputStream out = Files.newOutputStream(file)) {
      BitmapEncoder.saveBitmap(chart, out, BitmapEncoder.BitmapFormat.PNG);
    }
    return file;
  }
}
