package io.petrel.rpc.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** A Markdown table built row by row, with the number formats the seed reports use. */
final class Table {
  private final List<String> header;
  private final List<List<String>> rows = new ArrayList<>();

  Table(String... header) {
    this.header = List.of(header);
  }

  Table row(Object... cells) {
    if (cells.length != header.size()) {
      throw new IllegalArgumentException(cells.length + " cells for " + header.size() + " columns");
    }
    List<String> r = new ArrayList<>();
    for (Object c : cells) {
      r.add(String.valueOf(c));
    }
    rows.add(r);
    return this;
  }

  List<String> header() {
    return header;
  }

  int size() {
    return rows.size();
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder();
    sb.append("| ").append(String.join(" | ", header)).append(" |\n|");
    header.forEach(h -> sb.append("---|"));
    sb.append('\n');
    for (List<String> r : rows) {
      sb.append("| ").append(String.join(" | ", r)).append(" |\n");
    }
    return sb.toString();
  }

  /** {@code v} with {@code decimals} decimals and thousands separators; "-" for NaN. */
  static String num(double v, int decimals) {
    if (Double.isNaN(v) || Double.isInfinite(v)) {
      return "-";
    }
    return String.format(Locale.ROOT, "%,." + decimals + "f", v);
  }

  static String count(long v) {
    return String.format(Locale.ROOT, "%,d", v);
  }
}
