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

  /** Writes the charts of {@code rows} into {@code dir}; returns their paths. */
  static List<Path> write(List<ResultRow> rows, Path dir) throws IOException {
    System.setProperty("java.awt.headless", "true");
    List<Path> written = new ArrayList<>();
    Map<Payload, List<ResultRow>> sync = new LinkedHashMap<>();
    Map<String, List<ResultRow>> async = new LinkedHashMap<>();
    for (ResultRow r : rows) {
      if (r.async()) {
        async.computeIfAbsent(r.payload().name() + "|" + r.load() + "|" + r.rate(), k -> new ArrayList<>()).add(r);
      } else if (r.rate() == 0) {
        sync.computeIfAbsent(r.payload(), k -> new ArrayList<>()).add(r);
      }
    }
    for (Map.Entry<Payload, List<ResultRow>> e : sync.entrySet()) {
      String slug = e.getKey().name().toLowerCase(Locale.ROOT);
      TreeSet<Integer> loads = new TreeSet<>();
      e.getValue().forEach(r -> loads.add(r.load()));
      if (loads.size() > 1) {
        written.add(save(throughput(e.getKey(), e.getValue(), loads), dir.resolve("tps-" + slug + ".png")));
      }
      int top = loads.last();
      List<ResultRow> atTop = e.getValue().stream().filter(r -> r.load() == top).toList();
      written.add(save(latency(e.getKey().label() + ", " + top + " blocking callers", atTop),
          dir.resolve("latency-" + slug + "-" + top + ".png")));
    }
    for (List<ResultRow> list : async.values()) {
      ResultRow first = list.get(0);
      String slug = first.payload().name().toLowerCase(Locale.ROOT) + "-window" + first.load()
          + (first.rate() > 0 ? "-rate" + first.rate() : "");
      written.add(save(latency(first.payload().label() + ", pipelined, " + first.loadLabel(), list),
          dir.resolve("latency-async-" + slug + ".png")));
    }
    return written;
  }

  private static XYChart throughput(Payload payload, List<ResultRow> rows, TreeSet<Integer> loads) {
    XYChart c = new XYChartBuilder().width(W).height(H)
        .title("Throughput, " + payload.label() + " (blocking callers)")
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
