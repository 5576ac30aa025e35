package io.petrel.rpc.benchmarks;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import javax.imageio.ImageIO;

/** PNG charts of report rows, drawn with plain Java2D: throughput against load, and latency percentiles. */
final class Charts {
  private static final int W = 960;
  private static final int H = 540;
  private static final int LEFT = 90;
  private static final int RIGHT = 250;
  private static final int TOP = 50;
  private static final int BOTTOM = 60;
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

  private static BufferedImage throughput(Payload payload, List<ResultRow> rows, TreeSet<Integer> loads) {
    BufferedImage img = canvas();
    Graphics2D g = img.createGraphics();
    setup(g);
    double max = 0;
    for (ResultRow r : rows) {
      max = Math.max(max, Double.isNaN(r.tps()) ? 0 : r.tps());
    }
    double yMax = niceCeiling(max);
    title(g, "Throughput, " + payload.label() + " (blocking callers, calls/s)");
    int pw = W - LEFT - RIGHT;
    int ph = H - TOP - BOTTOM;
    axes(g);
    for (int i = 0; i <= 5; i++) {
      double v = yMax * i / 5;
      int y = TOP + ph - (int) (ph * v / yMax);
      gridLine(g, y, String.format(Locale.ROOT, "%,.0f", v));
    }
    List<Integer> xs = new ArrayList<>(loads);
    for (int i = 0; i < xs.size(); i++) {
      int x = LEFT + (xs.size() == 1 ? pw / 2 : pw * i / (xs.size() - 1));
      centered(g, xs.get(i) + "", x, TOP + ph + 20);
    }
    centered(g, "concurrent callers", LEFT + pw / 2, TOP + ph + 45);
    Map<Framework, List<int[]>> points = new EnumMap<>(Framework.class);
    for (ResultRow r : rows) {
      if (Double.isNaN(r.tps())) {
        continue;
      }
      int i = xs.indexOf(r.load());
      int x = LEFT + (xs.size() == 1 ? pw / 2 : pw * i / (xs.size() - 1));
      int y = TOP + ph - (int) (ph * r.tps() / yMax);
      points.computeIfAbsent(r.framework(), k -> new ArrayList<>()).add(new int[] {x, y});
    }
    g.setStroke(new BasicStroke(2.5f));
    points.forEach((f, pts) -> {
      g.setColor(COLORS.get(f));
      pts.sort((a, b) -> Integer.compare(a[0], b[0]));
      for (int i = 0; i < pts.size(); i++) {
        int[] p = pts.get(i);
        g.fillOval(p[0] - 4, p[1] - 4, 9, 9);
        if (i > 0) {
          int[] q = pts.get(i - 1);
          g.drawLine(q[0], q[1], p[0], p[1]);
        }
      }
    });
    legend(g, new ArrayList<>(points.keySet()));
    g.dispose();
    return img;
  }

  private static BufferedImage latency(String what, List<ResultRow> rows) {
    BufferedImage img = canvas();
    Graphics2D g = img.createGraphics();
    setup(g);
    title(g, "Round-trip latency, " + what + " (ms, log scale)");
    String[] names = {"p50", "p90", "p99", "p99.9"};
    double lo = Double.MAX_VALUE;
    double hi = 0;
    for (ResultRow r : rows) {
      for (double v : values(r)) {
        if (!Double.isNaN(v) && v > 0) {
          lo = Math.min(lo, v);
          hi = Math.max(hi, v);
        }
      }
    }
    if (hi == 0) {
      lo = 1;
      hi = 10;
    }
    double logLo = Math.floor(Math.log10(lo / 1000.0));
    double logHi = Math.ceil(Math.log10(hi / 1000.0));
    if (logHi <= logLo) {
      logHi = logLo + 1;
    }
    int pw = W - LEFT - RIGHT;
    int ph = H - TOP - BOTTOM;
    axes(g);
    for (double e = logLo; e <= logHi; e++) {
      int y = TOP + ph - (int) (ph * (e - logLo) / (logHi - logLo));
      double ms = Math.pow(10, e);
      gridLine(g, y, ms >= 1 ? String.format(Locale.ROOT, "%.0f", ms) : String.format(Locale.ROOT, "%s", ms));
    }
    int groups = names.length;
    int groupW = pw / groups;
    int barW = Math.max(6, (groupW - 30) / Math.max(1, rows.size()));
    for (int gi = 0; gi < groups; gi++) {
      int gx = LEFT + gi * groupW + 15;
      centered(g, names[gi], LEFT + gi * groupW + groupW / 2, TOP + ph + 20);
      for (int ri = 0; ri < rows.size(); ri++) {
        double v = values(rows.get(ri))[gi];
        if (Double.isNaN(v) || v <= 0) {
          continue;
        }
        double logV = Math.log10(v / 1000.0);
        int h = (int) Math.max(1, ph * (logV - logLo) / (logHi - logLo));
        g.setColor(COLORS.get(rows.get(ri).framework()));
        g.fillRect(gx + ri * barW, TOP + ph - h, barW - 2, h);
      }
    }
    List<Framework> fs = new ArrayList<>();
    rows.forEach(r -> fs.add(r.framework()));
    legend(g, fs);
    g.dispose();
    return img;
  }

  private static double[] values(ResultRow r) {
    return new double[] {r.p50(), r.p90(), r.p99(), r.p999()};
  }

  private static BufferedImage canvas() {
    BufferedImage img = new BufferedImage(W, H, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = img.createGraphics();
    g.setColor(Color.WHITE);
    g.fillRect(0, 0, W, H);
    g.dispose();
    return img;
  }

  private static void setup(Graphics2D g) {
    g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
    g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
  }

  private static void title(Graphics2D g, String text) {
    Font f = g.getFont();
    g.setFont(f.deriveFont(Font.BOLD, 16f));
    g.setColor(Color.BLACK);
    g.drawString(text, LEFT, 30);
    g.setFont(f);
  }

  private static void axes(Graphics2D g) {
    g.setColor(Color.BLACK);
    g.setStroke(new BasicStroke(1.2f));
    g.drawLine(LEFT, TOP, LEFT, H - BOTTOM);
    g.drawLine(LEFT, H - BOTTOM, W - RIGHT, H - BOTTOM);
  }

  private static void gridLine(Graphics2D g, int y, String label) {
    g.setColor(new Color(0xe0e0e0));
    g.setStroke(new BasicStroke(1f));
    g.drawLine(LEFT + 1, y, W - RIGHT, y);
    g.setColor(Color.DARK_GRAY);
    FontMetrics fm = g.getFontMetrics();
    g.drawString(label, LEFT - 8 - fm.stringWidth(label), y + 5);
  }

  private static void centered(Graphics2D g, String s, int x, int y) {
    g.setColor(Color.DARK_GRAY);
    g.drawString(s, x - g.getFontMetrics().stringWidth(s) / 2, y);
  }

  private static void legend(Graphics2D g, List<Framework> frameworks) {
    int x = W - RIGHT + 20;
    int y = TOP + 10;
    for (Framework f : frameworks) {
      g.setColor(COLORS.get(f));
      g.fillRect(x, y - 10, 14, 14);
      g.setColor(Color.BLACK);
      g.drawString(f.label(), x + 22, y + 2);
      y += 24;
    }
  }

  private static double niceCeiling(double v) {
    if (v <= 0) {
      return 1;
    }
    double mag = Math.pow(10, Math.floor(Math.log10(v)));
    for (double m : new double[] {1, 2, 2.5, 5, 10}) {
      if (m * mag >= v) {
        return m * mag;
      }
    }
    return 10 * mag;
  }

  private static Path save(BufferedImage img, Path file) throws IOException {
    ImageIO.write(img, "png", file.toFile());
    return file;
  }
}
